// json_util.h — internal helpers: typed, range-checked reads from nlohmann::json that report issues by path.
#pragma once
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "core/base/types.h"

namespace moe::detail {

using json = nlohmann::json;

inline bool is_number(const json& v) { return v.is_number_integer() || v.is_number_unsigned() || v.is_number_float(); }

inline std::string fmt_num(double v) {
    char buf[64];
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
    else std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// User-supplied text quoted in a message: ASCII only (other characters as \u escapes, invalid UTF-8 as U+FFFD) and cut
// to about `max` characters (then "..."), so that every message prints and serialises (json::dump() throws on invalid
// UTF-8, and a byte limit could cut a character in two). `shown` quotes like JSON; `shown_text` leaves a string unquoted.
inline std::string clip_escaped(std::string s, std::size_t max) {
    if (s.size() <= max) return s;
    std::size_t cut = max;
    const std::size_t escape = s.rfind('\\', cut);
    if (escape != std::string::npos && escape + 6 > cut) cut = escape;  // not inside a \uXXXX
    return s.substr(0, cut) + "...";
}
inline std::string shown(const json& v, std::size_t max = 40) {
    return clip_escaped(v.dump(-1, ' ', true, json::error_handler_t::replace), max);
}
inline std::string shown_text(const std::string& text, std::size_t max = 64) {
    const std::string s = json(text).dump(-1, ' ', true, json::error_handler_t::replace);
    return clip_escaped(s.substr(1, s.size() - 2), max);
}

inline bool valid_utf8(std::string_view text) {
    const json j = std::string(text);
    return j.dump(-1, ' ', false, json::error_handler_t::replace) == j.dump(-1, ' ', false, json::error_handler_t::ignore);
}

// Nesting depth of a JSON value, counted up to `limit` + 1 (deeper input is refused before anything copies or prints
// it: both recurse once per level).
inline int json_depth(const json& j, int limit, int depth = 0) {
    if (depth > limit) return depth;
    int best = depth;
    if (j.is_object() || j.is_array())
        for (const json& c : j) best = std::max(best, json_depth(c, limit, depth + 1));
    return best;
}

// Reads a numeric key. Missing: `fallback` (or an error when required). Wrong type, not finite, out of range, or
// (for `whole`) not a whole number: an error naming the key's path.
inline double read_number(const json& obj, const char* key, const std::string& path, Issues& errors, double fallback,
                          bool required, double min, double max, bool whole) {
    auto it = obj.find(key);
    const std::string where = path.empty() ? key : path + "." + key;
    if (it == obj.end() || it->is_null()) {
        if (required) errors.push_back({where, "is required"});
        return fallback;
    }
    if (!is_number(*it)) {
        errors.push_back({where, "must be a number"});
        return fallback;
    }
    const double v = it->get<double>();
    if (whole && std::isfinite(v) && v != std::floor(v)) {
        errors.push_back({where, "must be a whole number, got " + it->dump()});
        return fallback;
    }
    if (!std::isfinite(v) || v < min || v > max) {
        errors.push_back({where, fmt_num(v) + " is out of range [" + fmt_num(min) + ", " + fmt_num(max) + "]"});
        return fallback;
    }
    return v;
}

inline int read_int(const json& obj, const char* key, const std::string& path, Issues& errors, int fallback,
                    bool required, long long min, long long max) {
    return int(read_number(obj, key, path, errors, fallback, required, double(min), double(max), true));
}

inline double read_num(const json& obj, const char* key, const std::string& path, Issues& errors, double fallback,
                       bool required, double min, double max) {
    return read_number(obj, key, path, errors, fallback, required, min, max, false);
}

inline std::string read_str(const json& obj, const char* key, const std::string& fallback = {}) {
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_string()) return fallback;
    return it->get<std::string>();
}

inline bool read_bool(const json& obj, const char* key, bool fallback) {
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_boolean()) return fallback;
    return it->get<bool>();
}

inline bool has(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it != obj.end() && !it->is_null();
}

}  // namespace moe::detail
