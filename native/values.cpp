// values.cpp — the VALUES grammar of `sweep --axis` (see values.h).
#include "values.h"

#include <cfloat>
#include <charconv>
#include <cstring>
#include <cmath>
#include <system_error>

#include "core/base/json_text.h"

namespace cli {

namespace {

constexpr double kRelTol = 1e-9;

// (cut to its first few dozen characters: an item may be 64 KiB long)
std::string quoted(std::string_view s) { return "'" + moe::message_text(s, 48) + "'"; }

// Splits at ':'; returns the number of parts (up to 4, the 4th meaning "too many").
int split_colons(std::string_view item, std::string_view parts[4]) {
    int n = 0;
    std::size_t start = 0;
    for (;;) {
        std::size_t colon = item.find(':', start);
        if (n == 3) {
            parts[3] = item.substr(start);
            return 4;
        }
        parts[n++] = item.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
        if (colon == std::string_view::npos) return n;
        start = colon + 1;
    }
}

bool parse_range(std::string_view item, std::vector<AxisValue>& out, std::string& error) {
    std::string_view parts[4];
    int n = split_colons(item, parts);
    if (n != 3) {
        error = "malformed range " + quoted(item) + ": expected START:STOP:xFACTOR or START:STOP:+STEP";
        return false;
    }
    double start = 0, stop = 0, step = 0;
    if (!parse_number(parts[0], start)) {
        error = "malformed range " + quoted(item) + ": start " + quoted(parts[0]) + " is not a number";
        return false;
    }
    if (!parse_number(parts[1], stop)) {
        error = "malformed range " + quoted(item) + ": stop " + quoted(parts[1]) + " is not a number";
        return false;
    }
    std::string_view step_text = parts[2];
    char kind = step_text.empty() ? '\0' : step_text.front();
    if ((kind != 'x' && kind != '+') || !parse_number(step_text.substr(1), step)) {
        error = "malformed range " + quoted(item) + ": step " + quoted(step_text) +
                " must be xFACTOR (geometric) or +STEP (arithmetic)";
        return false;
    }
    if (start > stop) {
        error = "malformed range " + quoted(item) + ": start " + number_text(start) + " is above stop " +
                number_text(stop);
        return false;
    }
    const double limit = stop + std::fabs(stop) * kRelTol;
    if (kind == 'x') {
        if (!(step > 1)) {
            error = "malformed range " + quoted(item) + ": factor " + number_text(step) + " must be greater than 1";
            return false;
        }
        if (!(start > 0)) {
            error = "malformed range " + quoted(item) + ": a geometric range needs a start above 0";
            return false;
        }
        const double count = std::floor(std::log(stop / start) / std::log(step) + kRelTol) + 1;
        if (count > double(kMaxAxisValues)) {
            error = "range " + quoted(item) + " has " + number_text(count) + " values; the limit is " +
                    std::to_string(kMaxAxisValues);
            return false;
        }
        for (double v = start; v <= limit; v *= step) out.push_back({number_text(v), v});
    } else {
        if (!(step > 0)) {
            error = "malformed range " + quoted(item) + ": step " + number_text(step) + " must be greater than 0";
            return false;
        }
        const double count = std::floor((stop - start) / step * (1 + kRelTol)) + 1;
        if (count > double(kMaxAxisValues)) {
            error = "range " + quoted(item) + " has " + number_text(count) + " values; the limit is " +
                    std::to_string(kMaxAxisValues);
            return false;
        }
        for (std::size_t i = 0; i < std::size_t(count); ++i) {
            double v = start + double(i) * step;
            if (v > limit) break;
            out.push_back({number_text(v), v});
        }
    }
    return true;
}

}  // namespace

bool parse_number(std::string_view text, double& out) {
    if (text.empty()) return false;
    const char* first = text.data();
    const char* last = first + text.size();
    if (*first == '+') ++first;  // from_chars rejects a leading '+'
    if (first == last) return false;
    double v = 0;
    auto [ptr, ec] = std::from_chars(first, last, v, std::chars_format::general);
    if (ec != std::errc() || ptr != last || !std::isfinite(v)) return false;
    out = v;
    return true;
}

namespace {

// format_number's loop, literally: the first of %.15g, %.16g, %.17g that reads back to v.
char* format_by_trial(char* buf, char* last, double v) {
    char* end = buf;
    for (int precision = 15; precision <= 17; ++precision) {
        end = std::to_chars(buf, last, v, std::chars_format::general, precision).ptr;
        double back = 0;
        std::from_chars(buf, end, back);
        if (back == v) break;
    }
    return end;
}

bool is_power_of_two(double v) {
    int exponent = 0;
    return std::frexp(std::fabs(v), &exponent) == 0.5;
}

}  // namespace

// Why the shortcut below gives format_number's bytes: the shortest round-trip digits (k of them, std::to_chars)
// are what %.Pg prints for P = 15 when k <= 15 (any decimal of <= 15 digits survives a trip through a double,
// DBL_DIG); for k = 16, %.15g cannot round-trip and %.16g is the closest 16-digit decimal, which is the shortest
// one unless the rounding interval is lopsided (v a power of two: then the exact loop runs, as for subnormals); for k = 17, %.15g and
// %.16g cannot round-trip and %.17g is the correctly rounded 17 digits, as the shortest is. %g then removes
// trailing zeros, so only the digits, the exponent X and the style rule (fixed when P > X >= -4) remain.
char* write_number(char* out, double v) {
    if (!std::isfinite(v)) return out;
    if (v == std::floor(v) && std::fabs(v) < 1e15) {
        if (v == 0 && std::signbit(v)) *out++ = '-';  // "%.0f" prints -0 as "-0"
        return std::to_chars(out, out + kNumberChars, static_cast<long long>(v)).ptr;
    }
    // Shortest scientific form: [-]d[.ddd]e(+|-)XX
    char buf[48];
    char* end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific).ptr;
    const char* p = buf;
    const bool negative = *p == '-';
    if (negative) ++p;
    char digits[20];
    int k = 0;
    for (; p < end && *p != 'e'; ++p)
        if (*p != '.') digits[k++] = *p;
    int exponent = 0;
    std::from_chars(p + 1 + (p[1] == '+'), end, exponent);
    if ((k == 16 && is_power_of_two(v)) || std::fabs(v) < DBL_MIN) {  // subnormals have fewer than 53 bits
        end = format_by_trial(buf, buf + sizeof buf, v);
        std::memcpy(out, buf, std::size_t(end - buf));
        return out + (end - buf);
    }
    const int precision = k <= 15 ? 15 : k;
    if (negative) *out++ = '-';
    if (exponent < precision && exponent >= -4) {  // fixed
        if (exponent < 0) {
            *out++ = '0';
            *out++ = '.';
            for (int z = 0; z < -exponent - 1; ++z) *out++ = '0';
            std::memcpy(out, digits, std::size_t(k));
            out += k;
        } else if (k <= exponent + 1) {
            std::memcpy(out, digits, std::size_t(k));
            out += k;
            for (int z = 0; z < exponent + 1 - k; ++z) *out++ = '0';
        } else {
            std::memcpy(out, digits, std::size_t(exponent + 1));
            out += exponent + 1;
            *out++ = '.';
            std::memcpy(out, digits + exponent + 1, std::size_t(k - exponent - 1));
            out += k - exponent - 1;
        }
        return out;
    }
    // scientific, as the shortest form already is
    const char* from = negative ? buf + 1 : buf;
    std::memcpy(out, from, std::size_t(end - from));
    return out + (end - from);
}

