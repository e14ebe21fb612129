// tables_comm.cpp — collective lookups: measured all-reduce / all-gather / all-to-all latency over message size and GPU count.
#include "core/data/tables.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/kernels.h"
#include "core/data/tables_store.h"

namespace moe {
using namespace tables_detail;

CommHit Tables::collective(std::string_view family, std::string_view op, std::string_view impl, int gpus,
                           double bytes) const {
    CommHit h;
    const auto* list = bucket(int(Kind::comm), family);
    if (!list || gpus < 2 || !(bytes > 0)) return h;
    const Table* t = nullptr;
    for (const Table* x : *list)
        if (x->variant.size() == op.size() + 1 + impl.size() && x->variant.compare(0, op.size(), op) == 0 &&
            x->variant[op.size()] == '/' && x->variant.compare(op.size() + 1, std::string::npos, impl) == 0) {
            t = x;
            break;
        }
    if (!t || t->x1s.empty()) return h;
    // log latency over log bytes along one GPU count; exact = on a measured message size
    auto along = [&](const std::vector<Point>& pts, bool& exact) {
        exact = false;
        if (bytes >= pts.back().x) {  // past the largest message: its bandwidth
            exact = bytes == pts.back().x;
            return std::log(pts.back().lat * bytes / pts.back().x);
        }
        return interp_by(pts, bytes, exact, [](const Point& p) { return std::log(p.lat); });
    };
    const double g = gpus;
    const auto hi = std::lower_bound(t->x1s.begin(), t->x1s.end(), g);
    if (hi == t->x1s.end() || (*hi != g && hi == t->x1s.begin())) return h;  // outside the measured GPU counts
    const size_t i = size_t(hi - t->x1s.begin());
    bool exact = false;
    double log_lat;
    if (*hi == g) {
        log_lat = along(t->lines[i], exact);
    } else {
        bool e0, e1;
        const double l0 = along(t->lines[i - 1], e0), l1 = along(t->lines[i], e1);
        const double w = (std::log(g) - std::log(t->x1s[i - 1])) / (std::log(t->x1s[i]) - std::log(t->x1s[i - 1]));
        log_lat = l0 + w * (l1 - l0);
    }
    h.found = true;
    h.latency_us = std::exp(log_lat) * 1e6;
    h.source = exact ? Source::measured : Source::interpolated;
    h.table = t->path.c_str();
    return h;
}

}  // namespace moe
