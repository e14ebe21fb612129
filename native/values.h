// values.h — the VALUES grammar of `moe-roofline sweep --axis PATH=VALUES` (DESIGN §4.2). Pure, no I/O.
//
//   std::vector<cli::AxisValue> v;  std::string err;
//   cli::parse_values("1:1024:x2", true, v, err);        // 1, 2, 4, ..., 1024
//   cli::parse_values("1024:8192:+1024", true, v, err);  // 1024, 2048, ..., 8192
//   cli::parse_values("1,2,4:16:x2", true, v, err);      // 1, 2, 4, 8, 16 (items and ranges mix)
//   cli::parse_values("deepseek-v3,kimi-k2", false, v, err);  // strings: no range syntax
//
// Grammar (numeric axes): ITEM[,ITEM]...; ITEM = NUMBER | START:STOP:xFACTOR | START:STOP:+STEP.
// A geometric range multiplies START by FACTOR (> 1) while the value stays <= STOP; an arithmetic range adds STEP
// (> 0) as START + i*STEP (no accumulated rounding). STOP is included when reached within 1e-9 relative. START must
// be <= STOP, a geometric START > 0, and one axis holds at most kMaxAxisValues values.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cli {

struct AxisValue {
    std::string text;     // as written in the CSV axis column (numbers in shortest round-trip form)
    double number = 0;    // the value, for numeric axes
};

inline constexpr std::size_t kMaxAxisValues = 10'000'000;

// Parses VALUES. `numeric`: items are numbers or ranges; otherwise items are plain strings split at commas.
// On failure returns false and sets `error` to one line naming the offending item (without the axis name).
bool parse_values(std::string_view text, bool numeric, std::vector<AxisValue>& out, std::string& error);

// Splits "PATH=VALUE" at the first '='. False when there is no '=' or either side is empty.
bool split_assignment(std::string_view text, std::string& path, std::string& value);

// Strict number: the whole text is a finite decimal/scientific number ("8", "0.5", "1e3"), nothing else.
bool parse_number(std::string_view text, double& out);

// The text moe::format_number gives (integers below 1e15 without a point, else the first of %.15g/%.16g/%.17g
// that reads back to the same double; nothing for NaN/inf), byte for byte, but with std::to_chars/from_chars
// instead of snprintf/strtod: about 5x faster, which is most of a sweep's time per row. Appends to `out`.
void append_number(std::string& out, double v);
// append_number's text written at `out` (room for kNumberChars characters; it writes at most 24); returns its end.
constexpr std::size_t kNumberChars = 32;
char* write_number(char* out, double v);
std::string number_text(double v);

}  // namespace cli
