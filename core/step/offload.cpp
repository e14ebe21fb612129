// offload.cpp — routed experts kept in a slower memory tier and streamed into HBM when selected (DESIGN §10,
// seed 003's caching tiers). Part of the step model; core/estimate_detail.h lists the files and what each computes.
//
// Popularity: the GPU's local experts follow a Zipf law of exponent `skew` (0: uniform). A token picks local
// expert i with probability pi_i = k * L / E * p_i (L local of E experts, top-k), capped at 1. The HBM cache holds
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
    p.expert_bytes = double(m.ffn_matrices) * m.hidden * (double(m.moe_intermediate) / c.moe_tp) * bytes_with_scales(c.w_exp);
    p.link_GBps = o.tier == OffloadTier::host ? c.g.host_bandwidth_GBps : c.g.ssd_bandwidth_GBps;
    double norm = 0;
    for (int i = 1; i <= local; ++i) norm += std::pow(double(i), -o.skew);
    const double scale = double(m.top_k) * local / std::max(1, m.num_experts);
    double hit = 0, all = 0;
    for (int i = 1; i <= local; ++i) {
        const double pi = std::min(1.0, scale * std::pow(double(i), -o.skew) / norm);
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
