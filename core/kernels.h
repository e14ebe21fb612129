// kernels.h — FLOP and byte counts of the kernels we cost, shared by the table loader (to turn a measured
// latency into a fraction of the roofline) and the estimator (to cost the same kernel on another GPU/shape).
// Keeping one formula for both is what makes "measured on this GPU at this shape" reproduce the measurement.
#pragma once
#include <algorithm>
#include <cmath>

namespace moe::kernels {

struct Cost {
    double flops = 0;
    double bytes = 0;
};

// Dense GEMM (M x K) * (K x N), inputs of `in_bytes` per element, bf16 output.
inline Cost gemm(double m, double k, double n, double in_bytes, double weight_bytes) {
    return {2.0 * m * k * n, m * k * in_bytes + k * n * weight_bytes + m * n * 2.0};
}

// Expected number of distinct experts (of `experts`) hit by `tokens` tokens each choosing `top_k` distinct experts
// uniformly: experts * (1 - (1 - k/E)^tokens) (seed 004 / seed 003 lazy expert loading).
inline double expected_active_experts(double experts, double top_k, double tokens) {
    if (experts <= 0 || tokens <= 0) return 0;
    const double p_miss = std::max(0.0, 1.0 - top_k / experts);
    return experts * (1.0 - std::pow(p_miss, tokens));
}

// Expected distinct units (nodes or GPUs, `units` of them holding the experts in order) a token reaches when it
// picks `selected` of `groups` expert groups (node-limited routing, DeepSeek's n_group/topk_group) and then `k`
// experts spread over the selected groups, each selected group receiving at least one.
inline double distinct_units(double units, double groups, double selected, double k) {
    if (units <= 1) return 1.0;
    if (groups <= 1 || selected >= groups) return units * (1.0 - std::pow(1.0 - 1.0 / units, k));
    if (units <= groups) {
        // each unit holds groups/units groups: P(unit holds none of the selected) = C(G - G/U, g) / C(G, g)
        const double per = groups / units;
        double p_none = 1.0;
        for (int j = 0; j < int(selected); ++j) p_none *= std::max(0.0, (groups - per - j)) / (groups - j);
        return units * (1.0 - p_none);
    }
    // each group spans units/groups units: the k experts land among selected * units/groups candidates
    const double m = selected * units / groups;
    return m * (1.0 - std::pow(1.0 - 1.0 / m, k));
}

// Routed experts on one GPU: `pairs` token-expert pairs over `active_local` loaded experts, SwiGLU (gate+up, down),
// each expert's intermediate `inter` (already divided by moe_tp). Weight bytes include scale overheads.
inline Cost grouped_experts(double pairs, double active_local, double hidden, double inter, double weight_bytes_per_param,
                            double act_bytes) {
    const double flops = 6.0 * pairs * hidden * inter;
    const double weights = active_local * 3.0 * hidden * inter * weight_bytes_per_param;
    const double acts = pairs * (hidden * act_bytes + 2.0 * inter * 2.0 + inter * act_bytes + hidden * 2.0);
    return {flops, weights + acts};
}

// Decode attention over a KV cache: batch b, kv length L, heads h, kv heads hk, head dim d.
inline Cost mha_decode(double b, double L, double h, double hk, double d, double kv_bytes) {
    return {4.0 * b * h * d * L, b * L * 2.0 * hk * d * kv_bytes + b * h * d * 4.0};
}
// Causal prefill attention: `seqs` sequences, `q` new tokens each, attending on average to `attended` keys.
inline Cost mha_prefill(double tokens, double attended, double h, double hk, double d, double kv_bytes) {
    return {4.0 * tokens * h * d * attended, tokens * (h + 2.0 * hk) * d * 2.0 + tokens * h * d * 2.0 + 0.0 * kv_bytes};
}
// Absorbed MLA decode: per token 2*H*L*(kv_lora + rope) for QK and 2*H*L*kv_lora for PV; reads the latent cache.
inline Cost mla_decode(double b, double L, double h, double kv_lora, double rope, double kv_bytes) {
    return {b * (2.0 * h * (kv_lora + rope) * L + 2.0 * h * kv_lora * L), b * L * (kv_lora + rope) * kv_bytes};
}
// Non-absorbed MLA prefill (FlashAttention with qk = nope+rope, v = v_dim), `attended` keys per query on average.
inline Cost mla_prefill(double tokens, double attended, double h, double qk, double v) {
    return {tokens * attended * (2.0 * h * qk + 2.0 * h * v), tokens * h * (2.0 * qk + 2.0 * v) * 2.0};
}

// Average keys attended per query over a causal prompt of length p with window w (0 = full):
// (1/p) * sum_{x<p} min(x, w)  =  p/2 without a window, w - w^2/(2p) when p > w.
inline double causal_attended(double p, double w) {
    if (w <= 0 || p <= w) return p / 2.0;
    return w - w * w / (2.0 * p);
}

// FlashAttention's causal forward as tiles (FA2/FA3 schedule): each CTA owns a kTile-row query block of one head of
// one sequence and walks the kTile-wide KV blocks it attends to (the diagonal block half masked). Each CTA also pays
// a fixed cost of `fixed_iters` KV-block iterations (load Q, write O, pipeline fill and drain). CTAs spread over `sms`
// SMs; the kernel lasts at least its longest CTA. Returns the useful share of the SM time spent: 1 for long prompts,
// far less for short ones (the diagonal and the fixed cost dominate) and for few heads x sequences (idle SMs).
// `window` > 0 limits every query to the last `window` keys (sliding-window layers).
inline double flash_tile_efficiency(double seqs, double heads, double s, double window, double fixed_iters, double sms) {
    constexpr double kTile = 128;
    if (seqs <= 0 || heads <= 0 || s <= 0 || sms <= 0) return 1.0;
    const double nq = std::ceil(s / kTile);
    double visits, longest;  // KV blocks visited by the query blocks of one head of one sequence; by the last one
    if (window > 0 && window < s) {
        const double nw = std::ceil(window / kTile) + 1;  // a window straddles one more block
        visits = nq <= nw ? nq * (nq + 1) / 2 : nw * (nw + 1) / 2 + (nq - nw) * nw;
        longest = std::min(nq, nw);
    } else {
        visits = nq * (nq + 1) / 2;
        longest = nq;
    }
    const double slots = seqs * heads * (nq * fixed_iters + visits);           // block-iterations of SM time
    const double span = std::max(slots / sms, longest + fixed_iters);          // per SM, in the same units
    const double useful = seqs * heads * s * causal_attended(s, window) / (kTile * kTile);
    return std::clamp(useful / (span * sms), 1e-6, 1.0);
}

// Head-dim effect on an attention kernel's efficiency: per attention score the tensor cores do 4*d FLOPs while the
// softmax costs a fixed `softmax_exp` exponentials' worth of special-function time not hidden under the matmuls
// (FA3: H100 has 989 TFLOPS of matmul but 3.9 TFLOPS of exp). Moving a table measured at head dim d_table to a
// smaller d scales its efficiency by (1 + r(d_table)) / (1 + r(d)), r(d) = softmax_exp * (mma / sfu) / (4 d).
// Larger head dims are not credited with a gain: their kernels use smaller KV tiles (register pressure), which no
// public table quantifies.
inline double head_dim_factor(double d, double d_table, double mma_tflops, double sfu_tflops, double softmax_exp) {
    if (d <= 0 || d_table <= 0 || d >= d_table || sfu_tflops <= 0 || softmax_exp <= 0) return 1.0;
    const double ratio = softmax_exp * mma_tflops / sfu_tflops / 4.0;
    return (1.0 + ratio / d_table) / (1.0 + ratio / d);
}

// A dense GEMM as DeepGEMM tiles it (BLOCK_M 64 when m <= 64 else 128; BLOCK_N in 16..128, step 8, chosen for the
// fewest waves over the SMs, then the fullest last wave; BLOCK_K 128). Each output tile walks ceil(k/128)
// k-iterations plus a fixed cost of `fixed_iters` iterations (TMA pipeline fill and drain, scale loads, the BF16
// output epilogue). Compute-bound, the kernel also loses its last partial wave; memory-bound, only the fill
// fraction matters (few CTAs are still streaming by the last wave). Returns the useful share: used to move a
// measured shape's efficiency to a shape the tables lack (K = 512 has 4 k-iterations per tile, K = 1536 twelve).
inline double gemm_tile_efficiency(double m, double n, double k, double fixed_iters, double sms, bool compute_bound) {
    if (m <= 0 || n <= 0 || k <= 0 || sms <= 0) return 1.0;
    const double kit = std::ceil(k / 128.0);
    if (!compute_bound) return kit / (kit + fixed_iters);
    const double bm = m <= 64 ? 64 : 128;
    double best_waves = 0, best_last = 0, best_bn = 128;
    for (int bn = 16; bn <= 128; bn += 8) {
        const double tiles = std::ceil(m / bm) * std::ceil(n / bn);
        const double waves = std::ceil(tiles / sms);
        const double last = tiles - (waves - 1) * sms;
        if (best_waves == 0 || waves < best_waves || (waves == best_waves && last > best_last)) {
            best_waves = waves;
            best_last = last;
            best_bn = bn;
        }
    }
    const double useful = m * n * k / (bm * best_bn * 128.0);  // tile-iterations of useful work
    return std::clamp(useful / (sms * best_waves * (kit + fixed_iters)), 1e-6, 1.0);
}

}  // namespace moe::kernels
