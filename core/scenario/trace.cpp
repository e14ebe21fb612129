// trace.cpp — workload.trace: a list of requests with their lengths and prefix ids (scenario.h, TraceConfig).
//
// The core reads the list inline; trace_text_to_json turns the text of a JSONL or CSV trace into that list (the CLI
// reads the file, native/trace_file.cpp; the page takes pasted text).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/csv_cells.h"
#include "core/base/json_text.h"
#include "core/base/json_util.h"
#include "core/scenario/scenario.h"

namespace moe {
using namespace detail;

namespace {

// The serving fields' length range (serving.isl, serving.osl: 1 .. 1e8 tokens).
constexpr double kMaxLen = 1e8;
constexpr std::size_t kMaxIdChars = 256;

// A whole number in [lo, hi] at key `k` of `o`; an issue naming workload.trace[i].k otherwise.
bool read_len(const json& o, const char* k, const std::string& at, double lo, int& out, Issues& errors) {
    const auto it = o.find(k);
    if (it == o.end()) {
        errors.push_back({at + "." + k, "missing (every request needs isl and osl)"});
        return false;
    }
    const json& v = *it;
    if (!is_number(v) || !std::isfinite(v.get<double>()) || v.get<double>() != std::floor(v.get<double>()) ||
        v.get<double>() < lo || v.get<double>() > kMaxLen) {
        errors.push_back({at + "." + k, (lo > 0 ? "must be a positive integer up to " : "must be a whole number from 0 to ") +
                                            fmt_num(kMaxLen) + ", got " + shown(v)});
        return false;
    }
    out = int(v.get<double>());
    return true;
}

}  // namespace

bool parse_trace(const json& v, TraceConfig& t, Issues& errors) {
    const std::string path = "workload.trace";
    if (v.is_string()) {
        errors.push_back({path, "a file name (" + shown(v) + ") is read by the CLI only; here it must be the list of requests"});
        return false;
    }
    if (!v.is_array()) {
        errors.push_back({path, "must be a list of requests {isl, osl, prefix_id, prefix_len}, got " + shown(v)});
        return false;
    }
    if (v.size() > kMaxTraceRequests) {
        errors.push_back({path, std::to_string(v.size()) + " requests; the limit is " + std::to_string(kMaxTraceRequests)});
        return false;
    }
    auto data = std::make_shared<TraceData>();
    data->reqs.reserve(v.size());
    std::unordered_map<std::string, int> index;  // "s:<text>" or "i:<integer>" -> position in ids
    double sum_isl = 0, sum_osl = 0;
    const std::size_t before = errors.size();
    for (std::size_t i = 0; i < v.size() && errors.size() - before < 10; ++i) {
        const json& o = v[i];
        const std::string at = path + "[" + std::to_string(i) + "]";
        if (!o.is_object()) {
            errors.push_back({at, "must be an object {isl, osl, prefix_id, prefix_len}, got " + shown(o)});
            continue;
        }
        TraceRequest r;
        bool ok = read_len(o, "isl", at, 1, r.isl, errors);
        ok = read_len(o, "osl", at, 1, r.osl, errors) && ok;
        for (auto it = o.begin(); it != o.end(); ++it) {
            const std::string& key = it.key();
            if (key != "isl" && key != "osl" && key != "prefix_id" && key != "prefix_len") {
                errors.push_back({at + "." + shown_text(key), "unknown key (isl, osl, prefix_id, prefix_len)"});
                ok = false;
            }
        }
        const auto id = o.find("prefix_id");
        const bool has_id = id != o.end() && !id->is_null();
        if (has_id) {
            std::string key;
            if (id->is_string() && !id->get<std::string>().empty() && id->get<std::string>().size() <= kMaxIdChars) {
                key = "s:" + id->get<std::string>();
            } else if (id->is_number_integer() || id->is_number_unsigned()) {
                key = "i:" + id->dump();
            } else {
                errors.push_back({at + ".prefix_id", "must be a string (1 to 256 characters) or an integer, got " + shown(*id)});
                ok = false;
            }
            if (!key.empty()) {
                const auto [pos, fresh] = index.emplace(key, int(data->ids.size()));
                if (fresh) data->ids.push_back(*id);
                r.prefix = pos->second;
            }
        }
        if (o.contains("prefix_len") && !o["prefix_len"].is_null()) {
            if (!read_len(o, "prefix_len", at, 0, r.prefix_len, errors)) {
                ok = false;
            } else if (!has_id && r.prefix_len > 0) {
                errors.push_back({at + ".prefix_len", "needs a prefix_id (the requests that share the prefix)"});
                ok = false;
            } else if (r.prefix_len > r.isl) {
                errors.push_back({at + ".prefix_len", std::to_string(r.prefix_len) + " exceeds the request's isl " + std::to_string(r.isl)});
                ok = false;
            }
        }
        if (!ok) continue;
        sum_isl += r.isl;
        sum_osl += r.osl;
        data->reqs.push_back(r);
    }
    if (errors.size() != before) return false;
    if (!data->reqs.empty()) {
        const double n = double(data->reqs.size());
        data->mean_isl = sum_isl / n;
        data->mean_osl = sum_osl / n;
        // what a cache without a size limit finds (TraceData::mean_found_*): per id, its previous request
        std::vector<const TraceRequest*> last(data->ids.size(), nullptr);
        double found_agg = 0, found_disagg = 0;
        for (const TraceRequest& r : data->reqs) {
            if (r.prefix < 0) continue;
            const TraceRequest* prev = last[std::size_t(r.prefix)];
            last[std::size_t(r.prefix)] = &r;
            if (!prev) continue;
            const double most = r.isl - 1.0;
            if (r.prefix_len > 0) {
                found_agg += std::min<double>(r.prefix_len, most);
                found_disagg += std::min<double>(r.prefix_len, most);
            } else {
                found_agg += std::min<double>(double(prev->isl) + prev->osl, most);
                found_disagg += std::min<double>(prev->isl, most);
            }
        }
        data->mean_found_aggregated = found_agg / n;
        data->mean_found_disaggregated = found_disagg / n;
    }
    t.data = std::move(data);
    return true;
}

namespace {

std::string trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(s);
}

// The core's checks of one request; the first issue as "field: message" (empty: valid).
std::string entry_issue(const json& o) {
    Issues errors;
    TraceConfig one;
    if (parse_trace(json::array({o}), one, errors)) return "";
    std::string field = errors.front().path;
    const std::string entry = "workload.trace[0]";
    field = field.size() > entry.size() + 1 ? field.substr(entry.size() + 1) + ": " : "";
    return field + errors.front().message;
}

}  // namespace

