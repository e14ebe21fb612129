// format_fixed1 (core/estimate.cpp): the "does not fit" warning's numbers written without printf must be printf's
// "%.1f" text, character for character, or left to printf.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "core/step/estimate_detail.h"
#include "test_helpers.h"

namespace {
// 0 where format_fixed1 declines (the caller then prints with snprintf), else whether its text is printf's.
int check(double v) {
    char ours[24];
    const std::size_t n = moe::detail::format_fixed1(v, ours);
    if (n == 0) return 0;
    char ref[64];
    std::snprintf(ref, sizeof ref, "%.1f", v);
    const bool same = std::string(ours, n) == ref;
    if (!same) MESSAGE("format_fixed1(" << ref << ") = " << std::string(ours, n));
    return same ? 1 : -1;
}
}  // namespace

TEST_CASE("format_fixed1 writes what printf's %.1f writes") {
    int written = 0, wrong = 0;
    auto tally = [&](double v) {
        const int r = check(v);
        written += r != 0;
        wrong += r < 0;
    };
    // whole numbers, tenths and the values around every tenth and twentieth (the rounding boundaries), in binades
    // from 1e-3 to 1e14
    for (int i = 0; i <= 400; ++i)
        for (double scale : {1.0, 1e3, 1e6, 1e9, 1e12}) {
            const double base = i * scale / 20.0;
            tally(base);
            for (int k = 1; k <= 4; ++k) {
                tally(std::nextafter(base, 0.0));
                tally(std::nextafter(base, 1e300));
            }
            double x = base;
            for (int k = 0; k < 3; ++k) tally(x = std::nextafter(x, 1e300));
            x = base;
            for (int k = 0; k < 3; ++k) tally(x = std::nextafter(x, 0.0));
        }
    // pseudo-random doubles over many magnitudes (a fixed 64-bit LCG: the same cases on every platform)
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 200000; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const double mant = double(state >> 11) / 9007199254740992.0;  // [0, 1)
        const int e = int((state >> 3) % 60) - 15;
        tally(mant * std::pow(10.0, e));
    }
    // GB figures as the warning computes them: whole bytes / 1e9
    for (double bytes = 1; bytes < 1e15; bytes = std::floor(bytes * 1.37 + 7)) tally(bytes / 1e9);
    CHECK(wrong == 0);
    CHECK(written > 100000);
    // declined: negative, -0, not finite, too large; exact ties between two tenths
    char buf[24];
    for (double v : {-1.0, -0.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(), 1e15, 0.25,
                     0.75, 2.25, 1e6 + 0.75})
        CHECK(moe::detail::format_fixed1(v, buf) == 0);
    CHECK(check(0.0) == 1);
    CHECK(check(0.05) == 1);   // 0.05 is a little above 1/20 in binary
    CHECK(check(0.15) == 1);   // and 0.15 a little below 3/20
    CHECK(check(9.96) == 1);   // rounds up into the next whole number
    CHECK(check(99.95) == 1);
}
