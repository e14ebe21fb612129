// json_text.h — JSON text in, a value or a located message out, without exceptions (the core has none in wasm).
//
//   nlohmann::json j;  moe::JsonTextError err;
//   if (!moe::parse_json_text(text, j, err)) show(err.message);
//   // "line 1, column 22: workload.batch: 1e999 is out of range: a number is at most 1.8e308 in magnitude"
//   // "line 1, column 2: syntax error while parsing value - invalid literal; last read: 'no'"
//
// Every input path parses JSON through here (scenario text and links, presets and --presets-dir files, HF configs,
// the CLI's scenario and --space files, inline `--set model={...}` objects), so a failure always says where: its
// line and column, and the field (the value's path from the top: "workload.batch", "layer_types[3]") it is in.
// nlohmann::json refuses a number a double cannot hold as an out_of_range error (406), not a parse error; that is
// the case the field matters for, and the one JsonTextError::number_out_of_range marks.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace moe {

struct JsonTextError {
    bool number_out_of_range = false;  // valid JSON grammar, but a number beyond a double (1e999, -1e400)
    int line = 0, column = 0;          // 1-based, where the number starts (number_out_of_range only; a syntax
                                       // error has its position in `message`)
    std::string field;                 // the path of the value where it stopped ("" at the top level)
    std::string message;               // "line L, column C: [FIELD: ]what", ASCII, at most ~200 characters
};

// Parses `text`. On failure returns false, leaves `out` discarded and fills `error`. `root` prefixes the field
// ("space" -> "space.batch[2]").
bool parse_json_text(std::string_view text, nlohmann::json& out, JsonTextError& error, const std::string& root = "");

// User text as a message quotes it: ASCII (other characters as \u escapes, invalid UTF-8 as U+FFFD) and cut to about
// `max` characters with "..." — so that a 70,000-character value prints as its first few dozen.
std::string message_text(std::string_view text, std::size_t max = 64);

}  // namespace moe
