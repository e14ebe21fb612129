// trace_file.cpp — `"workload": {"trace": "FILE"}` in a scenario file: the CLI reads the JSONL or CSV file (relative
// to the scenario) and puts its requests inline, the list the core parses (core/scenario/trace.cpp).
//
//   JSONL: one object a line: {"isl": 2048, "osl": 256, "prefix_id": "doc-7", "prefix_len": 1500}
//   CSV:   isl,osl,prefix_id,prefix_len (a header row naming them, in any order, or these four columns in order);
//          empty cells are absent values
// Blank lines and lines starting with '#' are skipped. Errors: "workload.trace: FILE line 3: ...".
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/base/json_text.h"
#include "core/scenario/scenario.h"
#include "inputs.h"
#include "values.h"

namespace cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A trace of 1,000,000 requests is about 40 MB of JSONL; refuse what cannot be one.
constexpr std::uintmax_t kMaxTraceBytes = 128u << 20;

std::string trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(s);
}

std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> cells;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = line.find(',', start);
        cells.push_back(trim(std::string_view(line).substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return cells;
}

// The core's checks of one request, its issue named by the file's line ("... line 3: isl: must be ...").
void check_entry(const json& o, const std::string& at) {
    moe::Issues errors;
    moe::TraceConfig one;
    if (moe::parse_trace(json::array({o}), one, errors)) return;
    std::string field = errors.front().path;
    const std::string entry = "workload.trace[0]";
    field = field.size() > entry.size() + 1 ? field.substr(entry.size() + 1) + ": " : "";
    throw UsageError(at + field + errors.front().message);
}

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
    json list = json::array();
    std::vector<std::string> columns = {"isl", "osl", "prefix_id", "prefix_len"};
    std::string line;
    std::uintmax_t bytes = 0;
    bool first = true;
    for (long long n = 1; std::getline(in, line); ++n) {
        bytes += line.size() + 1;
        if (bytes > kMaxTraceBytes) throw UsageError(where + ": larger than 128 MiB");
        const std::string text = trim(line);
        if (text.empty() || text[0] == '#') continue;
        const std::string at = where + " line " + std::to_string(n) + ": ";
        if (list.size() >= moe::kMaxTraceRequests)
            throw UsageError(at + "more than " + std::to_string(moe::kMaxTraceRequests) + " requests");
        if (!csv) {
            json o;
            moe::JsonTextError bad;
            if (!moe::parse_json_text(text, o, bad)) throw UsageError(at + "not valid JSON: " + bad.message);
            if (!o.is_object()) throw UsageError(at + "must be an object {isl, osl, prefix_id, prefix_len}");
            check_entry(o, at);
            list.push_back(std::move(o));
            continue;
        }
        std::vector<std::string> cells = split_csv(text);
        if (first && !cells.empty() && !cells[0].empty() && !(std::isdigit(static_cast<unsigned char>(cells[0][0])))) {
            // the header row: names the columns
            columns = cells;
            for (const std::string& c : columns)
                if (c != "isl" && c != "osl" && c != "prefix_id" && c != "prefix_len")
                    throw UsageError(at + "unknown column '" + shown(c) + "' (isl, osl, prefix_id, prefix_len)");
            first = false;
            continue;
        }
        first = false;
        if (cells.size() > columns.size())
            throw UsageError(at + std::to_string(cells.size()) + " cells, more than the " + std::to_string(columns.size()) + " columns");
        json o = json::object();
        for (std::size_t i = 0; i < cells.size(); ++i) {
            if (cells[i].empty()) continue;
            if (columns[i] == "prefix_id") {
                o["prefix_id"] = cells[i];
                continue;
            }
            double v = 0;
            if (!parse_number(cells[i], v)) throw UsageError(at + columns[i] + " '" + shown(cells[i]) + "' is not a number");
            if (v == double(static_cast<long long>(v))) o[columns[i]] = static_cast<long long>(v);
            else o[columns[i]] = v;
        }
        check_entry(o, at);
        list.push_back(std::move(o));
    }
    if (in.bad()) throw UsageError(where + ": read error");
    if (list.empty()) throw UsageError(where + ": holds no requests");
    *tr = std::move(list);
}

}  // namespace cli
