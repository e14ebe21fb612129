// trace_file.cpp — `"workload": {"trace": "FILE"}` in a scenario file: the CLI reads the JSONL or CSV file (relative
// to the scenario), and the core turns its text into the inline list it parses (moe::trace_text_to_json,
// core/scenario/trace.cpp).
//
//   JSONL: one object a line: {"isl": 2048, "osl": 256, "prefix_id": "doc-7", "prefix_len": 1500}
//   CSV:   isl,osl,prefix_id,prefix_len (a header row naming them, in any order, or these four columns in order);
//          empty cells are absent values
// Blank lines and lines starting with '#' are skipped. Errors: "workload.trace: FILE line 3: ...".
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/scenario/scenario.h"
#include "inputs.h"
#include "values.h"

namespace cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A trace of 1,000,000 requests is about 40 MB of JSONL; refuse what cannot be one.
constexpr std::uintmax_t kMaxTraceBytes = 128u << 20;

}  // namespace

void inline_trace_file(json& scenario, const std::string& base_dir) {
    if (!scenario.is_object()) return;
    auto wl = scenario.find("workload");
    if (wl == scenario.end() || !wl->is_object()) return;
    auto tr = wl->find("trace");
    if (tr == wl->end() || !tr->is_string()) return;
    const std::string name = tr->get<std::string>();
    const std::string path = base_dir.empty() || fs::path(name).is_absolute() ? name : (fs::path(base_dir) / name).lexically_normal().string();
    const std::string where = "workload.trace: " + shown_path(path);
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw UsageError(where + ": is a directory, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError(where + ": cannot read: " + std::strerror(errno));
    const bool csv = name.size() >= 4 && name.compare(name.size() - 4, 4, ".csv") == 0;
    const std::uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > kMaxTraceBytes) throw UsageError(where + ": larger than 128 MiB");
    std::string text;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, std::size_t(in.gcount()));
        if (text.size() > kMaxTraceBytes) throw UsageError(where + ": larger than 128 MiB");
    }
    if (in.bad()) throw UsageError(where + ": read error");
    json list;
    std::string error;
    if (!moe::trace_text_to_json(text, csv, where, list, error)) throw UsageError(error);
    *tr = std::move(list);
}

}  // namespace cli
