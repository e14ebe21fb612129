// output.cpp — temp-file-and-rename output and the interrupt flag (see output.h).
#include "output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);
}

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
    // Through a symlink, replace the file it points to, not the link.
    const fs::path target = fs::is_symlink(fs::symlink_status(path, ec)) && fs::exists(st)
                                ? fs::canonical(path, ec)
                                : fs::path(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string tmpl = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    fd_ = mkstemp(name.data());
    if (fd_ < 0) throw UsageError("-o " + shown_path(path) + ": cannot write: " + std::strerror(errno));
    temp_ = name.data();
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
}

void OutputFile::flush() {
    const char* p = buffer_.data();
    std::size_t left = buffer_.size();
    while (left > 0) {
        ssize_t n = write(fd_, p, left);
        if (n < 0) {
            if (errno == EINTR) {
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