bool trace_text_to_json(std::string_view text, bool csv, const std::string& where, json& out, std::string& error) {
    json list = json::array();
    std::vector<std::string> columns = {"isl", "osl", "prefix_id", "prefix_len"};
    bool first = true;
    long long n = 0;
    for (std::size_t pos = 0; pos <= text.size();) {
        const std::size_t eol = std::min(text.find('\n', pos), text.size());
        const std::string line = trim(text.substr(pos, eol - pos));
        pos = eol + 1;
        ++n;
        if (line.empty() || line[0] == '#') continue;
        const std::string at = where + " line " + std::to_string(n) + ": ";
        if (list.size() >= kMaxTraceRequests) {
            error = at + "more than " + std::to_string(kMaxTraceRequests) + " requests";
            return false;
        }
        json o = json::object();
        if (!csv) {
            JsonTextError bad;
            if (!parse_json_text(line, o, bad)) {
                error = at + "not valid JSON: " + bad.message;
                return false;
            }
            if (!o.is_object()) {
                error = at + "must be an object {isl, osl, prefix_id, prefix_len}";
                return false;
            }
        } else {
            const std::vector<std::string_view> cells = detail::split_cells(line);
            if (first && !cells.empty() && !cells[0].empty() && !std::isdigit(static_cast<unsigned char>(cells[0][0]))) {
                // the header row: names the columns
                columns.assign(cells.begin(), cells.end());
                for (const std::string& c : columns)
                    if (c != "isl" && c != "osl" && c != "prefix_id" && c != "prefix_len") {
                        error = at + "unknown column '" + shown_text(c) + "' (isl, osl, prefix_id, prefix_len)";
                        return false;
                    }
                first = false;
                continue;
            }
            first = false;
            if (cells.size() > columns.size()) {
                error = at + std::to_string(cells.size()) + " cells, more than the " + std::to_string(columns.size()) + " columns";
                return false;
            }
            for (std::size_t i = 0; i < cells.size(); ++i) {
                if (cells[i].empty()) continue;
                if (columns[i] == "prefix_id") {
                    o["prefix_id"] = std::string(cells[i]);
                    continue;
                }
                double v = 0;
                if (!detail::cell_to_double(cells[i], v)) {
                    error = at + columns[i] + " '" + shown_text(std::string(cells[i])) + "' is not a number";
                    return false;
                }
                if (std::fabs(v) < 9e15 && v == std::floor(v)) o[columns[i]] = static_cast<long long>(v);
                else o[columns[i]] = v;
            }
        }
        const std::string issue = entry_issue(o);
        if (!issue.empty()) {
            error = at + issue;
            return false;
        }
        list.push_back(std::move(o));
    }
    if (list.empty()) {
        error = where + ": holds no requests";
        return false;
    }
    out = std::move(list);
    return true;
}

json trace_to_json(const TraceConfig& t) {
    json out = json::array();
    if (!t.data) return out;
    for (const TraceRequest& r : t.data->reqs) {
        json o = {{"isl", r.isl}, {"osl", r.osl}};
        if (r.prefix >= 0) o["prefix_id"] = t.data->ids[std::size_t(r.prefix)];
        if (r.prefix_len > 0) o["prefix_len"] = r.prefix_len;
        out.push_back(std::move(o));
    }
    return out;
}

}  // namespace moe
