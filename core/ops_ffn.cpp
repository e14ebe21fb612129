// ops_ffn.cpp — dense FFN and shared experts, the router and the routed experts of one layer (seed 000 §4; seeds 001, 003, 004).
// Part of the step model; core/estimate_detail.h lists the files and what each computes.
#include "estimate_detail.h"

namespace moe::detail {

void dense_ffn_ops(const Ctx& c, Phase ph, double T, double inter, const char* up_name, const char* down_name,
                   Dtype w, std::vector<OpRecord>& out) {
    const double i_gpu = inter / c.tp;
    out.push_back(gemm_op(c, up_name, ph, T, c.m.hidden, 2.0 * i_gpu, w));
    out.push_back(gemm_op(c, down_name, ph, T, i_gpu, c.m.hidden, w));
}

// Routed experts on the busiest EP rank (seed 000 §4, with the lazy-loading floor of seeds 003/004 and the
// layouts of seed 001).
void expert_ops(const Ctx& c, Phase ph, double T, bool masked, LayerOps& L) {
    const ModelSpec& m = c.m;
    const double tokens_world = T * c.dp;  // distinct tokens entering the MoE across the EP group
    const double pairs = tokens_world * m.top_k / c.ep * c.s.routing.imbalance;
    const double local = double(m.num_experts + c.s.routing.redundant_experts) / c.ep;
    const double active = std::max(std::min(local, 1.0), kernels::expected_active_experts(local, m.top_k * local / m.num_experts, tokens_world));
    const double inter = double(m.moe_intermediate) / c.moe_tp;
    const Dtype comp = c.g.compute_dtype(c.w_exp);
    const double act_b = comp == Dtype::fp8 ? 1.0 : 2.0;

    // router (gate GEMM, replicated): T x h x E
    OpRecord router = make_op("moe.router", ph, 2.0 * T * m.hidden * m.num_experts, double(m.num_experts) * m.hidden * 2.0,
                              T * (m.hidden + m.num_experts) * 2.0);
    time_op(c, router, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
    L.pre.push_back(router);

    const bool per_token = c.s.runtime.expert_layout == ExpertLayout::per_token;
    if (!masked && !per_token) {
        // contiguous layout: permute tokens into expert order and back (read + write each way)
        L.post.push_back(memory_op(c, "moe.permute", ph, 2.0 * pairs * m.hidden * act_b));
    }
    kernels::Cost k = kernels::grouped_experts(pairs, active, m.hidden, inter, bytes_with_scales(c.w_exp), act_b);
    double wbytes = active * 3.0 * m.hidden * inter * bytes_with_scales(c.w_exp);
    const double acts = k.bytes - wbytes;
    // Per-token execution (seed 003's baseline): every token-expert pair loads its expert's weights itself.
    if (per_token) wbytes = pairs * 3.0 * m.hidden * inter * bytes_with_scales(c.w_exp);
    OpRecord op = make_op("moe.routed_experts", ph, k.flops, wbytes, acts);
    const double tokens_per_gpu = tokens_world / c.ep;
    TableHit hit = lookup(c, [&](const char* f) {
        return c.t.grouped_gemm(f, masked, m.num_experts, m.top_k, m.hidden, int(inter), c.ep, tokens_per_gpu);
    });
    // Analytical fallback: grouped-GEMM efficiency times the tile quantisation of each expert's rows to the
    // kernel's M tile (64 masked, 128 contiguous in DeepGEMM; the hardware's tile_tokens where it computes in fixed
    // tiles, 32 on Tensix): seed 004's stepwise compute. Per-token execution runs one row per call.
    const bool deepgemm = c.g.topology == Topology::switch_ || c.g.topology == Topology::rack;  // CUDA kernels
    const double tile = c.g.tile_tokens > 1 ? double(c.g.tile_tokens) : !deepgemm ? 1.0 : masked ? 64.0 : 128.0;
    const double per_expert = per_token ? 1.0 : pairs / std::max(1.0, active);
    const double tile_eff = per_expert / (std::ceil(per_expert / tile) * tile);
    const double eff = c.g.matmul_efficiency > 0 ? c.g.matmul_efficiency : c.cal.grouped_compute_eff;
    time_op(c, op, comp, hit, eff * tile_eff, c.cal.hbm_bw_eff);
    L.post.push_back(op);
    if (!masked && !per_token) L.post.push_back(memory_op(c, "moe.unpermute", ph, 2.0 * pairs * m.hidden * 2.0));
    offload_ops(c, ph, tokens_world, per_token, L);
}

}  // namespace moe::detail
