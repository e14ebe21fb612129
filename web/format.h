// format.h — numbers for people: about four significant digits, thousands separators, SI units (GB = 1e9 bytes).
//
//   fmt::number(1149.44) == "1,149"     fmt::number(0.04437) == "0.0444"    fmt::si(228061) == "228k"
//   fmt::bytes(64877820797) == "64.9 GB"                                   fmt::time_ms(0.948) == "948 µs"
//
// Exact values (the CLI's digits) come from moe::format_value; these are for display only.
#pragma once
#include <string>

namespace web::fmt {

std::string number(double v, int significant = 4);  // grouped thousands, no exponent; "—" for NaN
std::string si(double v);                            // compact: 1.5k, 20M, 3G, 0.25, 1e-3 -> "1m" is never used
std::string bytes(double b);                         // "64.9 GB", "812 MB", "70.3 kB"
std::string params(double p);                        // "671B", "3.35B", "560M"
std::string time_ms(double ms);                      // "948 µs", "48.8 ms", "2.30 s"
std::string time_us(double us);
std::string percent(double fraction, int decimals = 0);  // 0.8244 -> "82%"
std::string signed_percent(double fraction);         // +12.3% / −4.0%

}  // namespace web::fmt
