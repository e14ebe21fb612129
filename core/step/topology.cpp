// topology.cpp — all-to-all on a mesh of chips, counted in link-hops (see topology.h; DESIGN §10, seed 004).
#include "core/step/topology.h"

#include <algorithm>
#include <cmath>

namespace moe {

int mesh_distance(const MeshAxis& axis, int a, int b) {
    const int d = std::abs(a - b);
    return axis.ring ? std::min(d, axis.n - d) : d;
}

double mesh_dispatch_hops(const MeshAxis& axis, int src, const std::vector<int>& targets) {
    const int n = std::max(1, axis.n);
    if (!axis.ring) {
        int right = 0, left = 0;
        for (int t : targets) {
            if (t > src) right = std::max(right, t - src);
            if (t < src) left = std::max(left, src - t);
        }
        return right + left;  // passed along towards each end
    }
    // ring: clockwise offsets below n/2 go one way, above the other; the far side (n even) is split
    int cw = 0, ccw = 0;
    bool far = false;
    for (int t : targets) {
        const int off = ((t - src) % n + n) % n;
        if (off == 0) continue;
        if (2 * off < n) cw = std::max(cw, off);
        else if (2 * off > n) ccw = std::max(ccw, n - off);
        else far = true;
    }
    double hops = cw + ccw;
    // both directions continue to the far chip, each with half of the token
    if (far) hops += 0.5 * (n / 2.0 - cw) + 0.5 * (n / 2.0 - ccw);
    return hops;
}

double mesh_combine_hops(const MeshAxis& axis, int src, const std::vector<int>& targets) {
    std::vector<int> chips(targets);
    std::sort(chips.begin(), chips.end());
    chips.erase(std::unique(chips.begin(), chips.end()), chips.end());
    double hops = 0;
    for (int t : chips) hops += mesh_distance(axis, src, t);
    return hops;
}

MeshExpectation mesh_expected(const MeshAxis& axis, double experts) {
    MeshExpectation x;
    const int n = std::max(1, axis.n);
    if (!(experts > 0)) return x;
    // P(no expert on a given set of m chips) when each expert picks a chip uniformly: (1 - m/n)^experts
    auto none = [&](double m) { return std::pow(std::max(0.0, 1.0 - m / n), experts); };
    const double p_chip = 1.0 - none(1);
    x.chips = n * p_chip;
    double dist_sum = 0;  // sum over chips of their distance from one source (the same for every source on a ring)
    if (axis.ring) {
        const int h = (n - 1) / 2;  // chips on each side, short of the far one
        double far_one = 0, far_and_opp = 0;
        for (int m = 1; m <= h; ++m) {
            far_one += 1.0 - none(m);                       // E[walk one way] = sum_d P(a destination at >= d)
            far_and_opp += 1.0 - none(m) - none(1) + none(m + 1);  // ... and the far chip is a destination
        }
        const bool even = n % 2 == 0;
        x.dispatch_hops = 2.0 * far_one + (even ? p_chip * n / 2.0 - far_and_opp : 0.0);
        for (int j = 1; j < n; ++j) dist_sum += mesh_distance(axis, 0, j);
        x.combine_hops = dist_sum * p_chip;
        return x;
    }
    // line: average over the source position
    double walk = 0;
    for (int s = 0; s < n; ++s) {
        for (int m = 1; m <= n - 1 - s; ++m) walk += 1.0 - none(m);
        for (int m = 1; m <= s; ++m) walk += 1.0 - none(m);
        for (int j = 0; j < n; ++j) dist_sum += std::abs(j - s);
    }
    x.dispatch_hops = walk / n;
    x.combine_hops = dist_sum / n * p_chip;
    return x;
}

double mesh_a2a_us(const GpuSpec& g, const Calibration& cal, double tokens, double token_bytes, double hops, double writes) {
    const double link = std::max(1e-9, g.neighbour_GBps() * 1e9 * cal.mesh_link_eff);
    const double mem = std::max(1e-9, g.hbm_bandwidth_GBps * 1e9 * cal.mesh_write_eff);
    const double bytes = tokens * token_bytes;
    return cal.mesh_latency_us + (bytes * hops / link + bytes * writes / mem) * 1e6;
}

}  // namespace moe

// ---- the step model's use of it (not public: core/estimate_detail.h) ----------------------------------------
#include "core/step/estimate_detail.h"

namespace moe::detail {

// TP all-reduce along the mesh's other axis (seed 004: all-gather and reduce-scatter across the columns): ring
// all-reduce over the links to the neighbours, both directions on a ring, one on a line.
OpRecord mesh_allreduce_op(const Ctx& c, const char* name, Phase ph, double T, int n) {
    const double bytes = 2.0 * (n - 1) / n * T * c.m.hidden * 2.0;
    const bool ring = c.g.mesh_ring && n == c.g.mesh_cols;
    const double link = c.g.neighbour_GBps() * 1e9 * c.cal.mesh_link_eff * (ring ? 2.0 : 1.0);
    const double us = c.cal.mesh_latency_us + bytes / std::max(1e-9, link) * 1e6;
    OpRecord op = comm_op(name, ph, bytes, Engine::mesh, us);
    op.efficiency = c.cal.mesh_link_eff;
    op.hops = n > 1 ? double(n - 1) : 0.0;
    return op;
}

// Seed 004's layout: attention TP across the columns (each token is on every chip of its row after the
// all-gather), experts over the ep chips; a chip dispatches along its column (ep / tp chips) the token's experts
// that live in that column, Binomial(k, 1/tp) of them.
void mesh_ep_comm(const Ctx& c, Phase ph, double T, LayerOps& L) {
    const double h = c.m.expert_width();  // hidden, or LatentMoE's latent width (comm.cpp, ep_comm)
    const int k = std::max(1, c.m.top_k);
    const int across = std::max(1, std::min(c.tp, c.ep));  // columns the experts are split over
    MeshAxis axis;
    axis.n = std::max(1, c.ep / across);
    axis.ring = c.g.mesh_ring && axis.n == c.g.mesh_rows;
    const double p = 1.0 / across;
    double hops_d = 0, hops_c = 0, writes_d = 0, writes_c = 0, binom = std::pow(1.0 - p, k);
    for (int e = 0; e <= k; ++e) {
        if (e > 0) binom *= (p >= 1.0 ? 0.0 : double(k - e + 1) / e * p / (1.0 - p));
        const double w = p >= 1.0 ? (e == k ? 1.0 : 0.0) : binom;
        if (e == 0 || w <= 0) continue;
        const MeshExpectation x = mesh_expected(axis, e);
        hops_d += w * x.dispatch_hops;
        hops_c += w * x.combine_hops;
        writes_d += w * e;
        writes_c += w * x.chips;
    }
    const double db = dtype_bytes(c.disp) + (c.disp == Dtype::fp8 ? 4.0 / 128.0 : 0.0), cb = dtype_bytes(c.comb);
    L.dispatch_us = mesh_a2a_us(c.g, c.cal, T, h * db, hops_d, writes_d);
    L.combine_us = mesh_a2a_us(c.g, c.cal, T, h * cb, hops_c, writes_c);
    OpRecord d = comm_op("comm.dispatch", ph, T * h * db * hops_d, Engine::mesh, L.dispatch_us);
    OpRecord cm = comm_op("comm.combine", ph, T * h * cb * hops_c, Engine::mesh, L.combine_us);
    d.hops = hops_d;
    cm.hops = hops_c;
    d.efficiency = cm.efficiency = c.cal.mesh_link_eff;
    L.comm.push_back(d);
    L.comm.push_back(cm);
}

}  // namespace moe::detail