void append_number(std::string& out, double v) {
    char buf[kNumberChars];
    out.append(buf, write_number(buf, v));
}

std::string number_text(double v) {
    std::string out;
    append_number(out, v);
    return out;
}

bool split_assignment(std::string_view text, std::string& path, std::string& value) {
    std::size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) return false;
    path.assign(text.substr(0, eq));
    value.assign(text.substr(eq + 1));
    return true;
}

bool parse_values(std::string_view text, bool numeric, std::vector<AxisValue>& out, std::string& error) {
    out.clear();
    if (text.empty()) {
        error = "no values";
        return false;
    }
    std::size_t start = 0;
    for (;;) {
        std::size_t comma = text.find(',', start);
        std::string_view item =
            text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        if (item.empty()) {
            error = "empty value in " + quoted(text);
            return false;
        }
        if (!numeric) {
            out.push_back({std::string(item), 0});
        } else if (item.find(':') != std::string_view::npos) {
            if (!parse_range(item, out, error)) return false;
        } else {
            double v = 0;
            if (!parse_number(item, v)) {
                error = quoted(item) + " is not a number";
                return false;
            }
            out.push_back({number_text(v), v});
        }
        if (out.size() > kMaxAxisValues) {
            error = "too many values; the limit is " + std::to_string(kMaxAxisValues);
            return false;
        }
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return true;
}

}  // namespace cli
