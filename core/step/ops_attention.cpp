// ops_attention.cpp — attention projections and the attention core of one layer (MHA / GQA / MLA, prefill and decode,
// sliding windows, Gemma-4's global layers; DSA sparse attention with its lightning indexer; MiniMax-M3's
// block-sparse attention and its indexer; DeepSeek-V4's compressed CSA / HCA attention;
// context parallelism and a cached prefix), and the Gated DeltaNet linear-attention layer (projections, short conv,
// recurrent core). The formulas are in docs/attention.md.
// Part of the step model; core/estimate_detail.h lists the files and what each computes.
#include "core/step/estimate_detail.h"

namespace moe::detail {

namespace {

// The compute fraction of a softmax-attention core without a table: the GPU's own (GpuSpec::attn_efficiency, from
// its prefill-attention tables) or the calibration's. Indexers, linear-attention and Mamba scans keep the calibration's
// (other kernels than FlashAttention's).
double attn_eff(const Ctx& c) { return c.g.attn_compute_eff_or(c.cal.attn_prefill_compute_eff); }

// Per-GPU view of a softmax-attention layer under context parallelism (cp ranks inside the TP group): heads are
// split over tp / cp; a prefill chunk's queries over cp (each attends to every key, the chunk's KV is all-gathered);
// in decode every rank holds 1/cp of each sequence's keys and sees every query.
struct AttnShape {
    double T;        // query tokens on this GPU
    double Hr;       // query heads on this GPU
    double key_div;  // keys of a sequence a decode step reads on this GPU = keys / key_div
    double seqs;     // sequences (decode) / prompts in the chunk (prefill)
    double lo, hi;   // prefill: the computed positions of each prompt [cached, prompt); decode: hi = KV length
};

// Heads DSA's sparse prefill kernel computes for `Hr` query heads on this GPU. FlashMLA's sparse kernels take 64
// heads (Hopper) or 128 (Blackwell and later) per query; with fewer, the engines pad the query with zero heads, and
// the kernel's compute is that of the padded count:
//  - SGLang, NSA backend (nsa_backend.py, `_forward_flashmla_sparse`): pads to 64 on SM90, 128 on SM100+;
//  - vLLM, FlashMLA-sparse backend (v1/attention/backends/mla/flashmla_sparse.py): with fewer than 32 heads a rank
//    (MIN_HEADS_FOR_BF16_PREFILL) it runs prefill tokens through the FP8 decode kernel, padded to 64; from 32 heads
//    the BF16 prefill kernel, padded to the arch's tile.
// TensorRT-LLM runs its own sparse MLA kernels (no padding rule verified) and the ideal engine pads nothing; AMD and
// other GPUs do not run FlashMLA.
double sparse_kernel_heads(const Ctx& c, double Hr) {
    const EngineKind e = c.s.runtime.engine;
    if (e != EngineKind::sglang && e != EngineKind::vllm) return Hr;
    const bool hopper = c.g.arch == "hopper", later = c.g.arch == "blackwell" || c.g.arch == "rubin";
    if (!hopper && !later) return Hr;
    double tile = hopper ? 64.0 : 128.0;
    if (e == EngineKind::vllm && Hr < 32.0) tile = 64.0;
    return std::ceil(Hr / tile) * tile;
}

AttnShape attn_shape(const Ctx& c, const PhaseShape& ps) {
    const double cp = c.cp, attn_tp = double(c.tp) / cp;
    AttnShape a;
    a.Hr = double(c.m.num_heads) / attn_tp;
    a.T = ps.phase == Phase::prefill ? ps.T / cp : ps.T;
    a.key_div = ps.phase == Phase::decode ? cp : 1.0;
    a.seqs = std::max(1.0, ps.batch);
    a.lo = ps.phase == Phase::prefill ? ps.cached : 0.0;
    a.hi = ps.ctx;
    return a;
}

// Average keys (one per `r` tokens, at most `cap`, 0 = no cap) a prefill query attends to over the computed
// positions. Without a cached prefix and with r = 1 it is exactly kernels::causal_attended.
double prefill_keys(const AttnShape& a, double r, double cap) {
    if (a.lo <= 0 && r == 1.0) return kernels::causal_attended(a.hi, cap);
    return kernels::mean_keys(a.lo, a.hi, r, cap);
}

// The lightning indexer's scoring (DSA: over every cached token; DeepSeek-V4 CSA: over the compressed entries):
// per query and key, index_n_heads x index_head_dim multiply-adds in FP8, reading the indexer's key cache
// (`key_bytes` per key) and writing then reading back an FP32 logit per key for the top-k selection.
void indexer_core(const Ctx& c, Phase ph, const AttnShape& a, double keys_per_query, double keys_per_seq,
                  double key_bytes, LayerOps& L) {
    const ModelSpec& m = c.m;
    const double flops = 2.0 * a.T * m.index_n_heads * m.index_head_dim * keys_per_query;
    const double bytes = a.seqs * keys_per_seq * key_bytes + 2.0 * a.T * keys_per_query * 4.0 +
                         a.T * m.index_n_heads * m.index_head_dim * 1.0;
    OpRecord op = make_op("attn.indexer", ph, flops, 0, bytes);
    time_op(c, op, Dtype::fp8, TableHit{}, c.cal.attn_prefill_compute_eff, ph == Phase::decode ? c.cal.attn_decode_bw_eff : c.cal.hbm_bw_eff);
    L.pre.push_back(op);
}

// MiniMax-M3's block-sparse indexer (MiniMax Sparse Attention): per query, each of the `heads` index heads on this GPU
// scores `keys_per_query` cached index keys (index_head_dim multiply-adds each, BF16 tensor cores) and max-pools the
// scores over blocks of sparse_block_size; it reads the sequence's index keys (`keys_per_seq`, in the model's dtype)
// and its index queries, and writes then reads back one FP32 score per index head and block for the top-k selection.
void block_sparse_indexer(const Ctx& c, Phase ph, const AttnShape& a, double heads, double keys_per_query,
                          double keys_per_seq, LayerOps& L) {
    const ModelSpec& m = c.m;
    const double flops = 2.0 * a.T * heads * m.index_head_dim * keys_per_query;
    const double blocks = std::ceil(keys_per_query / m.sparse_block_size);
    const double bytes = a.seqs * keys_per_seq * m.sparse_index_bytes_per_token_layer() +
                         2.0 * a.T * heads * blocks * 4.0 + a.T * heads * m.index_head_dim * 2.0;
    OpRecord op = make_op("attn.indexer", ph, flops, 0, bytes);
    time_op(c, op, Dtype::bf16, TableHit{}, c.cal.attn_prefill_compute_eff, ph == Phase::decode ? c.cal.attn_decode_bw_eff : c.cal.hbm_bw_eff);
    L.pre.push_back(op);
}

// The indexer's projections, replicated on every TP rank: its queries from the q latent (wq_b), and the per-head
// weights (plus, for DSA, its key wk) from the hidden state. DSA's key and weights are two linears (SGLang's
// nsa_indexer.py: `wk` and `weights_proj`, each a ReplicatedLinear), so two GEMMs; DeepSeek-V4's CSA has the weights
// only (its keys come from the compressor).
void indexer_projections(const Ctx& c, Phase ph, double T, bool with_key, LayerOps& L) {
    const ModelSpec& m = c.m;
    L.pre.push_back(gemm_op(c, "attn.indexer_q_proj", ph, T, m.q_lora_rank > 0 ? m.q_lora_rank : m.hidden,
                            double(m.index_n_heads) * m.index_head_dim, c.w_attn));
    if (!with_key) {
        L.pre.push_back(gemm_op(c, "attn.indexer_k_proj", ph, T, m.hidden, double(m.index_n_heads), c.w_attn));
        return;
    }
    L.pre.push_back(gemm_op(c, "attn.indexer_k_proj", ph, T, m.hidden, double(m.index_head_dim), c.w_attn));
    L.pre.push_back(gemm_op(c, "attn.indexer_weights_proj", ph, T, m.hidden, double(m.index_n_heads), c.w_attn));
    // Between the projections and the scoring, DSA's indexer runs ten elementwise kernels on its queries and key
    // (SGLang's nsa_indexer.py, _get_q_k_bf16 and the forward after it): the key's LayerNorm (k_norm), the rotary
    // embedding of the query and key rope parts, the two copies of those parts back into the query and key, the
    // Hadamard rotation of each (rotate_activation), the FP8 quantisation of each with its scales (act_quant), the
    // scaling of the per-head weights, and the key's store into the indexer cache with its scale. Their bytes are
    // small; each is a kernel, so at decode sizes each takes the shortest kernel's time (kernel_floor_us).
    const double H = m.index_n_heads, d = m.index_head_dim, r = m.qk_rope_head_dim;
    const double rows = H + 1.0;  // the query's heads and the key
    const double bytes = T * (4.0 * d                  // k_norm: read and write the key (BF16)
                              + 2.0 * 4.0 * rows * r   // rope, then the copy back: read and write the rope parts
                              + 4.0 * rows * d         // Hadamard: read and write query and key
                              + 3.0 * rows * d + 4.0 * rows  // act_quant: read BF16, write FP8 and an FP32 scale
                              + 8.0 * H                // the weights' scaling (FP32)
                              + d + 4.0);              // the key's store (FP8 and its scale)
    OpRecord prep = memory_op(c, "attn.indexer_prep", ph, bytes);
    prep.time_us = std::max(prep.time_us, 10.0 * c.cal.kernel_floor_us);
    L.pre.push_back(prep);
}

// DSA's top-k selection of index_topk keys per query from the indexer's logits (SGLang's topk_transform, a kernel of
// its own after the scoring; the logits' read is in attn.indexer's bytes): the selected indices written, int32.
void indexer_topk(const Ctx& c, Phase ph, double T, LayerOps& L) {
    L.pre.push_back(memory_op(c, "attn.indexer_topk", ph, T * double(c.m.index_topk) * 4.0));
}

// Context parallelism, per layer: prefill all-gathers the chunk's new KV entries (`kv_bytes_per_token` each) among
// the cp ranks; decode gathers every rank's partial outputs (head dim `dv`, FP32, plus the log-sum-exp) to combine.
void cp_comm(const Ctx& c, Phase ph, const AttnShape& a, double kv_bytes_per_token, double dv, LayerOps& L) {
    if (c.cp <= 1) return;
    const double per_rank = ph == Phase::prefill ? a.T * kv_bytes_per_token : a.T * a.Hr * (dv + 1.0) * 4.0;
    OpRecord op = attn_allgather_op(c, ph == Phase::prefill ? "comm.cp_kv_allgather" : "comm.cp_partial_allgather", ph, per_rank, c.cp);
    L.allreduce_us += op.time_us;
    L.comm.push_back(op);
}

// DeepSeek-V4 (seed 002 §3): one shared KV head of head_dim per layer; every query attends to its layer's window of
// uncompressed tokens and to compressed entries (one per `compress` tokens): on CSA layers (ratio 4) the index_topk
// the lightning indexer picks, on HCA layers all of them. The compressors turn each new token's hidden state into
// KV (and, on CSA layers, indexer-key) entries.
void compressed_attention_ops(const Ctx& c, const PhaseShape& ps, const LayerDesc& ld, LayerOps& L) {
    const ModelSpec& m = c.m;
    const AttnShape a = attn_shape(c, ps);
    const Phase ph = ps.phase;
    const double h = m.hidden, d = m.head_dim, w = ld.window, r = ld.compress, topk = m.index_topk;
    const bool csa = ld.compress == 4 && m.index_n_heads > 0;
    L.pre.push_back(gemm_op(c, "attn.q_a_kv_proj", ph, a.T, h, double(m.q_lora_rank) + d, c.w_attn));
    L.pre.push_back(gemm_op(c, "attn.q_b_proj", ph, a.T, m.q_lora_rank, a.Hr * d, c.w_attn));
    if (ld.compress > 0) {
        // KV and gate projections to coff x dim (coff = 2 where CSA's windows overlap), for the KV and indexer keys
        const double coff = ld.compress == 4 ? 2.0 : 1.0;
        L.pre.push_back(gemm_op(c, "attn.compressor", ph, a.T, h, 2.0 * coff * (d + (csa ? m.index_head_dim : 0)), c.w_attn));
    }
    if (csa) indexer_projections(c, ph, a.T, false, L);
    const double entry = m.compressed_entry_bytes();
    double keys_q, cache_keys;  // keys one query attends to; entries of one sequence the kernel reads
    const double local = w > 0 ? std::min(a.hi, w) : a.hi;  // uncompressed keys in the window (no window: all)
    if (ph == Phase::decode) {
        const double comp = r <= 0 ? 0.0 : std::floor(a.hi / r);
        keys_q = (local + (csa ? std::min(comp, topk) : comp)) / a.key_div;
        cache_keys = keys_q;
        if (csa) indexer_core(c, ph, a, comp / a.key_div, comp / a.key_div, m.index_head_dim * 0.5, L);
    } else {
        keys_q = prefill_keys(a, 1.0, w) + (r <= 0 ? 0.0 : prefill_keys(a, r, csa ? topk : 0.0));
        cache_keys = local + (r <= 0 ? 0.0 : std::floor(a.hi / r));
        if (csa) indexer_core(c, ph, a, prefill_keys(a, 4.0, 0.0), std::floor(a.hi / 4.0), m.index_head_dim * 0.5, L);
    }
    // QK over the whole entry and PV into head_dim: 4 x head_dim FLOPs per head and key
    OpRecord core = make_op("attn.core", ph, 4.0 * a.T * a.Hr * d * keys_q, 0,
                            a.seqs * cache_keys * entry + 2.0 * a.T * a.Hr * d * 2.0);
    time_op(c, core, Dtype::bf16, TableHit{}, attn_eff(c),
            ph == Phase::decode ? c.cal.attn_decode_bw_eff : c.cal.hbm_bw_eff);
    L.pre.push_back(core);
    cp_comm(c, ph, a, entry * (1.0 + (r > 0 ? 1.0 / r : 0.0)), d, L);
    // grouped low-rank output: each local group maps its heads to o_lora_rank (one GEMM's worth of FLOPs and
    // weights), then wo_b maps the local groups to hidden (reduced over TP like o_proj)
    const double groups = std::max(1.0, double(m.o_groups) * c.cp / c.tp);
    L.pre.push_back(gemm_op(c, "attn.wo_a", ph, a.T, a.Hr * d / groups, groups * m.o_lora_rank, c.w_attn));
    L.pre.push_back(gemm_op(c, "attn.wo_b", ph, a.T, groups * m.o_lora_rank, h, c.w_attn));
}

}  // namespace

void attention_ops(const Ctx& c, const PhaseShape& ps, const LayerDesc& ld, LayerOps& L) {
    const ModelSpec& m = c.m;
    if (m.compressed_kv() || m.o_lora_rank > 0) {  // DeepSeek-V4 attention (without compress_ratios: windows only)
        compressed_attention_ops(c, ps, ld, L);
        return;
    }
    const AttnShape a = attn_shape(c, ps);
    const int window = ld.window;
    const double T = a.T, h = m.hidden;
    const Phase ph = ps.phase;
    if (m.attn == AttnKind::mla) {
        const double Hr = a.Hr;  // heads per GPU
        const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
        const bool dsa = m.dsa();
        // DSA: each query attends to the index_topk keys the indexer picks (a cap on keys, like a window)
        const double cap = dsa ? (window > 0 ? std::min<double>(window, m.index_topk) : m.index_topk) : window;
        if (m.q_lora_rank > 0) {
            // fused q_a + kv_a (replicated across TP ranks), then q_b (head-sharded)
            L.pre.push_back(gemm_op(c, "attn.qkv_a_proj", ph, T, h, m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim, c.w_attn));
            L.pre.push_back(gemm_op(c, "attn.q_b_proj", ph, T, m.q_lora_rank, Hr * qk, c.w_attn));
        } else {
            L.pre.push_back(gemm_op(c, "attn.q_proj", ph, T, h, Hr * qk, c.w_attn));
            L.pre.push_back(gemm_op(c, "attn.kv_a_proj", ph, T, h, m.kv_lora_rank + m.qk_rope_head_dim, c.w_attn));
        }
        if (dsa) indexer_projections(c, ph, T, true, L);
        const double kvb = c.kv_elem_bytes;  // precision.mla_kv: an FP8 cache's BF16 rope part and scales
        // DSA prefill past index_topk keys runs the sparse kernel (FlashMLA sparse prefill) in the absorbed form, as
        // decode does: per head and selected key, QK over kv_lora + rope and PV over kv_lora. Shorter prompts attend
        // to every key and run dense MHA (SGLang's choice), which the non-absorbed path below prices.
        const bool sparse_prefill = dsa && ph == Phase::prefill && a.hi > m.index_topk;
        if (sparse_prefill) {
            // FlashMLA's sparse kernels compute a whole tile of heads per query: fewer heads on this GPU (TP) are
            // padded with zero queries, and the padding costs compute (sparse_kernel_heads)
            const double Hk = sparse_kernel_heads(c, Hr);
            const double wb = 2.0;
            OpRecord qk_op = make_op("attn.bmm_q_wk", ph, 2.0 * T * Hr * m.qk_nope_head_dim * m.kv_lora_rank,
                                     Hr * m.qk_nope_head_dim * m.kv_lora_rank * wb, T * Hr * (m.qk_nope_head_dim + m.kv_lora_rank) * 2.0);
            time_op(c, qk_op, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
            L.pre.push_back(qk_op);
            indexer_core(c, ph, a, prefill_keys(a, 1.0, 0.0), a.hi, m.dsa_index_bytes_per_token_layer(), L);
            indexer_topk(c, ph, T, L);
            // every query runs all index_topk slots of its selection: a query with fewer keys before it fills the
            // rest with -1 (masked, still loaded and multiplied). InferSim's H800 rows show it: one 4096-token prompt
            // takes 3.69 ms against 4096 s_kv and 3.70 ms against 32,768 (bench_data/dsa/prefill/h800).
            const double keys = cap > 0 ? cap : prefill_keys(a, 1.0, cap);
            const double lat = m.kv_lora_rank + m.qk_rope_head_dim;
            OpRecord core = make_op("attn.core", ph, 2.0 * T * Hk * keys * (lat + m.kv_lora_rank), 0,
                                    a.seqs * a.hi * lat * kvb + T * Hr * (lat + m.kv_lora_rank) * 2.0);
            time_op(c, core, Dtype::bf16, TableHit{}, c.cal.sparse_attn_prefill_eff, c.cal.hbm_bw_eff);
            L.pre.push_back(core);
            OpRecord ov = make_op("attn.bmm_o_wv", ph, 2.0 * T * Hr * m.kv_lora_rank * m.v_head_dim,
                                  Hr * m.kv_lora_rank * m.v_head_dim * wb, T * Hr * (m.kv_lora_rank + m.v_head_dim) * 2.0);
            time_op(c, ov, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
            L.pre.push_back(ov);
            cp_comm(c, ph, a, lat * kvb + m.dsa_index_bytes_per_token_layer(), 0.0, L);
        } else if (ph == Phase::decode) {
            // absorbed: q_nope x W_UK -> latent, attention over the latent cache, x W_UV -> v
            const double wb = 2.0;  // absorbed per-head matrices are kept in bf16
            OpRecord qk_op = make_op("attn.bmm_q_wk", ph, 2.0 * T * Hr * m.qk_nope_head_dim * m.kv_lora_rank,
                                     Hr * m.qk_nope_head_dim * m.kv_lora_rank * wb, T * Hr * (m.qk_nope_head_dim + m.kv_lora_rank) * 2.0);
            time_op(c, qk_op, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
            L.pre.push_back(qk_op);
            if (dsa) {
                indexer_core(c, ph, a, a.hi / a.key_div, a.hi / a.key_div, m.dsa_index_bytes_per_token_layer(), L);
                indexer_topk(c, ph, T, L);
            }
            const double ctx = (cap > 0 ? std::min(a.hi, cap) : a.hi) / a.key_div;
            const double q_per_seq = T / std::max(1.0, ps.batch);  // > 1 with MTP verification
            kernels::Cost k = kernels::mla_decode(ps.batch, ctx, Hr, m.kv_lora_rank, m.qk_rope_head_dim, kvb);
            OpRecord core = make_op("attn.core", ph, k.flops * q_per_seq, 0, k.bytes);
            TableHit hit = lookup(c, [&](std::string_view f) {
                return c.t.mla_decode(f, int(Hr * q_per_seq + 0.5), m.kv_lora_rank, m.qk_rope_head_dim, ps.batch, ctx,
                                      c.kv == Dtype::fp8);
            });
            time_op(c, core, Dtype::bf16, hit, attn_eff(c), c.cal.attn_decode_bw_eff);
            L.pre.push_back(core);
            OpRecord ov = make_op("attn.bmm_o_wv", ph, 2.0 * T * Hr * m.kv_lora_rank * m.v_head_dim,
                                  Hr * m.kv_lora_rank * m.v_head_dim * wb, T * Hr * (m.kv_lora_rank + m.v_head_dim) * 2.0);
            time_op(c, ov, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
            L.pre.push_back(ov);
            cp_comm(c, ph, a, 0.0, m.kv_lora_rank, L);
        } else {
            // non-absorbed prefill: kv_b expands the latent to per-head k_nope and v
            L.pre.push_back(gemm_op(c, "attn.kv_b_proj", ph, T, m.kv_lora_rank, Hr * (m.qk_nope_head_dim + m.v_head_dim), c.w_attn));
            if (dsa) {
                indexer_core(c, ph, a, prefill_keys(a, 1.0, 0.0), a.hi, m.dsa_index_bytes_per_token_layer(), L);
                indexer_topk(c, ph, T, L);
            }
            const double attended = prefill_keys(a, 1.0, cap);
            kernels::Cost k = kernels::mla_prefill(T, attended, Hr, qk, m.v_head_dim);
            // a cached prefix is read back from the latent cache (expanded by kv_b in the same pass)
            if (a.lo > 0) k.bytes += a.seqs * a.lo * (m.kv_lora_rank + m.qk_rope_head_dim) * kvb;
            OpRecord core = make_op("attn.core", ph, k.flops, 0, k.bytes);
            TableHit hit = lookup(c, [&](std::string_view f) {
                return c.t.mla_prefill(f, int(Hr), m.qk_nope_head_dim, m.qk_rope_head_dim, ps.ctx, ps.batch, cap, c.g.sm_count);
            });
            time_op(c, core, Dtype::bf16, hit, attn_eff(c), c.cal.hbm_bw_eff);
            L.pre.push_back(core);
            cp_comm(c, ph, a, (m.kv_lora_rank + m.qk_rope_head_dim) * kvb + m.dsa_index_bytes_per_token_layer(), 0.0, L);
        }
        // Kimi-K3's output gate: g_proj (hidden -> heads x v_head_dim, head-sharded), a sigmoid applied before o_proj
        if (m.mla_output_gate) L.pre.push_back(gemm_op(c, "attn.g_proj", ph, T, h, Hr * m.v_head_dim, c.w_attn));
        L.pre.push_back(gemm_op(c, "attn.o_proj", ph, T, Hr * m.v_head_dim, h, c.w_attn));
        return;
    }
    // Gemma-4's global layers: heads of global_head_dim, their own KV heads, and with K = V no v_proj (the values
    // are the keys' projection, normed apart: both are cached and read)
    const bool global = m.is_global(ld);
    // A layer of its own shape (MiMo-V2, Nemotron NAS): its heads, KV heads and K / V widths. With K and V of
    // different widths the kernels are costed at their mean, which gives the same QK + PV FLOPs (2 d + 2 dv per head
    // and key) and the same K + V bytes; the tables are looked up at that mean.
    const bool own = ld.own_attention();
    const ModelSpec::AttnDims dims = m.attn_dims(ld);
    const double Hr = own ? double(dims.heads) * c.cp / c.tp : a.Hr;  // heads per GPU
    const double dk = global ? m.global_head_dim : own ? dims.head_dim : m.head_dim;
    const double dv = own ? dims.v_head_dim : dk;
    const double d = 0.5 * (dk + dv);
    const double kv_heads = global ? m.global_kv_heads : own ? dims.kv_heads : m.num_kv_heads;
    const double Hkv = std::max(1.0, kv_heads * c.cp / c.tp);  // KV heads replicated when tp exceeds them
    const double kv_width = global && m.global_k_eq_v ? dk : dk + dv;
    const double q_heads = m.attn_output_gate ? 2.0 * Hr : Hr;  // the output gate comes out of q_proj
    // Block-sparse layers (MiniMax-M3): the same GEMM yields index_q (its heads sharded like the KV heads, replicated
    // past their count) and the one index_k head (replicated); each query then attends to its top-k blocks only, a cap
    // on keys like a window (the KV cache itself keeps every token).
    const bool msa = ld.sparse && m.block_sparse();
    const double Hidx = msa ? std::max(1.0, double(m.index_n_heads) * c.cp / c.tp) : 0.0;
    const double index_width = msa ? (Hidx + 1.0) * m.index_head_dim : 0.0;
    const double cap = !msa ? double(window) : window > 0 ? std::min(double(window), m.sparse_keys()) : m.sparse_keys();
    L.pre.push_back(gemm_op(c, "attn.qkv_proj", ph, T, c.qkv_in > 0 ? c.qkv_in : h, q_heads * dk + Hkv * kv_width + index_width, c.w_attn));
    const double kvb = dtype_bytes(c.kv);
    if (ph == Phase::decode) {
        if (msa) block_sparse_indexer(c, ph, a, Hidx, a.hi / a.key_div, a.hi / a.key_div, L);
        const double ctx = (cap > 0 ? std::min(a.hi, cap) : a.hi) / a.key_div;
        const double q_per_seq = T / std::max(1.0, ps.batch);
        kernels::Cost k = kernels::mha_decode(ps.batch, ctx, Hr, Hkv, d, kvb);
        OpRecord core = make_op("attn.core", ph, k.flops * q_per_seq, 0, k.bytes);
        TableHit hit = lookup(c, [&](std::string_view f) {
            return c.t.mha_decode(f, int(Hr), int(Hkv), int(d), ps.batch, ctx, c.kv == Dtype::fp8);
        });
        time_op(c, core, Dtype::bf16, hit, attn_eff(c), c.cal.attn_decode_bw_eff);
        L.pre.push_back(core);
        cp_comm(c, ph, a, 0.0, dv, L);
    } else {
        if (msa) block_sparse_indexer(c, ph, a, Hidx, prefill_keys(a, 1.0, 0.0), a.hi, L);
        const double attended = prefill_keys(a, 1.0, cap);
        kernels::Cost k = kernels::mha_prefill(T, attended, Hr, Hkv, d, kvb);
        if (a.lo > 0) k.bytes += a.seqs * (window > 0 ? std::min(a.lo, double(window)) : a.lo) * 2.0 * Hkv * d * kvb;
        OpRecord core = make_op("attn.core", ph, k.flops, 0, k.bytes);
        TableHit hit = lookup(c, [&](std::string_view f) {
            return c.t.mha_prefill(f, int(Hr), int(Hkv), int(d), ps.ctx, ps.batch, cap, c.g.sm_count);
        });
        time_op(c, core, Dtype::bf16, hit, attn_eff(c), c.cal.hbm_bw_eff);
        L.pre.push_back(core);
        cp_comm(c, ph, a, 2.0 * Hkv * d * kvb + (msa ? m.sparse_index_bytes_per_token_layer() : 0.0), 0.0, L);
    }
    L.pre.push_back(gemm_op(c, "attn.o_proj", ph, T, Hr * dv, h, c.w_attn));
}

// Gated DeltaNet (Qwen3-Next, Qwen3.5; Yang et al., "Gated Delta Networks"): per token, q/k/v/z and the b/a gates
// are projected, q/k/v pass a short causal conv, and each v head keeps a k_dim x v_dim state S updated by the gated
// delta rule S <- g S + beta k (v - g S^T k)^T and read as o = S^T q; the gated norm and out_proj follow.
// Heads are split over TP (replicated past their count). Prefill's conv and delta-rule kernels come from
// bench_data/gdn/<family>/sglang.csv on a GPU with its own table for these heads (SGLang's kernels measured by
// AIConfigurator); the rest, and decode, are analytical (the decode records are within a few percent of those
// measurements; tests/unit compares the H20 prefill records with BLIS's H20 shape, which the loader does not read).
// A measured kernel's time on a record whose FLOPs and bytes stay the model's (efficiency = roofline / measured).
static void take_measured(const Ctx& c, OpRecord& op, double us, Source src, const char* table) {
    const double roof_us = 1e6 * std::max(op.flops / (c.g.peak_tflops(Dtype::bf16) * 1e12), (op.weight_bytes + op.activation_bytes) / c.bw);
    op.time_us = us;
    op.efficiency = roof_us / us;
    op.source = src;
    op.table = table;
}

void linear_attention_ops(const Ctx& c, const PhaseShape& ps, LayerOps& L) {
    const ModelSpec& m = c.m;
    const double T = ps.T, h = m.hidden, seqs = std::max(1.0, ps.batch);
    const Phase ph = ps.phase;
    const double kh = std::max(1.0, double(m.lin_num_k_heads) / c.tp), vh = std::max(1.0, double(m.lin_num_v_heads) / c.tp);
    const double dk = m.lin_k_head_dim, dv = m.lin_v_head_dim;
    // Prefill measured on this GPU: the chunk's tokens timed as one sequence (the kernels run a chunk's prompts in
    // one varlen launch; AIC's batched points are up to ~35% faster than one sequence of all their tokens).
    GdnHit gdn;
    if (ph == Phase::prefill && c.own_tables && c.families[0] && !m.kda)  // (Gated DeltaNet's kernels, not KDA's)
        gdn = c.t.gdn_prefill(c.families[0], int(kh), int(vh), int(dk), int(dv), T);
    const double Kd = kh * dk, Vd = vh * dv, conv_ch = 2.0 * Kd + Vd, K = m.lin_conv_kernel;
    const double act_b = 2.0, conv_state_b = dtype_bytes(m.dtype), state_b = dtype_bytes(m.lin_state_dtype);
    if (m.kda) {
        // Kimi Delta Attention (model_kda.cpp): q, k, v and beta head-sharded, the output gate too when full rank, and
        // the head_dim-wide first factors of the forget gate (and of a low-rank output gate), replicated, in one GEMM
        // (SGLang's fused projection); then the second factors expand them to a decay per key channel (and a gate per
        // value channel).
        const double low_rank_gate = m.kda_full_rank_gate ? 0.0 : 1.0;
        L.pre.push_back(gemm_op(c, "attn.kda_in_proj", ph, T, h,
                                2.0 * Kd + Vd + vh + (1.0 - low_rank_gate) * Vd + dk * (1.0 + low_rank_gate), c.w_attn));
        L.pre.push_back(gemm_op(c, "attn.kda_gate_b_proj", ph, T, dk, Kd + low_rank_gate * Vd, c.w_attn));
    } else {
        L.pre.push_back(gemm_op(c, "attn.gdn_in_proj", ph, T, h, 2.0 * Kd + 2.0 * Vd + 2.0 * vh, c.w_attn));
    }
    // depthwise causal conv over q, k, v: streams them in and out; decode also reads and writes the conv state
    {
        double bytes = 2.0 * T * conv_ch * act_b + conv_ch * K * act_b;
        if (ph == Phase::decode) bytes += 2.0 * seqs * conv_ch * std::max(0.0, K - 1) * conv_state_b;
        OpRecord conv = make_op("attn.gdn_conv", ph, 2.0 * T * conv_ch * K, 0, bytes);
        time_op(c, conv, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
        if (gdn.found) take_measured(c, conv, gdn.conv_us, gdn.source, gdn.table);
        L.pre.push_back(conv);
    }
    const double state_bytes = seqs * vh * dk * dv * state_b;        // one recurrent state per sequence
    const double qkvo_bytes = T * (2.0 * Kd + 2.0 * Vd) * act_b + T * 2.0 * vh * 4.0;  // q, k, v in, o out, g/beta fp32
    if (ph == Phase::decode) {
        // recurrent step: per token and v head, decay (1), S^T k (2), rank-1 update (2), S^T q (2) x dk x dv FLOPs
        // (KDA's decay per key channel scales the state's rows: the same dk x dv multiplies as one scalar per head);
        // the state is read and written once per step (memory-bound)
        OpRecord core = make_op("attn.gdn_core", ph, 7.0 * T * vh * dk * dv, 0, 2.0 * state_bytes + qkvo_bytes);
        time_op(c, core, Dtype::bf16, TableHit{}, c.cal.attn_prefill_compute_eff, c.cal.attn_decode_bw_eff);
        L.pre.push_back(core);
    } else {
        // chunked delta rule (chunks of C = 64 tokens, as FLA's kernels): per chunk and v head K K^T, Q K^T
        // (2 C^2 dk each), the WY factors W = A (beta K), U = A (beta V) (2 C^2 dk, 2 C^2 dv) after a triangular
        // solve (~2/3 C^3), intra-chunk output (2 C^2 dv), and against the carried state W S, Q S and the update
        // K^T V' (2 C dk dv each). The per-chunk states are written and read back once in bf16. KDA's chunk kernel
        // (Kimi Linear, arXiv 2510.26692, §3) has the same products with the keys and queries scaled by their cumulative
        // per-channel decay (elementwise work, not counted); no public table times it, so it is priced by these FLOPs.
        const double C = 64.0;
        const double per_token = 6.0 * dk * dv + C * (6.0 * dk + 4.0 * dv) + 2.0 / 3.0 * C * C;
        const double chunk_states = 2.0 * std::ceil(T / C) * vh * dk * dv * 2.0;
        OpRecord core = make_op("attn.gdn_core", ph, per_token * T * vh, 0, qkvo_bytes + chunk_states + state_bytes);
        time_op(c, core, Dtype::bf16, TableHit{}, c.cal.attn_prefill_compute_eff, c.cal.hbm_bw_eff);
        if (gdn.found) take_measured(c, core, gdn.core_us, gdn.source, gdn.table);
        L.pre.push_back(core);
    }
    L.pre.push_back(gemm_op(c, "attn.gdn_out_proj", ph, T, Vd, h, c.w_attn));
}

}  // namespace moe::detail

namespace moe::detail {

// A Mamba-2 mixer (Dao & Gu, "Transformers are SSMs", 2024; HF NemotronHMamba2Mixer): in_proj gives z (the gate),
// x, B, C and dt per token; x, B and C pass a short depthwise causal conv; each head keeps a head_dim x
// ssm_state_size state h <- exp(dt A) h + dt x B^T, read as y = h C + D x; y is gated by silu(z), RMS-normed per
// group and projected back by out_proj. Heads and groups are split over TP (replicated past their count). No measured
// table exists for these kernels: the conv and the scan are priced by their FLOPs and bytes at the analytical
// efficiencies (source: analytical), the projections as GEMMs through the GEMM tables.
void mamba2_ops(const Ctx& c, const PhaseShape& ps, LayerOps& L) {
    const ModelSpec& m = c.m;
    const double T = ps.T, h = m.hidden, seqs = std::max(1.0, ps.batch);
    const Phase ph = ps.phase;
    const double heads = std::max(1.0, double(m.ssm_num_heads) / c.tp), groups = std::max(1.0, double(m.ssm_groups) / c.tp);
    const double P = m.ssm_head_dim, N = m.ssm_state_size, K = m.ssm_conv_kernel, Q = m.ssm_chunk;
    const double d_inner = heads * P, bc = 2.0 * groups * N, conv_ch = d_inner + bc;
    const double act_b = 2.0, conv_state_b = dtype_bytes(m.dtype), state_b = dtype_bytes(m.ssm_state_dtype);
    L.pre.push_back(gemm_op(c, "attn.mamba_in_proj", ph, T, h, 2.0 * d_inner + bc + heads, c.w_attn));
    {
        // depthwise causal conv over x, B, C: streams them in and out; decode reads and writes each request's conv
        // state ((conv_kernel - 1) inputs per channel), prefill writes it once at the end of the chunk
        double bytes = 2.0 * T * conv_ch * act_b + conv_ch * K * act_b;
        bytes += (ph == Phase::decode ? 2.0 : 1.0) * seqs * conv_ch * std::max(0.0, K - 1) * conv_state_b;
        OpRecord conv = make_op("attn.mamba_conv", ph, 2.0 * T * conv_ch * K, 0, bytes);
        time_op(c, conv, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
        L.pre.push_back(conv);
    }
    const double state_bytes = seqs * heads * P * N * state_b;  // one SSM state per request
    // x, B, C and dt in, y out, and the gated RMSNorm (y and z read, the normed output written), in bf16
    const double io_bytes = T * (conv_ch + heads + d_inner) * act_b + 3.0 * T * d_inner * act_b;
    if (ph == Phase::decode) {
        // one recurrent step per token and head: decay (1), dt x B^T added (2), y = h C (2) per state element; the
        // state is read and written once per step (memory-bound)
        OpRecord core = make_op("attn.mamba_scan", ph, 5.0 * T * heads * P * N, 0, 2.0 * state_bytes + io_bytes);
        time_op(c, core, Dtype::bf16, TableHit{}, c.cal.attn_prefill_compute_eff, c.cal.attn_decode_bw_eff);
        L.pre.push_back(core);
    } else {
        // SSD, chunks of Q = chunk_size tokens (mamba_ssm's ssd_combined kernels): per chunk, C B^T per group
        // (2 Q^2 N) and its masked product with x per head (2 Q^2 P), each chunk's state B^T x (2 Q N P) and the
        // output from the carried state C h (2 Q N P); the chunk states are written and read back once in fp32, the
        // final state written in the state's format.
        const double per_token = heads * (2.0 * Q * P + 4.0 * N * P) + groups * 2.0 * Q * N;
        const double chunk_states = 2.0 * std::ceil(T / Q) * heads * P * N * 4.0;
        OpRecord core = make_op("attn.mamba_scan", ph, per_token * T, 0, io_bytes + chunk_states + state_bytes);
        time_op(c, core, Dtype::bf16, TableHit{}, c.cal.attn_prefill_compute_eff, c.cal.hbm_bw_eff);
        L.pre.push_back(core);
    }
    L.pre.push_back(gemm_op(c, "attn.mamba_out_proj", ph, T, d_inner, h, c.w_attn));
}

}  // namespace moe::detail
