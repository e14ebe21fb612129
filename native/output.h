// output.h — where a sweep's CSV goes: standard output, or a file written under a temporary name in the same
// directory and renamed over FILE only when everything was written. An error, an exception or a signal that ends the
// process (SIGINT, SIGTERM, SIGQUIT, SIGPIPE, ...: install_interrupt_handlers) never leaves a half file behind: the
// destructor removes the temporary file unless commit() succeeded; the temporaries of a run killed outright
// (SIGKILL) carry its host and PID, and the next run into the directory removes them. A symlink is followed to its
// target (even a dangling one); an existing non-regular FILE (/dev/null, a FIFO) is written in place.
//
//   cli::install_interrupt_handlers();
//   cli::OutputFile out("grid.csv");          // UsageError when the directory is not writable
//   out.buffer() += "a,b\n";  out.maybe_flush();
//   out.commit();                             // flush, close, rename .grid.csv.moe-roofline-HOST-PID-XXXXXX -> grid.csv
#pragma once
#include <csignal>
#include <stdexcept>
#include <string>

namespace cli {

// Set by a signal that would end the process (handlers installed by install_interrupt_handlers); long loops poll it.
extern volatile std::sig_atomic_t g_interrupt_signal;
void install_interrupt_handlers();
inline bool interrupted() { return g_interrupt_signal != 0; }

// Thrown when a signal asked us to stop; main() exits with 128 + signal.
struct Interrupted : std::runtime_error {
    Interrupted() : std::runtime_error("interrupted") {}
};

class OutputFile {
public:
    explicit OutputFile(const std::string& path);  // "-" = standard output
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    // Append text here; maybe_flush() writes it out once it passes the buffer size.
    std::string& buffer() { return buffer_; }
    void maybe_flush() {
        if (buffer_.size() >= kFlushBytes) flush();
    }
    void flush();
    void commit();
    bool is_stdout() const { return path_ == "-"; }
    const std::string& path() const { return path_; }

private:
    static constexpr std::size_t kFlushBytes = 1u << 20;
    std::string path_;
    std::string final_;    // what the temporary file is renamed to (path_, or a symlink's target)
    std::string temp_;     // empty for standard output and for direct writes
    bool direct_ = false;  // an existing non-regular file (/dev/null, a FIFO): written in place
    int fd_ = -1;
    bool committed_ = false;
    std::string buffer_;
};

}  // namespace cli
