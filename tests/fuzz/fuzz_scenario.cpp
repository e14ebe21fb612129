// fuzz_scenario.cpp — libFuzzer target: scenario JSON plus `--set PATH=VALUE` overrides, then estimate().
//
// Input: a scenario's JSON text, then any number of lines "--set PATH=VALUE" (the CLI's overrides), e.g.
//   {"model":"deepseek-v3","hardware":"h800","parallel":{"dp":32,"ep":32}}
//   --set workload.batch=64
//   --set precision.kv_cache="fp8"
// VALUE is JSON when it parses as JSON, else a plain string (as the CLI passes choices and preset ids).
// Two routes, as the front ends use the core: (1) the overrides written into the JSON before parsing (CLI eval);
// (2) parse_scenario, then set_path / set_path_number on the Scenario (CLI sweep, the page). Both end in
// validate_scenario + estimate, checked by fuzz::check_estimate; a scenario that is valid must survive the trip
// through its compact JSON unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_common.h"

namespace {

using nlohmann::json;

struct Assignment {
    std::string path, value;
};

void split_input(std::string_view data, std::string_view& scenario, std::vector<Assignment>& sets) {
    constexpr std::string_view kSet = "\n--set ";
    std::size_t at = data.find(kSet);
    scenario = data.substr(0, at);
    while (at != std::string_view::npos && sets.size() < 16) {
        std::size_t start = at + kSet.size();
        at = data.find(kSet, start);
        std::string_view a = data.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start);
        while (!a.empty() && (a.back() == '\n' || a.back() == '\r')) a.remove_suffix(1);
        std::size_t eq = a.find('=');
        if (eq == std::string_view::npos) continue;
        sets.push_back({std::string(a.substr(0, eq)), std::string(a.substr(eq + 1))});
    }
}

json value_json(const std::string& text) {
    json v = json::parse(text, nullptr, false);
    return v.is_discarded() ? json(text) : v;
}

// Route 1: the CLI's apply_set on the scenario JSON (dot path -> nested objects), then scenario_from_json.
void json_route(std::string_view text, const std::vector<Assignment>& sets) {
    json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) return;
    for (const Assignment& a : sets) {
        json* node = &j;
        std::size_t start = 0;
        for (int depth = 0; depth < 8; ++depth) {
            std::size_t dot = a.path.find('.', start);
            std::string key = a.path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
            if (dot == std::string::npos) {
                (*node)[key] = value_json(a.value);
                break;
            }
            json& child = (*node)[key];
            if (!child.is_object()) child = json::object();
            node = &child;
            start = dot + 1;
        }
    }
    moe::ParseResult r = moe::scenario_from_json(j, moe::builtin_catalog());
    fuzz::check_issues(r.errors, "scenario_from_json");
    if (!r.ok()) return;
    moe::Estimate e = moe::evaluate(r.scenario, moe::builtin_tables());
    fuzz::check_estimate(e, "json route");
}

void round_trip(const moe::Scenario& s) {
    const json compact = moe::scenario_to_json(s, true);
    moe::ParseResult again = moe::parse_scenario(compact.dump(), moe::builtin_catalog());
    if (!again.ok()) fuzz::fail("a valid scenario's compact JSON does not parse: " + again.errors[0].text());
    if (moe::scenario_to_json(again.scenario, true) != compact) fuzz::fail("compact JSON does not round-trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    std::string_view text;
    std::vector<Assignment> sets;
    split_input(input, text, sets);
    const moe::Catalog& cat = moe::builtin_catalog();

    // Route 2: parse, then set fields on the Scenario.
    moe::ParseResult r = moe::parse_scenario(text, cat);
    fuzz::check_issues(r.errors, "parse_scenario");
    moe::Scenario s = r.scenario;  // the defaults (or what parsed) when there were errors
    bool all_set = r.ok();
    for (const Assignment& a : sets) {
        moe::Issues errs;
        bool ok = moe::set_path(s, a.path, value_json(a.value), cat, errs);
        fuzz::check_issues(errs, "set_path");
        if (!ok && errs.empty()) fuzz::fail("set_path failed without an issue");
        if (const moe::FieldDesc* f = moe::find_field(a.path)) {
            if (f->type == moe::FieldType::integer || f->type == moe::FieldType::number) {
                char* end = nullptr;
                const double v = std::strtod(a.value.c_str(), &end);
                moe::Issues errs2;
                if (end != a.value.c_str()) ok = moe::set_path_number(s, *f, v, errs2) || ok;
                fuzz::check_issues(errs2, "set_path_number");
            }
        }
        all_set = all_set && ok;
    }
    const moe::Issues problems = moe::validate_scenario(s);
    fuzz::check_issues(problems, "validate_scenario");
    for (const moe::Issue& i : problems)
        if (i.path.empty()) fuzz::fail("validate_scenario: an issue that names no field: " + i.message);
    moe::Estimate e = moe::estimate(s, moe::builtin_tables());
    fuzz::check_estimate(e, "set route");
    fuzz::check_json(e, input.size() % 16 == 0);
    if (e.ok && problems.empty() && all_set) round_trip(s);

    json_route(text, sets);
    return 0;
}
