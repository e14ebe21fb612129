// json_util.h — internal helpers: typed, range-checked reads from nlohmann::json that report issues by path.
#pragma once
#include <nlohmann/json.hpp>
#include <cmath>
#include <string>
#include <string_view>

#include "types.h"

namespace moe::detail {

using json = nlohmann::json;

inline bool is_number(const json& v) { return v.is_number_integer() || v.is_number_unsigned() || v.is_number_float(); }

inline std::string fmt_num(double v) {
    char buf[64];
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
    else std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// User-supplied text quoted in a message: ASCII only (other characters as \u escapes, invalid UTF-8 as U+FFFD) and at
// most `max` characters, so that every message prints and serialises (json::dump() throws on invalid UTF-8, and a
// byte limit could cut a character in two). `shown` quotes like JSON; `shown_text` gives a string's text unquoted.
inline std::string shown(const json& v, std::size_t max = 40) {
    std::string s = v.dump(-1, ' ', true, json::error_handler_t::replace);
    if (s.size() > max) s.resize(max);
    return s;
}
inline std::string shown_text(const std::string& text, std::size_t max = 64) {
    std::string s = json(text).dump(-1, ' ', true, json::error_handler_t::replace);
    s = s.substr(1, s.size() - 2);
    if (s.size() > max) s.resize(max);
    return s;
}

inline bool valid_utf8(std::string_view text) {
    const json j = std::string(text);
    return j.dump(-1, ' ', false, json::error_handler_t::replace) == j.dump(-1, ' ', false, json::error_handler_t::ignore);
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
