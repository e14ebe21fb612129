// columns.h — the one table of output columns (DESIGN §4.3). It drives the CLI's JSON and CSV, the page's
// tables and its test hook, so a number has one name everywhere.
//
//   for (const moe::Column& c : moe::output_columns()) printf("%s [%s] = %s\n", c.name, c.unit, moe::format_value(c, e).c_str());
//   nlohmann::json j = moe::estimate_to_json(e);   // nested by the dots, plus "layers", "errors", "warnings"
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/step/estimate.h"

namespace moe {

enum class ColumnType : std::uint8_t { number, boolean, text };

struct Column {
    const char* name;     // "decode.tpot_ms"
    const char* unit;     // "ms", "bytes", "tokens/s", "" ...
    ColumnType type;
    double (*number)(const Estimate&);         // number and boolean columns
    std::string (*text)(const Estimate&);      // text columns (status, error)
    const char* help;
};

const std::vector<Column>& output_columns();
const Column* find_column(std::string_view name);
// Shortest text that parses back to the same double ("%.17g" fallback); NaN/inf never occur but print as null.
std::string format_number(double v);
std::string format_value(const Column& c, const Estimate& e);   // CSV cell
// Appends `text` as one CSV cell, quoted (RFC 4180) when it holds a comma, quote or line break.
void append_csv_cell(std::string& out, std::string_view text);
nlohmann::json column_json(const Column& c, const Estimate& e);  // JSON value
// {"prefill": {...}, "decode": {...}, "memory": {...}, "model": {...}, "status":..., "error":...,
//  "layers": [...], "errors": [...], "warnings": [...]}
nlohmann::json estimate_to_json(const Estimate& e);
// Flat {"prefill.step_ms": ..., ...} keyed by column names (the page's window.__moe.results).
nlohmann::json estimate_to_flat_json(const Estimate& e);

}  // namespace moe
