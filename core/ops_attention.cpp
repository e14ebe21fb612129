// ops_attention.cpp — attention projections and the attention core of one layer (MHA / GQA / MLA, prefill and decode,
// sliding windows), and the Gated DeltaNet linear-attention layer (projections, short conv, recurrent core).
// Part of the step model; core/estimate_detail.h lists the files and what each computes.
#include "estimate_detail.h"

namespace moe::detail {

void attention_ops(const Ctx& c, const PhaseShape& ps, int window, LayerOps& L) {
    const ModelSpec& m = c.m;
    const double T = ps.T, h = m.hidden;
    const double Hr = double(m.num_heads) / c.tp;  // heads per GPU
    const Phase ph = ps.phase;
    if (m.attn == AttnKind::mla) {
        const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
        if (m.q_lora_rank > 0) {
            // fused q_a + kv_a (replicated across TP ranks), then q_b (head-sharded)
            L.pre.push_back(gemm_op(c, "attn.qkv_a_proj", ph, T, h, m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim, c.w_attn));
            L.pre.push_back(gemm_op(c, "attn.q_b_proj", ph, T, m.q_lora_rank, Hr * qk, c.w_attn));
        } else {
            L.pre.push_back(gemm_op(c, "attn.q_proj", ph, T, h, Hr * qk, c.w_attn));
            L.pre.push_back(gemm_op(c, "attn.kv_a_proj", ph, T, h, m.kv_lora_rank + m.qk_rope_head_dim, c.w_attn));
        }
        const double kvb = dtype_bytes(c.kv);
        if (ph == Phase::decode) {
            // absorbed: q_nope x W_UK -> latent, attention over the latent cache, x W_UV -> v
            const double wb = 2.0;  // absorbed per-head matrices are kept in bf16
            OpRecord qk_op = make_op("attn.bmm_q_wk", ph, 2.0 * T * Hr * m.qk_nope_head_dim * m.kv_lora_rank,
                                     Hr * m.qk_nope_head_dim * m.kv_lora_rank * wb, T * Hr * (m.qk_nope_head_dim + m.kv_lora_rank) * 2.0);
            time_op(c, qk_op, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
            L.pre.push_back(qk_op);
            const double ctx = window > 0 ? std::min(ps.ctx, double(window)) : ps.ctx;
            const double q_per_seq = T / std::max(1.0, ps.batch);  // > 1 with MTP verification
            kernels::Cost a = kernels::mla_decode(ps.batch, ctx, Hr, m.kv_lora_rank, m.qk_rope_head_dim, kvb);
            OpRecord core = make_op("attn.core", ph, a.flops * q_per_seq, 0, a.bytes);
            TableHit hit = lookup(c, [&](const char* f) {
                return c.t.mla_decode(f, int(Hr * q_per_seq + 0.5), m.kv_lora_rank, m.qk_rope_head_dim, ps.batch, ctx,
                                      c.kv == Dtype::fp8);
            });
            time_op(c, core, Dtype::bf16, hit, c.cal.attn_prefill_compute_eff, c.cal.attn_decode_bw_eff);
            L.pre.push_back(core);
            OpRecord ov = make_op("attn.bmm_o_wv", ph, 2.0 * T * Hr * m.kv_lora_rank * m.v_head_dim,
                                  Hr * m.kv_lora_rank * m.v_head_dim * wb, T * Hr * (m.kv_lora_rank + m.v_head_dim) * 2.0);
            time_op(c, ov, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
            L.pre.push_back(ov);
        } else {
            // non-absorbed prefill: kv_b expands the latent to per-head k_nope and v
            L.pre.push_back(gemm_op(c, "attn.kv_b_proj", ph, T, m.kv_lora_rank, Hr * (m.qk_nope_head_dim + m.v_head_dim), c.w_attn));
            const double attended = kernels::causal_attended(ps.ctx, window);
            kernels::Cost a = kernels::mla_prefill(T, attended, Hr, qk, m.v_head_dim);
            OpRecord core = make_op("attn.core", ph, a.flops, 0, a.bytes);
            TableHit hit = lookup(c, [&](const char* f) {
                return c.t.mla_prefill(f, int(Hr), m.qk_nope_head_dim, m.qk_rope_head_dim, ps.ctx, ps.batch, window, c.g.sm_count);
            });
            time_op(c, core, Dtype::bf16, hit, c.cal.attn_prefill_compute_eff, c.cal.hbm_bw_eff);
            L.pre.push_back(core);
        }
        L.pre.push_back(gemm_op(c, "attn.o_proj", ph, T, Hr * m.v_head_dim, h, c.w_attn));
        return;
    }
    const double d = m.head_dim;
    const double Hkv = std::max(1.0, double(m.num_kv_heads) / c.tp);  // KV heads replicated when tp exceeds them
    if (m.o_lora_rank > 0) {
        // DeepSeek-V4: q latent and the shared KV head in one replicated GEMM, then q_b per head
        L.pre.push_back(gemm_op(c, "attn.q_a_kv_proj", ph, T, h, double(m.q_lora_rank) + d, c.w_attn));
        L.pre.push_back(gemm_op(c, "attn.q_b_proj", ph, T, m.q_lora_rank, Hr * d, c.w_attn));
    } else {
        const double q_heads = m.attn_output_gate ? 2.0 * Hr : Hr;  // the output gate comes out of q_proj
        L.pre.push_back(gemm_op(c, "attn.qkv_proj", ph, T, h, (q_heads + 2.0 * Hkv) * d, c.w_attn));
    }
    const double kvb = dtype_bytes(c.kv);
    if (ph == Phase::decode) {
        const double ctx = window > 0 ? std::min(ps.ctx, double(window)) : ps.ctx;
        const double q_per_seq = T / std::max(1.0, ps.batch);
        kernels::Cost a = kernels::mha_decode(ps.batch, ctx, Hr, Hkv, d, kvb);
        OpRecord core = make_op("attn.core", ph, a.flops * q_per_seq, 0, a.bytes);
        TableHit hit = lookup(c, [&](const char* f) {
            return c.t.mha_decode(f, int(Hr), int(Hkv), int(d), ps.batch, ctx, c.kv == Dtype::fp8);
        });
        time_op(c, core, Dtype::bf16, hit, c.cal.attn_prefill_compute_eff, c.cal.attn_decode_bw_eff);
        L.pre.push_back(core);
    } else {
        const double attended = kernels::causal_attended(ps.ctx, window);
        kernels::Cost a = kernels::mha_prefill(T, attended, Hr, Hkv, d, kvb);
        OpRecord core = make_op("attn.core", ph, a.flops, 0, a.bytes);
        TableHit hit = lookup(c, [&](const char* f) {
            return c.t.mha_prefill(f, int(Hr), int(Hkv), int(d), ps.ctx, ps.batch, window, c.g.sm_count);
        });
        time_op(c, core, Dtype::bf16, hit, c.cal.attn_prefill_compute_eff, c.cal.hbm_bw_eff);
        L.pre.push_back(core);
    }
    if (m.o_lora_rank > 0) {
        // grouped low-rank output: each local group maps its heads to o_lora_rank (one GEMM's worth of FLOPs and
        // weights), then wo_b maps the local groups to hidden (reduced over TP like o_proj)
        const double groups = std::max(1.0, double(m.o_groups) / c.tp);
        L.pre.push_back(gemm_op(c, "attn.wo_a", ph, T, Hr * d / groups, groups * m.o_lora_rank, c.w_attn));
        L.pre.push_back(gemm_op(c, "attn.wo_b", ph, T, groups * m.o_lora_rank, h, c.w_attn));
        return;
    }
    L.pre.push_back(gemm_op(c, "attn.o_proj", ph, T, Hr * d, h, c.w_attn));
}

// Gated DeltaNet (Qwen3-Next, Qwen3.5; Yang et al., "Gated Delta Networks"): per token, q/k/v/z and the b/a gates
// are projected, q/k/v pass a short causal conv, and each v head keeps a k_dim x v_dim state S updated by the gated
// delta rule S <- g S + beta k (v - g S^T k)^T and read as o = S^T q; the gated norm and out_proj follow.
// Heads are split over TP (replicated past their count). Every record here is analytical: bench_data/gdn holds
// one H20 shape only and the table loader does not read it (tests/unit compares these records with it).
void linear_attention_ops(const Ctx& c, const PhaseShape& ps, LayerOps& L) {
    const ModelSpec& m = c.m;
    const double T = ps.T, h = m.hidden, seqs = std::max(1.0, ps.batch);
    const Phase ph = ps.phase;
    const double kh = std::max(1.0, double(m.lin_num_k_heads) / c.tp), vh = std::max(1.0, double(m.lin_num_v_heads) / c.tp);
    const double dk = m.lin_k_head_dim, dv = m.lin_v_head_dim;
    const double Kd = kh * dk, Vd = vh * dv, conv_ch = 2.0 * Kd + Vd, K = m.lin_conv_kernel;
    const double act_b = 2.0, conv_state_b = dtype_bytes(m.dtype), state_b = dtype_bytes(m.lin_state_dtype);
    L.pre.push_back(gemm_op(c, "attn.gdn_in_proj", ph, T, h, 2.0 * Kd + 2.0 * Vd + 2.0 * vh, c.w_attn));
    // depthwise causal conv over q, k, v: streams them in and out; decode also reads and writes the conv state
    {
        double bytes = 2.0 * T * conv_ch * act_b + conv_ch * K * act_b;
        if (ph == Phase::decode) bytes += 2.0 * seqs * conv_ch * std::max(0.0, K - 1) * conv_state_b;
        OpRecord conv = make_op("attn.gdn_conv", ph, 2.0 * T * conv_ch * K, 0, bytes);
        time_op(c, conv, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
        L.pre.push_back(conv);
    }
    const double state_bytes = seqs * vh * dk * dv * state_b;        // one recurrent state per sequence
    const double qkvo_bytes = T * (2.0 * Kd + 2.0 * Vd) * act_b + T * 2.0 * vh * 4.0;  // q, k, v in, o out, g/beta fp32
    if (ph == Phase::decode) {
        // recurrent step: per token and v head, decay (1), S^T k (2), rank-1 update (2), S^T q (2) x dk x dv FLOPs;
        // the state is read and written once per step (memory-bound)
        OpRecord core = make_op("attn.gdn_core", ph, 7.0 * T * vh * dk * dv, 0, 2.0 * state_bytes + qkvo_bytes);
        time_op(c, core, Dtype::bf16, TableHit{}, c.cal.attn_prefill_compute_eff, c.cal.attn_decode_bw_eff);
        L.pre.push_back(core);
    } else {
        // chunked delta rule (chunks of C = 64 tokens, as FLA's kernels): per chunk and v head K K^T, Q K^T
        // (2 C^2 dk each), the WY factors W = A (beta K), U = A (beta V) (2 C^2 dk, 2 C^2 dv) after a triangular
        // solve (~2/3 C^3), intra-chunk output (2 C^2 dv), and against the carried state W S, Q S and the update
        // K^T V' (2 C dk dv each). The per-chunk states are written and read back once in bf16.
        const double C = 64.0;
        const double per_token = 6.0 * dk * dv + C * (6.0 * dk + 4.0 * dv) + 2.0 / 3.0 * C * C;
        const double chunk_states = 2.0 * std::ceil(T / C) * vh * dk * dv * 2.0;
        OpRecord core = make_op("attn.gdn_core", ph, per_token * T * vh, 0, qkvo_bytes + chunk_states + state_bytes);
        time_op(c, core, Dtype::bf16, TableHit{}, c.cal.attn_prefill_compute_eff, c.cal.hbm_bw_eff);
        L.pre.push_back(core);
    }
    L.pre.push_back(gemm_op(c, "attn.gdn_out_proj", ph, T, Vd, h, c.w_attn));
}

}  // namespace moe::detail
