// inputs.cpp — the CLI's inputs: catalog, SCENARIO, --set, file references (see inputs.h).
#include "inputs.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include "core/base/json_text.h"
#include "values.h"

namespace cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Scenario and preset files are small; refuse anything that is clearly not one (a device, a huge file). 4 MiB and 64
// levels are the core's own limits for a scenario or a preset (parse_scenario, Catalog::add); the CLI applies them
// before parsing, because a JSON DOM costs ~70x its text (64 MiB of '[' took 4 GB) and copying or printing it
// recurses once per level (a deep file crashed --presets-dir).
constexpr std::uintmax_t kMaxInputBytes = 4u << 20;
constexpr int kMaxJsonDepth = 64;

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool looks_like_path(std::string_view text) {
    return text.find('/') != std::string_view::npos || ends_with(text, ".json");
}

std::string join_path(const std::string& base_dir, const std::string& path) {
    if (base_dir.empty() || fs::path(path).is_absolute()) return path;
    return (fs::path(base_dir) / path).lexically_normal().string();
}

bool is_known_ref(std::string_view kind, std::string_view id, const moe::Catalog& catalog) {
    return kind == "model" ? catalog.model(id) != nullptr : catalog.gpu(id) != nullptr;
}

// Inlines "model"/"hardware" file references of a scenario object read from `base_dir`.
void resolve_refs(json& scenario, const std::string& base_dir, const moe::Catalog& catalog) {
    if (!scenario.is_object()) return;
    for (const char* kind : {"model", "hardware"}) {
        auto it = scenario.find(kind);
        if (it != scenario.end() && it->is_string())
            *it = resolve_ref(it->get<std::string>(), base_dir, catalog, kind, kind);
    }
    inline_trace_file(scenario, base_dir);
}

}  // namespace

std::string read_file(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw UsageError(shown_path(path) + ": is a directory, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError(shown_path(path) + ": cannot read: " + std::strerror(errno));
    std::string text;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, std::size_t(in.gcount()));
        if (text.size() > kMaxInputBytes) throw UsageError(shown_path(path) + ": larger than 4 MiB; not a scenario or config");
    }
    if (in.bad()) throw UsageError(shown_path(path) + ": read error");
    return text;
}

std::string read_stdin() {
    std::string text;
    char buf[65536];
    while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
        text.append(buf, std::size_t(std::cin.gcount()));
        if (text.size() > kMaxInputBytes) throw UsageError("standard input: larger than 4 MiB; not a scenario");
    }
    return text;
}

namespace {
// Python's json.dumps writes Infinity, -Infinity and NaN, and Hugging Face configs carry them (Nemotron-H's
// "time_step_limit": [0.0, Infinity]). JSON has no such literals: outside strings they are read as null, which no
// field we read takes (a config's number fields then say "must be a number"). Returns false when there is none.
bool python_literals_as_null(std::string_view text, std::string& out) {
    out.assign(text);
    bool in_string = false, escaped = false, any = false;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const char c = out[i];
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') { in_string = true; continue; }
        for (std::string_view lit : {std::string_view("-Infinity"), std::string_view("Infinity"), std::string_view("NaN")}) {
            if (out.compare(i, lit.size(), lit) != 0) continue;
            const char before = i > 0 ? out[i - 1] : ' ';
            if (std::isalnum(static_cast<unsigned char>(before)) || before == '_') break;
            out.replace(i, lit.size(), "null");  // -Infinity and Infinity are longer: pad so columns hold after
            if (lit.size() > 4) out.insert(i + 4, lit.size() - 4, ' ');
            any = true;
            break;
        }
    }
    return any;
}
}  // namespace

