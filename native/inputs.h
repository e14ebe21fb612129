// inputs.h — everything the CLI reads: the catalog (+ --presets-dir), SCENARIO arguments, --set overrides and
// model/hardware references given as file paths. All file I/O of the CLI's inputs lives here; the core never
// touches a file.
//
//   moe::Catalog cat = cli::load_catalog(presets_dir);                 // builtin + DIR/{models,hardware,scenarios}
//   cli::ScenarioSource src = cli::load_scenario_source("run.json", cat);  // file, preset scenario id, or "-"
//   cli::apply_set(src, "parallel.ep=8", cat);                        // --set, on the JSON before parsing
//   moe::Scenario s = cli::build_scenario(src, cat);                  // throws UsageError naming the field
//
// Errors are user errors: a UsageError whose text is the one line printed after "moe-roofline: " (exit 2).
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/scenario/catalog.h"
#include "core/scenario/scenario.h"
#include "core/base/types.h"

namespace cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Whole file / standard input as text; a UsageError naming the file when it cannot be read.
std::string read_file(const std::string& path);
std::string read_stdin();
// Parses JSON text (moe::parse_json_text); a UsageError "ORIGIN: invalid JSON: line L, column C: ..." when it is not
// JSON, "ORIGIN: line L, column C: FIELD: 1e999 is out of range: ..." for a number beyond a double. `root` prefixes
// the field ("space" -> "space.batch[2]").
nlohmann::json parse_json(std::string_view text, const std::string& origin, const std::string& root = "");

// The builtin catalog plus, when `presets_dir` is not empty, DIR/models/*.json, DIR/hardware/*.json and
// DIR/scenarios/*.json (id = file name without .json; added in that order, files sorted by name).
moe::Catalog load_catalog(const std::string& presets_dir);

struct ScenarioSource {
    nlohmann::json json;   // the scenario object (after --set)
    std::string origin;    // "run.json", "preset scenario 'x'", "standard input": for messages
    std::string base_dir;  // relative model/hardware file paths are resolved against this ("" = working dir)
};

// SCENARIO: "-" (standard input), an existing file, or a preset scenario id. Model and hardware references that
// are file paths are read and inlined (relative to the scenario file's directory).
ScenarioSource load_scenario_source(const std::string& arg, const moe::Catalog& catalog);
// A scenario given as a JSON object already (the Python module's dict): checked to be an object and its model and
// hardware file references resolved against `base_dir`, as load_scenario_source does for a file.
ScenarioSource scenario_source_from_json(nlohmann::json object, const std::string& origin, const std::string& base_dir,
                                         const moe::Catalog& catalog);

// "model"/"hardware" value given as text: a preset id stays a string; a path to a JSON file ("./cfg.json",
// anything with a '/' or ending in .json) becomes the file's object; "{...}" is parsed as an inline object.
// `origin` names the value in messages ("--set model").
nlohmann::json resolve_ref(const std::string& text, const std::string& base_dir, const moe::Catalog& catalog,
                           std::string_view kind, const std::string& origin);

// --set and --axis arguments are short; a longer one is refused with a UsageError naming `what` and the path.
inline constexpr std::size_t kMaxAssignmentBytes = 64u << 10;
void check_length(std::string_view assignment, std::string_view what);

// Is `path` a scenario path the CLI can set (a field of moe::scenario_fields(), or "model"/"hardware")?
// Returns the field (null for model/hardware) and throws a UsageError naming `what` ("--set", "--axis") if not.
const moe::FieldDesc* require_field(const std::string& path, std::string_view what);
bool is_ref_path(std::string_view path);
bool is_numeric_field(const moe::FieldDesc& f);

// Turns the text of one --set/--axis value into the JSON the field takes (number, bool, string or object).
nlohmann::json field_value(const moe::FieldDesc* field, const std::string& path, const std::string& text,
                           const std::string& base_dir, const moe::Catalog& catalog, std::string_view what);

// --set PATH=VALUE on the scenario JSON (before it is parsed), so the usual parser checks the result.
void apply_set(ScenarioSource& src, const std::string& assignment, const moe::Catalog& catalog);

// Parses the (overridden) scenario JSON; a UsageError with the issues on one line if it does not parse.
// `allow_cross_field`: a scenario whose fields all parse but do not fit together (ep not dividing the experts) is
// returned anyway — a sweep's axes may fix it, and each point is validated on its own.
moe::Scenario build_scenario(const ScenarioSource& src, const moe::Catalog& catalog, bool allow_cross_field = false);

// `"workload": {"trace": "FILE"}`: the JSONL or CSV file (relative to base_dir) read into the inline list of requests
// (trace_file.cpp); a UsageError "workload.trace: FILE line N: ..." on a bad line.
void inline_trace_file(nlohmann::json& scenario, const std::string& base_dir);

// "a: x; b: y" — issues on one line.
std::string join_issues(const moe::Issues& issues);
// Each issue on its own line, `prefix` before each: "PREFIXa: x\nPREFIXb: y" (main prints one line per error).
std::string issue_lines(const moe::Issues& issues, const std::string& prefix = "");

// User text quoted in a message: ASCII, cut to about `max` characters with "..." (moe::message_text).
std::string shown(std::string_view text, std::size_t max = 64);
// A file path in a message: whole when short, else "..." and its last 80 characters (the file name matters most).
std::string shown_path(const std::string& path);

}  // namespace cli
