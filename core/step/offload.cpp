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
#include "core/step/estimate_detail.h"

namespace moe::detail {

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
    double hit = 0, all = 0;
    for (int i = 1; i <= local; ++i) {
        const double pi =
            i <= capped ? 1.0 : tail > 0 ? std::min(1.0, (picks - capped) * std::pow(double(i), -o.skew) / tail) : 0.0;
        all += pi;
        if (i <= p.cached) {
            hit += pi;
            continue;
        }
        p.miss_experts += 1.0 - std::pow(1.0 - pi, tokens_world);
        p.miss_pairs += tokens_world * pi;
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