json parse_json(std::string_view text, const std::string& origin, const std::string& root) {
    // Nesting depth first, in one pass over the text (brackets inside strings do not count).
    int depth = 0, line = 1;
    bool in_string = false, escaped = false;
    for (std::size_t i = 0, line_start = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth)
                throw UsageError(origin + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels at line " +
                                 std::to_string(line) + ", column " + std::to_string(i - line_start + 1));
        } else if (c == ']' || c == '}') {
            --depth;
        }
        if (c == '\n') ++line, line_start = i + 1;
    }
    // The core's parser: a syntax error gives its line and column, a number beyond a double (1e999) its field too.
    json j;
    moe::JsonTextError bad;
    std::string relaxed;
    if (!moe::parse_json_text(text, j, bad, root) &&
        !(python_literals_as_null(text, relaxed) && moe::parse_json_text(relaxed, j, bad, root))) {
        if (bad.number_out_of_range) throw UsageError(origin + ": " + bad.message);
        throw UsageError(origin + ": invalid JSON: " + bad.message);
    }
    return j;
}

moe::Catalog load_catalog(const std::string& presets_dir) {
    moe::Catalog catalog = moe::builtin_catalog();
    if (presets_dir.empty()) return catalog;
    std::error_code ec;
    if (!fs::is_directory(presets_dir, ec))
        throw UsageError("--presets-dir " + shown_path(presets_dir) + ": not a directory");
    bool any_kind = false;
    for (const char* kind : {"models", "hardware", "scenarios"}) {
        const fs::path dir = fs::path(presets_dir) / kind;
        if (!fs::is_directory(dir, ec)) continue;
        any_kind = true;
        std::vector<fs::path> files;
        for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec))
            if (entry.path().extension() == ".json") files.push_back(entry.path());
        if (ec) throw UsageError(shown_path(dir.string()) + ": cannot list: " + ec.message());
        std::sort(files.begin(), files.end());
        for (const fs::path& file : files) {
            const std::string text = read_file(file.string());
            json j = parse_json(text, file.string());
            if (std::string_view(kind) == "scenarios") {
                resolve_refs(j, file.parent_path().string(), catalog);
            }
            moe::Issues errors;
            if (!catalog.add(kind, file.stem().string(), j.dump(), errors))
                throw UsageError(issue_lines(errors, shown_path(file.string()) + ": "));
        }
    }
    if (!any_kind)
        throw UsageError("--presets-dir " + shown_path(presets_dir) + ": has none of models/, hardware/, scenarios/");
    return catalog;
}

json resolve_ref(const std::string& text, const std::string& base_dir, const moe::Catalog& catalog,
                 std::string_view kind, const std::string& origin) {
    if (!text.empty() && text.front() == '{') return parse_json(text, origin, std::string(kind));
    if (is_known_ref(kind, text, catalog) || !looks_like_path(text)) return text;  // a preset id (the core checks)
    const std::string path = join_path(base_dir, text);
    json j;
    try {
        j = parse_json(read_file(path), shown_path(path));
    } catch (const UsageError& e) {
        // name the argument or field the path came from ("--axis model: ./m.json: cannot read: ...")
        throw UsageError(origin + ": " + e.what());
    }
    if (!j.is_object()) throw UsageError(origin + ": " + shown_path(path) + ": a " + std::string(kind) + " file must hold a JSON object");
    return j;
}

ScenarioSource load_scenario_source(const std::string& arg, const moe::Catalog& catalog) {
    ScenarioSource src;
    std::error_code ec;
    if (arg == "-") {
        src.origin = "standard input";
        src.json = parse_json(read_stdin(), src.origin);
    } else if (fs::exists(arg, ec) || looks_like_path(arg)) {
        src.origin = arg;
        src.base_dir = fs::path(arg).parent_path().string();
        src.json = parse_json(read_file(arg), arg);
    } else if (const moe::CatalogEntry* preset = catalog.scenario(arg)) {
        src.origin = "preset scenario '" + arg + "'";
        src.json = preset->json;
    } else {
        throw UsageError("SCENARIO '" + shown(arg) +
                         "': no such file or preset scenario (list them: moe-roofline presets scenarios)");
    }
    if (!src.json.is_object()) throw UsageError(src.origin + ": a scenario must be a JSON object");
    resolve_refs(src.json, src.base_dir, catalog);
    return src;
}

