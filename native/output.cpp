// output.cpp — temp-file-and-rename output and the interrupt flag (see output.h).
#include "output.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "inputs.h"

namespace cli {

volatile std::sig_atomic_t g_interrupt_signal = 0;

namespace {
extern "C" void on_interrupt(int sig) { g_interrupt_signal = sig; }
}  // namespace

void install_interrupt_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocked write() returns EINTR and the loop sees the flag
    // Every signal whose default is to end the process, except those that cannot be caught (SIGKILL: the next run
    // removes what it leaves, see clean_stale_temporaries) and those of a bug (SIGSEGV, SIGABRT...). SIGPIPE and
    // SIGXFSZ make the write fail (EPIPE, EFBIG) and set the flag.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ, SIGXCPU, SIGALRM, SIGVTALRM, SIGPROF, SIGUSR1, SIGUSR2})
        sigaction(sig, &sa, nullptr);
}

namespace {

namespace fs = std::filesystem;

// Temporary files are named "." + FILE + ".moe-roofline-" + HOST + "-" + PID + "-XXXXXX": a run that was killed
// outright (SIGKILL, a power cut) leaves one behind, and the next run into the same directory on the same host
// removes those whose process is gone.
constexpr const char* kTempMarker = ".moe-roofline-";

std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "host";
    std::string h(buf);
    for (char& c : h)
        if (c == '/') c = '_';
    return h.substr(0, 32);
}

// This process's temporaries still being written. The Python module runs several sweeps at once in one process
// (threads), each into its own temporary: another's cleanup must not take a live one for a dead run's leftover.
std::mutex g_live_mutex;
std::set<std::string> g_live;
bool is_live(const std::string& path) {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    return g_live.count(path) != 0;
}
void set_live(const std::string& path, bool live) {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    if (live) g_live.insert(path);
    else g_live.erase(path);
}

void clean_stale_temporaries(const fs::path& dir) {
    std::error_code ec;
    const std::string host = "-" + host_name() + "-";
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const std::size_t marker = name.rfind(kTempMarker);
        // ".NAME.moe-roofline-HOST-PID-XXXXXX": the PID between the last two dashes, the host before it
        if (name.empty() || name[0] != '.' || marker == std::string::npos || name.size() < 7) continue;
        const std::size_t pid_end = name.size() - 7, pid_start = name.rfind('-', pid_end - 1);
        if (name[pid_end] != '-' || pid_start == std::string::npos || pid_start < marker) continue;
        const std::string who = name.substr(marker + std::strlen(kTempMarker) - 1, pid_start + 1 - (marker + std::strlen(kTempMarker) - 1));
        const std::string pid_text = name.substr(pid_start + 1, pid_end - pid_start - 1);
        if (who != host || pid_text.empty() || pid_text.size() > 9 ||
            pid_text.find_first_not_of("0123456789") != std::string::npos)
            continue;
        struct stat st {};
        if (lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) continue;
        const pid_t pid = pid_t(std::stol(pid_text));
        // ours: left by an earlier process of the same PID, unless one of this process's outputs is writing it
        if ((pid == getpid() && !is_live(it->path().string())) || (pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH))
            unlink(it->path().c_str());
    }
}

// Follows a chain of symbolic links to the path it ends at, even when that does not exist yet (a dangling link:
// its target is created, not the link replaced).
fs::path link_target(const std::string& path) {
    fs::path p(path);
    std::error_code ec;
    for (int hop = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hop) {
        if (hop == 40) throw UsageError("-o " + shown_path(path) + ": too many levels of symbolic links");
        const fs::path next = fs::read_symlink(p, ec);
        if (ec) throw UsageError("-o " + shown_path(path) + ": cannot read the link: " + ec.message());
        p = next.is_absolute() ? next : p.parent_path() / next;
    }
    return p.lexically_normal();
}

}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(path) {
    buffer_.reserve(kFlushBytes + (64u << 10));
    if (path == "-") {
        fd_ = STDOUT_FILENO;
        return;
    }
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::is_directory(st)) throw UsageError("-o " + shown_path(path) + ": is a directory");
    if (fs::exists(st) && !fs::is_regular_file(st)) {
        // /dev/null, /dev/stdout, a FIFO: write straight to it (renaming over a device would replace it).
        fd_ = open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd_ < 0) throw UsageError("-o " + shown_path(path) + ": cannot write: " + std::strerror(errno));
        direct_ = true;
        return;
    }
    // Through a symlink (or a chain of them, or one to a file not yet there), write the file it points to; the link
    // stays.
    const fs::path target = link_target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    clean_stale_temporaries(dir);
    std::string tmpl = (dir / ("." + target.filename().string().substr(0, 128) + kTempMarker + host_name() + "-" +
                               std::to_string(getpid()) + "-XXXXXX"))
                           .string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    fd_ = mkstemp(name.data());
    if (fd_ < 0) throw UsageError("-o " + shown_path(path) + ": cannot write: " + std::strerror(errno));
    temp_ = name.data();
    set_live(temp_, true);
    final_ = target.string();
    // mkstemp makes the file 0600; give the result the usual 0666 & ~umask.
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd_, 0666 & ~mask);
}

OutputFile::~OutputFile() {
    if (direct_ && fd_ >= 0) close(fd_);
    if (!temp_.empty() && !committed_) {
        if (fd_ >= 0) close(fd_);
        unlink(temp_.c_str());
    }
    if (!temp_.empty()) set_live(temp_, false);
}

void OutputFile::flush() {
    const char* p = buffer_.data();
    std::size_t left = buffer_.size();
    while (left > 0) {
        ssize_t n = write(fd_, p, left);
        if (n < 0) {
            if (errno == EINTR || interrupted()) {  // SIGPIPE and SIGXFSZ arrive with EPIPE and EFBIG
                if (interrupted()) throw Interrupted();
                continue;
            }
            throw UsageError("-o " + shown_path(path_) + ": write failed: " + std::strerror(errno));
        }
        p += n;
        left -= std::size_t(n);
    }
    buffer_.clear();
}

void OutputFile::commit() {
    flush();
    if (direct_) {
        const int fd = fd_;
        fd_ = -1;
        if (close(fd) != 0) throw UsageError("-o " + shown_path(path_) + ": write failed: " + std::strerror(errno));
        return;
    }
    if (temp_.empty()) return;
    int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0) throw UsageError("-o " + shown_path(path_) + ": write failed: " + std::strerror(errno));
    if (interrupted()) throw Interrupted();
    if (std::rename(temp_.c_str(), final_.c_str()) != 0)
        throw UsageError("-o " + shown_path(path_) + ": cannot rename the finished file into place: " + std::strerror(errno));
    committed_ = true;
}

}  // namespace cli
