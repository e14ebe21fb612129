// topology.cpp — all-to-all on a mesh of chips, counted in link-hops (see topology.h; DESIGN §10, seed 004).
#include "core/step/topology.h"

#include "core/base/log_choose.h"

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
    x.experts = experts;
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

namespace {

// One column's view of a token's routing (MeshRouting): for a set of the column's chips, the probability that none of
// the token's experts is on them, and the law of how many of its experts the column holds.
class ColumnRouting {
public:
    ColumnRouting(const MeshRouting& r, int column) : n_(std::max(1, r.axis.n)) {
        const int N = std::max(1, r.experts), G = std::clamp(r.groups, 1, N), tg = std::clamp(r.topk_groups, 1, G);
        const long long chips = static_cast<long long>(std::max(1, r.columns)) * n_;
        pool_ = tg * (N / G);
        k_ = std::clamp(r.top_k, 0, pool_);
        std::vector<int> slot(size_t(G), -1);  // group -> index among the groups with experts in this column
        for (int e = 0; e < N; ++e) {
            const long long chip = e * chips / N;  // chip along the order of moe_expert_mapping.py
            if (chip / n_ != column) continue;
            const int g = int(static_cast<long long>(e) * G / N);
            if (slot[size_t(g)] < 0) {
                slot[size_t(g)] = int(w_.size());
                w_.emplace_back(size_t(n_), 0);
            }
            ++w_[size_t(slot[size_t(g)])][size_t(chip % n_)];
        }
        // P(a given number j of the column's m groups is among the chosen): C(m, j) C(G - m, tg - j) / C(G, tg),
        // split by which j below (the dynamic programme over groups counts the sets by their weight on the chips).
        const int m = int(w_.size());
        rest_.assign(size_t(m) + 1, 0.0);
        for (int j = 0; j <= m; ++j) rest_[size_t(j)] = std::exp(log_choose(G - m, tg - j) - log_choose(G, tg));
    }

    // Law of the chosen groups' expert count on `chips` (a subset of 0..n-1): weight -> probability.
    std::vector<double> weight_law(const std::vector<int>& chips) const {
        const int m = int(w_.size());
        std::vector<int> wg(size_t(m), 0);
        int total = 0;
        for (int i = 0; i < m; ++i) {
            for (int j : chips) wg[size_t(i)] += w_[size_t(i)][size_t(j)];
            total += wg[size_t(i)];
        }
        // ways[j][a]: sets of j of the column's groups with a experts on `chips`
        std::vector<std::vector<double>> ways(size_t(m) + 1, std::vector<double>(size_t(total) + 1, 0.0));
        ways[0][0] = 1;
        for (int i = 0; i < m; ++i)
            for (int j = i; j >= 0; --j)
                for (int a = total - wg[size_t(i)]; a >= 0; --a)
                    if (ways[size_t(j)][size_t(a)] > 0) ways[size_t(j) + 1][size_t(a + wg[size_t(i)])] += ways[size_t(j)][size_t(a)];
        std::vector<double> law(size_t(total) + 1, 0.0);
        for (int j = 0; j <= m; ++j)
            for (int a = 0; a <= total; ++a) law[size_t(a)] += ways[size_t(j)][size_t(a)] * rest_[size_t(j)];
        return law;
    }

    // P(no expert of the token on `chips`): k distinct experts drawn from a pool of which `a` sit on them.
    double none(const std::vector<int>& chips) const {
        const std::vector<double> law = weight_law(chips);
        double p = 0;
        for (size_t a = 0; a < law.size(); ++a) {
            if (law[a] <= 0) continue;
            double avoid = 1;
            for (int i = 0; i < k_ && avoid > 0; ++i) avoid *= std::max(0.0, double(pool_ - int(a) - i)) / double(pool_ - i);
            p += law[a] * avoid;
        }
        return p;
    }

    std::vector<double> pmf() const {
        std::vector<int> all(static_cast<size_t>(n_));
        for (int j = 0; j < n_; ++j) all[size_t(j)] = j;
        const std::vector<double> law = weight_law(all);
        std::vector<double> p(size_t(k_) + 1, 0.0);
        for (size_t a = 0; a < law.size(); ++a)
            for (int e = 0; e <= k_ && law[a] > 0; ++e)
                p[size_t(e)] += law[a] * std::exp(log_choose(double(a), e) + log_choose(pool_ - double(a), k_ - e) - log_choose(pool_, k_));
        return p;
    }

