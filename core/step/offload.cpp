// offload.cpp — routed experts kept in a slower memory tier and streamed into HBM when selected (DESIGN §10,
// seed 003's caching tiers). Part of the step model; core/estimate_detail.h lists the files and what each computes.
//
// Popularity: the GPU's local experts follow a Zipf law of exponent `skew` (0: uniform). A token picks local
// expert i with probability pi_i = k * L / E * p_i (L local of E experts, top-k). A token picks an expert at most
// once, so pi_i is capped at 1, and the mass clipped off the hottest experts goes to the others in proportion to
// their weights (water-filling: the c hottest at 1, the rest (k L / E - c) w_i / sum_{j>c} w_j, c the fewest that
// keeps them all <= 1): every token still makes its k L / E local selections. The HBM cache holds
// the `cached_experts_per_layer` hottest; every other expert selected by at least one of the step's N tokens is
// streamed in once per layer (grouped execution: 1 - (1 - pi_i)^N of them), or once per token-expert pair
// (per-token execution: N * pi_i). Prefetch streams the next layer's experts under this layer's compute.
//
// Windowed membership (runtime.expert_offload.window_batches = W > 0; seed 003: "sliding window tracks usage over
// last 128 batches", the cache keeping the most selected). The cache counts each expert's selections over the last W
// batches of N tokens, n = W N token draws, and holds the C experts with the largest counts: expert i is cached with
// probability q_i = P(its count ranks in the top C) and the hit rate is sum pi_i q_i / sum pi_i (the oracle: q_i = 1
// for the C hottest). A token picks expert i at most once, so its count is Binomial(n, pi_i): mean n pi_i, variance
// n pi_i (1 - pi_i). The approximation, stated: each count is taken as normal and independent of the others (the
// multinomial's small negative covariances dropped), and the C-th largest count as a fixed threshold t (its own
// spread dropped) chosen so that the expected number of experts above it is C: sum_i Phi((n pi_i - t) / sd_i) = C,
// then q_i = Phi((n pi_i - t) / sd_i). So sum q_i = C exactly, equal popularities give q_i = C / L whatever W (the
// uniform hit rate C / L), and as n grows q_i tends to 1 for the C hottest and 0 for the others (the oracle). The
// experts every token picks (pi = 1, count n, the largest possible) are cached first. Checked against a simulation
// of the windowed cache in tests/unit/test_offload_window.cpp (within 0.5 points of hit rate at n >= 128). The cache
// membership of a step is fixed by earlier batches, so it is independent of the step's own selections: an uncached
// expert streams with the same 1 - (1 - pi_i)^N (grouped) or N pi_i (per token), weighted by 1 - q_i.
#include <vector>

#include "core/base/set_cache.h"
#include "core/step/estimate_detail.h"

