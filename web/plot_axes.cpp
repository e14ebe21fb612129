// plot_axes.cpp — the chart helper's axes: limits fitted to the items, and the ticks (see plot_state.h).
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "plot_state.h"

namespace web::plot::detail {

namespace {
// ---- fitting and ticks -----------------------------------------------------------------------------------------
void extend(double& lo, double& hi, bool& any, double v, bool log) {
    if (!std::isfinite(v) || (log && v <= 0)) return;
    lo = any ? std::min(lo, v) : v;
    hi = any ? std::max(hi, v) : v;
    any = true;
}

}  // namespace

void fit_axis(int which) {
    AxisState& a = g.ax[which];
    if (which == 1 && categories()) {
        a.lo = a.tlo = double(g.categories.size()) - 0.5;
        a.hi = a.thi = -0.5;
        return;
    }
    if (!a.fixed) {
        double lo = 0, hi = 1;
        bool any = false;
        for (const Item& it : g.items) {
            if (it.flags & ItemFlags_NoFit) continue;
            switch (it.kind) {
                case Kind::line:
                case Kind::scatter:
                    // only points that will be drawn (both coordinates finite, positive on a log axis)
                    for (std::size_t k = 0; k < it.xs.size(); ++k) {
                        const double x = it.xs[k], y = it.ys[k];
                        if (!std::isfinite(x) || !std::isfinite(y)) continue;
                        if ((g.ax[0].log() && x <= 0) || (g.ax[1].log() && y <= 0)) continue;
                        extend(lo, hi, any, which == 0 ? x : y, a.log());
                    }
                    break;
                case Kind::rect:
                case Kind::segment:
                case Kind::marker:
                    extend(lo, hi, any, which == 0 ? it.x0 : it.y0, a.log());
                    if (it.kind != Kind::marker) extend(lo, hi, any, which == 0 ? it.x1 : it.y1, a.log());
                    break;
                case Kind::hline:
                    if (which == 1) extend(lo, hi, any, it.y0, a.log());
                    break;
                case Kind::vline:
                    if (which == 0) extend(lo, hi, any, it.x0, a.log());
                    break;
                case Kind::band:  // drawn where the series it surrounds is: no say in the limits
                    break;
            }
        }
        if (!any) {
            lo = a.log() ? 1 : 0;
            hi = a.log() ? 10 : 1;
        }
        if (a.log()) {
            double tl = std::log10(lo), th = std::log10(hi);
            if (th - tl < 1e-9) { tl -= 0.5; th += 0.5; }
            const double pad = (th - tl) * 0.05;
            a.tlo = tl - pad;
            a.thi = th + pad;
            a.lo = std::pow(10.0, a.tlo);
            a.hi = std::pow(10.0, a.thi);
            return;
        }
        if ((a.flags & AxisFlags_ZeroMin) && lo >= 0) lo = 0;
        double span = hi - lo;
        if (span <= 0) span = std::fabs(hi) > 0 ? std::fabs(hi) * 0.5 : 1;
        if (!((a.flags & AxisFlags_ZeroMin) && lo == 0)) lo -= span * 0.05;
        hi += span * 0.06;
        if (hi <= lo) hi = lo + 1;
        a.lo = lo;
        a.hi = hi;
    }
    a.tlo = a.t(a.lo);
    a.thi = a.t(a.hi);
    if (!std::isfinite(a.tlo) || !std::isfinite(a.thi) || a.thi <= a.tlo) {
        a.tlo = a.log() ? 0 : a.lo;
        a.thi = a.tlo + 1;
    }
}


std::vector<Tick> ticks_for(const AxisState& a, float length_px, float min_spacing_px) {
    std::vector<Tick> out;
    int max_ticks = std::max(2, static_cast<int>(length_px / min_spacing_px));
    if (a.log()) {
        max_ticks = std::max(2, static_cast<int>(length_px / (min_spacing_px * 0.6f)));
        const int d0 = static_cast<int>(std::floor(a.tlo)), d1 = static_cast<int>(std::ceil(a.thi));
        const int decades = std::max(1, d1 - d0);
        int step = 1;
        while (decades / step > max_ticks) ++step;
        const bool subs = decades <= 2 && max_ticks >= 3 * decades;
        for (int d = d0; d <= d1; ++d) {
            const double base = std::pow(10.0, d);
            if ((d % step) == 0 && base >= a.lo * 0.999 && base <= a.hi * 1.001) out.push_back({base, true});
            if (decades <= 6) {
                for (int m = 2; m <= 9; ++m) {
                    const double v = base * m;
                    if (v < a.lo || v > a.hi) continue;
                    out.push_back({v, subs && (m == 2 || m == 5)});
                }
            }
        }
        return out;
    }
    const double span = a.hi - a.lo;
    const double raw = span / max_ticks;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double norm = raw / mag;
    const double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
    for (double v = std::ceil(a.lo / step) * step; v <= a.hi + step * 1e-9; v += step) {
        out.push_back({std::fabs(v) < step * 1e-9 ? 0.0 : v, true});
    }
    return out;
}

}  // namespace web::plot::detail
