// ops_attention.cpp — attention projections and the attention core of one layer (MHA / GQA / MLA, prefill and decode, sliding windows).
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
    L.pre.push_back(gemm_op(c, "attn.qkv_proj", ph, T, h, (Hr + 2.0 * Hkv) * d, c.w_attn));
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
    L.pre.push_back(gemm_op(c, "attn.o_proj", ph, T, Hr * d, h, c.w_attn));
}

}  // namespace moe::detail