ScenarioSource scenario_source_from_json(nlohmann::json object, const std::string& origin, const std::string& base_dir,
                                         const moe::Catalog& catalog) {
    ScenarioSource src;
    src.origin = origin;
    src.base_dir = base_dir;
    src.json = std::move(object);
    if (!src.json.is_object()) throw UsageError(src.origin + ": a scenario must be a JSON object");
    resolve_refs(src.json, src.base_dir, catalog);
    return src;
}

void check_length(std::string_view assignment, std::string_view what) {
    if (assignment.size() <= kMaxAssignmentBytes) return;
    const std::string path = shown(assignment.substr(0, std::min<std::size_t>(assignment.find('='), 64)));
    throw UsageError(std::string(what) + " " + path + ": " + std::to_string(assignment.size()) + " bytes; the limit is " +
                     std::to_string(kMaxAssignmentBytes) + " (a large model or GPU goes in a file: PATH=./config.json)");
}

bool is_ref_path(std::string_view path) { return path == "model" || path == "hardware"; }

bool is_numeric_field(const moe::FieldDesc& f) {
    return f.type == moe::FieldType::integer || f.type == moe::FieldType::number;
}

const moe::FieldDesc* require_field(const std::string& path, std::string_view what) {
    if (is_ref_path(path)) return nullptr;
    const moe::FieldDesc* field = moe::find_field(path);
    if (!field) {
        throw UsageError(std::string(what) + " " + shown(path) +
                         ": unknown path (scenario fields are listed by moe-roofline presets fields)");
    }
    return field;
}

// The numbers of a comma list "a,b,c" or "[a,b,c]" into `out`; false at a piece that is not a number. With
// `spaces`, each piece may have spaces around it and a list of nothing but spaces (or "[]") is empty.
static bool comma_numbers(const std::string& text, bool spaces, std::vector<double>& out) {
    out.clear();
    const std::string rest = !text.empty() && text[0] == '[' ? text.substr(1, text.size() - (text.back() == ']' ? 2 : 1)) : text;
    if (spaces && rest.find_first_not_of(' ') == std::string::npos) return true;
    for (std::size_t start = 0; start <= rest.size();) {
        std::size_t comma = rest.find(',', start);
        if (comma == std::string::npos) comma = rest.size();
        std::string piece = rest.substr(start, comma - start);
        if (spaces) {
            piece.erase(0, piece.find_first_not_of(' '));
            piece.erase(piece.find_last_not_of(' ') + 1);
        }
        double v = 0;
        if (!parse_number(piece, v)) return false;
        out.push_back(v);
        start = comma + 1;
    }
    return true;
}

