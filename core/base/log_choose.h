// log_choose.h — the log of a binomial coefficient, for the counting laws of core/data (tile fill of a binomial row
// count) and core/step (group-limited routing on a mesh).
#pragma once
#include <cmath>

namespace moe {

// log C(n, k) for real n >= 0 (lgamma, no overflow); -infinity when k < 0 or k > n.
inline double log_choose(double n, double k) {
    if (k < 0 || k > n) return -INFINITY;
    return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

}  // namespace moe