    int chips() const { return n_; }
    int top_k() const { return k_; }

private:
    int n_;
    int pool_ = 1, k_ = 0;
    std::vector<std::vector<int>> w_;  // [column group][chip] experts of that group on that chip
    std::vector<double> rest_;
};

}  // namespace

MeshExpectation mesh_expected_routed(const MeshRouting& r) {
    MeshExpectation x;
    const int cols = std::max(1, r.columns), n = std::max(1, r.axis.n);
    auto wrap = [n](int j) { return ((j % n) + n) % n; };
    for (int c = 0; c < cols; ++c) {
        const ColumnRouting col(r, c);
        std::vector<double> p_chip(static_cast<size_t>(n));  // P(chip j holds one of the token's experts)
        for (int j = 0; j < n; ++j) p_chip[size_t(j)] = 1.0 - col.none({j});
        double chips = 0;
        for (double p : p_chip) chips += p;
        x.token_chips += chips;
        x.chips += chips / cols;
        const std::vector<double> pmf = col.pmf();
        for (size_t e = 1; e < pmf.size(); ++e) x.experts += double(e) * pmf[e] / cols;
        for (int s = 0; s < n; ++s) {
            double hops = 0, back = 0;
            for (int j = 0; j < n; ++j) back += mesh_distance(r.axis, s, j) * p_chip[size_t(j)];
            auto run = [&](int from, int to, int step) {  // chips s + from*step .. s + to*step
                std::vector<int> set;
                for (int d = from; d <= to; ++d) set.push_back(wrap(s + d * step));
                return set;
            };
            if (r.axis.ring) {
                // E[walk one way] = sum_d P(a destination at offset >= d that way); with a destination on the far
                // chip (n even) each way goes on to it with half the token: + n/2 - (cw + ccw) / 2
                const int h = (n - 1) / 2;
                const bool even = n % 2 == 0;
                const std::vector<int> far = even ? std::vector<int>{wrap(s + n / 2)} : std::vector<int>{};
                const double none_far = even ? col.none(far) : 1.0;
                for (int step : {1, -1})
                    for (int d = 1; d <= h; ++d) {
                        std::vector<int> arc = run(d, h, step);
                        const double none_arc = col.none(arc);
                        hops += 1.0 - none_arc;
                        if (!even) continue;
                        arc.push_back(far[0]);
                        hops -= 0.5 * (1.0 - none_far - none_arc + col.none(arc));  // E[far and walk >= d]
                    }
                if (even) hops += n / 2.0 * (1.0 - none_far);
            } else {
                for (int d = 1; d <= n - 1 - s; ++d) hops += 1.0 - col.none(run(d, n - 1 - s, 1));
                for (int d = 1; d <= s; ++d) hops += 1.0 - col.none(run(d, s, -1));
            }
            x.dispatch_hops += hops / (double(n) * cols);
            x.combine_hops += back / (double(n) * cols);
        }
    }
    return x;
}

std::vector<double> mesh_column_experts_pmf(const MeshRouting& r) {
    const int cols = std::max(1, r.columns);
    std::vector<double> p;
    for (int c = 0; c < cols; ++c) {
        const std::vector<double> q = ColumnRouting(r, c).pmf();
        p.resize(std::max(p.size(), q.size()), 0.0);
        for (size_t e = 0; e < q.size(); ++e) p[e] += q[e] / cols;
    }
    return p;
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
// all-gather), experts over the ep chips in the order of moe_expert_mapping.py (MeshRouting); a chip dispatches
// along its column (ep / tp chips) the token's experts that live in that column. Their number and chips follow the
// model's routing: k distinct experts, inside topk_group of n_group groups when the gate is group-limited.
void mesh_ep_comm(const Ctx& c, Phase ph, double T, LayerOps& L) {
    const double h = c.m.expert_width();  // hidden, or LatentMoE's latent width (comm.cpp, ep_comm)
    MeshRouting r;
    r.experts = std::max(1, c.m.num_experts);
    r.top_k = std::max(1, c.m.top_k);
    r.groups = c.m.n_group;
    r.topk_groups = c.m.topk_group;
    r.columns = std::max(1, std::min(c.tp, c.ep));  // columns the experts are split over
    r.axis.n = std::max(1, c.ep / r.columns);
    r.axis.ring = c.g.mesh_ring && r.axis.n == c.g.mesh_rows;
    const MeshExpectation x = mesh_expected_routed(r);
    const double hops_d = x.dispatch_hops, hops_c = x.combine_hops, writes_d = x.experts, writes_c = x.chips;
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