json field_value(const moe::FieldDesc* field, const std::string& path, const std::string& text,
                 const std::string& base_dir, const moe::Catalog& catalog, std::string_view what) {
    const std::string origin = std::string(what) + " " + path;
    if (!field) return resolve_ref(text, base_dir, catalog, path, origin);
    switch (field->type) {
        case moe::FieldType::integer:
        case moe::FieldType::number: {
            double v = 0;
            if (!parse_number(text, v))
                throw UsageError(origin + ": '" + shown(text) + "' is not a number");
            if (field->type == moe::FieldType::integer && v == double(static_cast<long long>(v)))
                return static_cast<long long>(v);
            return v;
        }
        case moe::FieldType::boolean:
            if (text == "true" || text == "1") return true;
            if (text == "false" || text == "0") return false;
            throw UsageError(origin + ": '" + shown(text) + "' is not true or false");
        case moe::FieldType::ref:
            return resolve_ref(text, base_dir, catalog, path, origin);
        case moe::FieldType::rates: {
            // a curve's name, or rates: 0.9,0.8,0.7 (or a JSON list)
            if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.' || text[0] == '['))
                return text;
            std::vector<double> rates;
            if (!comma_numbers(text, false, rates))
                throw UsageError(origin + ": '" + shown(text) + "' is not a curve name or a list of rates (0.9,0.8,0.7)");
            return rates;
        }
        case moe::FieldType::lengths: {
            // token counts: 1024,7168 (or a JSON list); an empty value or [] turns the list off
            json list = json::array();
            std::vector<double> counts;
            if (!comma_numbers(text, true, counts))
                throw UsageError(origin + ": '" + shown(text) + "' is not a list of token counts (1024,7168)");
            for (double v : counts)
                if (v == double(static_cast<long long>(v))) list.push_back(static_cast<long long>(v));
                else list.push_back(v);
            return list;
        }
        case moe::FieldType::choice:
        case moe::FieldType::dtype:
            break;
    }
    return text;
}

void apply_set(ScenarioSource& src, const std::string& assignment, const moe::Catalog& catalog) {
    check_length(assignment, "--set");
    std::string path, text;
    if (!split_assignment(assignment, path, text))
        throw UsageError("--set '" + shown(assignment) + "': expected PATH=VALUE, e.g. --set workload.batch=64");
    if (path == "workload.trace") {
        // a trace file (JSONL or CSV, relative to the working directory) or its requests inline as a JSON list
        json wrapper = {{"workload", {{"trace", text}}}};
        if (!text.empty() && text.front() == '[') wrapper["workload"]["trace"] = parse_json(text, "--set workload.trace", "workload.trace");
        else inline_trace_file(wrapper, "");
        json& w = src.json["workload"];
        if (!w.is_object()) w = json::object();
        w["trace"] = std::move(wrapper["workload"]["trace"]);
        return;
    }
    const moe::FieldDesc* field = require_field(path, "--set");
    // Relative file paths on the command line are relative to the working directory.
    json value = field_value(field, path, text, "", catalog, "--set");
    json* node = &src.json;
    std::size_t start = 0;
    for (;;) {
        std::size_t dot = path.find('.', start);
        std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (dot == std::string::npos) {
            (*node)[key] = std::move(value);
            return;
        }
        json& child = (*node)[key];
        if (!child.is_object()) child = json::object();
        node = &child;
        start = dot + 1;
    }
}

moe::Scenario build_scenario(const ScenarioSource& src, const moe::Catalog& catalog, bool allow_cross_field) {
    moe::ParseResult r = moe::scenario_from_json(src.json, catalog);
    // scenario_from_json validates across fields only once every field parsed: if its issues are exactly
    // validate_scenario's, the scenario itself is complete.
    const bool only_cross_field = !r.ok() && allow_cross_field && join_issues(moe::validate_scenario(r.scenario)) == join_issues(r.errors);
    if (!r.ok() && !only_cross_field) throw UsageError(issue_lines(r.errors));
    return std::move(r.scenario);
}

std::string issue_lines(const moe::Issues& issues, const std::string& prefix) {
    std::string out;
    for (const moe::Issue& i : issues) {
        if (!out.empty()) out += '\n';
        out += prefix + i.text();
    }
    return out;
}

std::string shown(std::string_view text, std::size_t max) { return moe::message_text(text, max); }

std::string shown_path(const std::string& path) {
    if (path.size() <= 100) return shown(path, 100);
    std::size_t cut = path.size() - 80;
    while (cut < path.size() && (static_cast<unsigned char>(path[cut]) & 0xC0) == 0x80) ++cut;  // not inside a character
    return "..." + shown(path.substr(cut), 100);
}

std::string join_issues(const moe::Issues& issues) {
    std::string out;
    for (const moe::Issue& i : issues) {
        if (!out.empty()) out += "; ";
        out += i.text();
    }
    return out;
}

}  // namespace cli
