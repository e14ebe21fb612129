// portable_math.h — an exp() whose result is the same bits on every platform the core compiles for.
//
// The page (WebAssembly, Emscripten's musl-derived libm) and the CLI (glibc) must print the same numbers to the last
// digit (DESIGN 11, the page's test hook). Their std::exp agree to within one ulp, not always to the bit: a serving
// band's p10 (the number times exp of a log-error quantile) came out 928.8014777993866 on one and ...867 on the other.
// This one uses only IEEE-754 additions, multiplications and std::ldexp, each exactly rounded everywhere, and the core
// is compiled with -ffp-contract=off (CMakeLists.txt: no a*b+c fused into one rounding on a GPU host with FMA), so
// both builds give the same double. Accuracy: Cody-Waite reduction to |r| <= ln2/2 and a degree-13 Taylor polynomial, within 2 ulp of
// the true value over the range used (a few units of x); not a replacement for std::exp where bits need not match.
#pragma once
#include <cmath>

namespace moe {

inline double portable_exp(double x) {
    if (!(x == x)) return x;       // NaN
    if (x > 709.782712893384) return HUGE_VAL;  // ln(DBL_MAX)
    if (x < -745.0) return 0.0;
    constexpr double inv_ln2 = 1.4426950408889634;
    constexpr double ln2_hi = 6.93147180369123816490e-01;  // ln 2 split: hi has 32 significant bits, k * hi is exact
    constexpr double ln2_lo = 1.90821492927058770002e-10;
    const double k = std::floor(x * inv_ln2 + 0.5);
    const double r = (x - k * ln2_hi) - k * ln2_lo;
    double p = 1.0 / 6227020800.0;  // 1/13!
    constexpr double inv_fact[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0,
                                   1.0 / 5040.0,      1.0 / 720.0,      1.0 / 120.0,      1.0 / 24.0,      1.0 / 6.0,
                                   0.5,               1.0,              1.0};
    for (double c : inv_fact) p = p * r + c;  // Horner: 1/12! ... 1/1!, 1/0!
    return std::ldexp(p, int(k));
}

}  // namespace moe