namespace moe::detail {

namespace {

// The probability that each of the `local` experts is cached when membership follows the counts of n draws
// (above); pi sorted hottest first, `capped` of them at 1. Memoized per (pi's law, C, n): a solve costs ~60
// passes of an erfc over the experts, a step ~1 us.
const std::vector<double>& window_membership(const std::vector<double>& pi, int capped, int cached, double skew, double picks,
                                             double n) {
    struct Key {
        int local = 0, capped = 0, cached = 0;
        double skew = 0, picks = 0, n = 0;  // local, skew and picks fix pi (and capped)
        bool operator==(const Key& o) const {
            return local == o.local && capped == o.capped && cached == o.cached && skew == o.skew && picks == o.picks && n == o.n;
        }
    };
    thread_local SetCache<Key, std::vector<double>, 1, 4> memo;
    const int local = int(pi.size());
    const Key key{local, capped, cached, skew, picks, n};
    if (const std::vector<double>* q = memo.find(key)) return *q;
    std::vector<double>& q = memo.insert(key);
    q.assign(pi.size(), 0.0);
    const int sure = std::min(capped, cached);  // counted every draw: the largest counts
    for (int i = 0; i < sure; ++i) q[std::size_t(i)] = 1.0;
    const int slots = cached - sure;
    if (slots <= 0 || sure >= local) return q;
    auto sd_of = [&](int i) { return std::sqrt(n * pi[std::size_t(i)] * (1.0 - pi[std::size_t(i)])); };
    auto share = [&](int i, double t) {  // P(count_i > t), normal
        const double mu = n * pi[std::size_t(i)], sd = sd_of(i);
        if (sd > 0) return 0.5 * std::erfc((t - mu) / (sd * std::sqrt(2.0)));
        return mu > t ? 1.0 : mu < t ? 0.0 : 0.5;
    };
    // sum_i share(i, t) falls from (local - sure) to 0 as t rises: bisect for the t where it is `slots`, from a
    // bracket 10 standard deviations beyond every expert's mean count
    double lo = 0, hi = 0;
    for (int i = sure; i < local; ++i) {
        lo = std::min(lo, n * pi[std::size_t(i)] - 10 * sd_of(i) - 1);
        hi = std::max(hi, n * pi[std::size_t(i)] + 10 * sd_of(i) + 1);
    }
    for (int it = 0; it < 200 && hi - lo > 1e-9 * (1.0 + n); ++it) {
        const double t = 0.5 * (lo + hi);
        double above = 0;
        for (int i = sure; i < local; ++i) above += share(i, t);
        (above > slots ? lo : hi) = t;
    }
    const double t = 0.5 * (lo + hi);
    double sum = 0;
    for (int i = sure; i < local; ++i) sum += q[std::size_t(i)] = share(i, t);
    // the bisection's last bit of the threshold off: scale to exactly `slots` members (equal popularities: C / L each)
    if (sum > 0)
        for (int i = sure; i < local; ++i) q[std::size_t(i)] = std::min(1.0, q[std::size_t(i)] * slots / sum);
    return q;
}

}  // namespace

OffloadPlan offload_plan(const Ctx& c, double tokens_world) {
    OffloadPlan p;
    const ExpertOffloadConfig& o = c.s.runtime.expert_offload;
    const ModelSpec& m = c.m;
    if (o.tier == OffloadTier::none || !m.is_moe()) return p;
    p.on = true;
    const int local = std::max(1, (m.num_experts + c.s.routing.redundant_experts) / std::max(1, c.ep));
    p.local = local;
    p.cached = std::min(local, o.cached_experts_per_layer);
    p.expert_bytes = double(m.ffn_matrices) * m.expert_width() * (double(m.moe_intermediate) / c.moe_tp) * bytes_with_scales(c.w_exp);
    p.link_GBps = o.tier == OffloadTier::host ? c.g.host_bandwidth_GBps : c.g.ssd_bandwidth_GBps;
    double tail = 0;  // sum of the Zipf weights of the experts below the cap
    for (int i = 1; i <= local; ++i) tail += std::pow(double(i), -o.skew);
    // selections a token makes among the local experts (<= local, since top_k <= num_experts)
    const double picks = std::min(double(local), double(m.top_k) * local / std::max(1, m.num_experts));
    int capped = 0;  // the hottest experts every token picks (weights decrease in i: a prefix)
    while (capped < local && tail > 0) {
        const double w = std::pow(double(capped + 1), -o.skew);
        if ((picks - capped) * w / tail <= 1.0) break;
        tail -= w;
        ++capped;
    }
    auto pick_rate = [&](int i) {  // pi_i, i = 1 the hottest
        return i <= capped ? 1.0 : tail > 0 ? std::min(1.0, (picks - capped) * std::pow(double(i), -o.skew) / tail) : 0.0;
    };
    const std::vector<double>* in_cache = nullptr;  // q_i, windowed membership; null: the oracle's C hottest
    if (o.window_batches > 0 && p.cached > 0 && p.cached < local) {
        thread_local std::vector<double> pi;
        pi.resize(std::size_t(local));
        for (int i = 1; i <= local; ++i) pi[std::size_t(i - 1)] = pick_rate(i);
        in_cache = &window_membership(pi, capped, int(p.cached), o.skew, picks, double(o.window_batches) * tokens_world);
    }
    double hit = 0, all = 0;
    for (int i = 1; i <= local; ++i) {
        const double pi = pick_rate(i);
        const double q = in_cache ? (*in_cache)[std::size_t(i - 1)] : i <= p.cached ? 1.0 : 0.0;
        all += pi;
        hit += pi * q;
        p.miss_experts += (1.0 - q) * (1.0 - std::pow(1.0 - pi, tokens_world));
        p.miss_pairs += (1.0 - q) * tokens_world * pi;
    }
    p.hit_rate = all > 0 ? hit / all : 1.0;
    return p;
}

void offload_ops(const Ctx& c, Phase ph, double tokens_world, bool per_token, LayerOps& L) {
    const OffloadPlan p = offload_plan(c, tokens_world);
    if (!p.on) return;
    const double bytes = (per_token ? p.miss_pairs : p.miss_experts) * p.expert_bytes;
    OpRecord op = make_op("moe.expert_stream", ph, 0, 0, 0);
    op.comm_bytes = bytes;
    op.engine = Engine::host;
    op.bound = Bound::offload;
    op.efficiency = 1;
    op.source = Source::analytical;
    op.time_us = bytes > 0 ? bytes / (std::max(1e-9, p.link_GBps) * 1e9) * 1e6 : 0.0;
    L.stream_us += op.time_us;
    L.stream.push_back(op);
}

}  // namespace moe::detail
