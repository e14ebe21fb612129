// format.cpp — display formatting (see format.h).
#include "format.h"

#include <cmath>
#include <cstdio>

namespace web::fmt {

namespace {
// "1234567.8" -> "1,234,567.8" (only the integer part is grouped).
std::string group_thousands(const std::string& s) {
    std::size_t start = (s[0] == '-') ? 1 : 0;
    std::size_t end = s.find('.');
    if (end == std::string::npos) end = s.size();
    if (end - start <= 4) return s;  // 1234 stays compact
    std::string out = s.substr(0, start);
    for (std::size_t i = start; i < end; ++i) {
        out += s[i];
        const std::size_t left = end - i - 1;
        if (left > 0 && left % 3 == 0) out += ',';
    }
    return out + s.substr(end);
}
}  // namespace

std::string number(double v, int significant) {
    if (!std::isfinite(v)) return "\u2014";
    char buf[64];
    const double a = std::fabs(v);
    if (a == 0) return "0";
    // decimals so that `significant` digits show, never fewer than 0
    int digits_before = a >= 1 ? static_cast<int>(std::floor(std::log10(a))) + 1 : 0;
    int decimals = significant - digits_before;
    if (a < 1) decimals = significant - 1 - static_cast<int>(std::floor(std::log10(a)));
    if (decimals < 0) decimals = 0;
    if (decimals > 8) decimals = 8;
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    std::string s = buf;
    if (s.find('.') != std::string::npos) {  // trim trailing zeros of the fraction
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    return group_thousands(s);
}

std::string si(double v) {
    if (!std::isfinite(v)) return "";
    const double a = std::fabs(v);
    struct Unit {
        double scale;
        const char* suffix;
    };
    static const Unit units[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    char buf[32];
    for (const Unit& u : units) {
        if (a >= u.scale) {
            std::snprintf(buf, sizeof buf, "%g%s", std::round(v / u.scale * 100) / 100, u.suffix);
            return buf;
        }
    }
    if (a >= 1 || a == 0) std::snprintf(buf, sizeof buf, "%g", std::round(v * 100) / 100);
    else std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

std::string bytes(double b) {
    if (!std::isfinite(b)) return "\u2014";
    const double a = std::fabs(b);
    if (a >= 1e12) return number(b / 1e12, 3) + " TB";
    if (a >= 1e9) return number(b / 1e9, 3) + " GB";
    if (a >= 1e6) return number(b / 1e6, 3) + " MB";
    if (a >= 1e3) return number(b / 1e3, 3) + " kB";
    return number(b, 3) + " B";
}

std::string params(double p) {
    if (!std::isfinite(p)) return "\u2014";
    if (p >= 1e12) return number(p / 1e12, 3) + "T";
    if (p >= 1e9) return number(p / 1e9, 3) + "B";
    if (p >= 1e6) return number(p / 1e6, 3) + "M";
    return number(p, 3);
}

std::string time_ms(double ms) {
    if (!std::isfinite(ms)) return "\u2014";
    if (std::fabs(ms) >= 1000) return number(ms / 1000, 3) + " s";
    if (std::fabs(ms) >= 1) return number(ms, 3) + " ms";
    return number(ms * 1000, 3) + " \u00b5s";
}

std::string time_us(double us) { return time_ms(us / 1000); }

std::string percent(double fraction, int decimals) {
    if (!std::isfinite(fraction)) return "\u2014";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f%%", decimals, fraction * 100);
    return buf;
}

std::string signed_percent(double fraction) {
    if (!std::isfinite(fraction)) return "\u2014";
    char buf[32];
    const double p = fraction * 100;
    if (std::fabs(p) < 0.05) return "0%";
    std::snprintf(buf, sizeof buf, "%s%.*f%%", p > 0 ? "+" : "\u2212", std::fabs(p) >= 10 ? 0 : 1, std::fabs(p));
    return buf;
}

}  // namespace web::fmt
