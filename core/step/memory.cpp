// memory.cpp — memory per GPU (weights by part, KV cache, activations, workspace, communication buffers, reserve) and the largest batch / context that fit (seed 002).
// Part of the step model; core/estimate_detail.h lists the files and what each computes.
#include "core/step/estimate_detail.h"

namespace moe::detail {

struct MemoryModel {
    double fixed = 0;          // weights, reserve, workspace floors, fixed comm buffers
    double per_seq = 0;        // bytes per decode sequence (KV at the context + per-sequence activations/buffers)
    double prefill_peak = 0;   // activation + workspace peak of the largest prefill chunk (independent of batch)
    double per_seq_decode_act = 0;  // decode activation bytes per sequence (competes with prefill_peak)
};

void memory(const Ctx& c, Estimate& e) {
    const ModelSpec& m = c.m;
    const Scenario& s = c.s;
    MemoryResult& r = e.memory;
    const double layers_share = 1.0 / c.pp;  // balanced stages
    const double h = m.hidden;
    const double ew = m.expert_width();  // what a dispatched token carries: hidden, or LatentMoE's latent width
    // --- weights by part ---
    const double attn_sharded = [&] {
        if (m.attn == AttnKind::mla) {
            const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
            const double repl = m.q_lora_rank > 0 ? h * (m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim)
                                                  : h * (m.kv_lora_rank + m.qk_rope_head_dim);
            const double shard = (m.q_lora_rank > 0 ? double(m.q_lora_rank) : h) * m.num_heads * qk +
                                 double(m.kv_lora_rank) * m.num_heads * (m.qk_nope_head_dim + m.v_head_dim) +
                                 double(m.num_heads) * m.v_head_dim * h;
            return repl + shard / c.tp;
        }
        if (m.o_lora_rank > 0) {
            // DeepSeek-V4 (seed 002 §2): wq_a and the shared KV head replicated, wq_b / wo_a / wo_b head-sharded
            const double repl = h * m.q_lora_rank + h * m.head_dim;
            const double shard = double(m.q_lora_rank) * m.num_heads * m.head_dim +
                                 double(m.num_heads) * m.head_dim * m.o_lora_rank + double(m.o_groups) * m.o_lora_rank * h;
            return repl + shard / c.tp;
        }
        const double kv_rank = std::max(1.0, double(m.num_kv_heads) / c.tp);
        const double q_and_o = m.attn_output_gate ? 3.0 : 2.0;  // the output gate doubles q_proj
        return h * (double(m.num_heads) / c.tp) * m.head_dim * q_and_o + 2.0 * h * kv_rank * m.head_dim;
    }() + (m.mla_output_gate ? h * double(m.num_heads) / c.tp * m.v_head_dim : 0.0);  // Kimi-K3's MLA g_proj, head-sharded
    // Layers of their own shape (MiMo-V2's, Nemotron NAS's): attention at their own heads and widths, a linear map in
    // place of attention, a dense FFN of their own width; kept as differences from the model-wide figures below.
    double own_attn = 0, own_ffn = 0, own_norms = 0;
    for (const ModelSpec::LayerKind& k : m.layer_kinds) {
        const LayerDesc& l = k.d;
        const double n = k.count / double(c.pp);
        if (l.mixer == Mixer::attention && (l.own_attention() || l.sinks) && m.attn != AttnKind::mla) {
            const ModelSpec::AttnDims a = m.attn_dims(l);
            const double heads = double(a.heads) / c.tp, kv = std::max(1.0, double(a.kv_heads) / c.tp);
            const double sharded = h * heads * (a.head_dim * (m.attn_output_gate ? 2.0 : 1.0) + a.v_head_dim) +
                                   h * kv * (a.head_dim + a.v_head_dim) + (l.sinks ? heads : 0.0);
            own_attn += n * (sharded - attn_sharded);
        }
        if (l.mixer == Mixer::linear) own_attn += n * h * h / c.tp;  // row-sharded like o_proj
        if (l.ffn && !l.moe && (l.ffn_inter > 0 || l.ffn_linear))
            own_ffn += n * (m.layer_ffn_params(l) - m.dense_ffn_params()) / c.tp;
        if (m.per_layer_blocks) own_norms -= n * h * ((l.mixer == Mixer::none ? 1.0 : 0.0) + (l.ffn ? 0.0 : 1.0));
    }
    // Gated DeltaNet layers: every projection, the conv and the per-head parameters are split by heads over TP.
    const double linear_sharded = m.has_linear_attention() ? m.linear_attn_params() / c.tp : 0.0;
    const double n_layers = m.num_layers * layers_share;
    const double n_moe = m.n_moe_layers * layers_share, n_dense = m.n_dense_layers * layers_share;
    const double n_linear = m.n_linear_layers * layers_share;
    // Mamba-2 mixers (Nemotron-H): likewise split by heads and groups over TP; layers without a mixer have none.
    const double n_mamba = m.n_mamba_layers * layers_share, n_mixerless = m.n_mixerless_layers * layers_share;
    const double mamba_sharded = m.n_mamba_layers > 0 ? m.mamba_params() / c.tp : 0.0;
    // Block-sparse layers (MiniMax-M3): index_q sharded like the KV heads, index_k (one head) replicated.
    const double n_sparse = m.n_sparse_layers * layers_share;
    const double sparse_indexer = h * m.index_head_dim * (std::max(1.0, double(m.index_n_heads) / c.tp) + 1.0);
    // Gemma-4's global layers: q and o at global_head_dim, their own KV heads (one projection with K = V).
    const double n_global = m.n_global_layers * layers_share;
    const double global_sharded = n_global > 0 ? h * (double(m.num_heads) / c.tp) * m.global_head_dim * 2.0 +
                                                     (m.global_k_eq_v ? 1.0 : 2.0) * h * std::max(1.0, double(m.global_kv_heads) / c.tp) * m.global_head_dim
                                               : 0.0;
    const double n_proj = m.n_proj_layers * layers_share;
    r.weights_attention_bytes = ((n_layers - n_linear - n_mamba - n_mixerless - n_global - n_proj) * attn_sharded + n_linear * linear_sharded +
                                 n_mamba * mamba_sharded + n_sparse * sparse_indexer + n_global * global_sharded + own_attn) *
                                bytes_with_scales(c.w_attn);
    const double local_experts = m.is_moe() ? double(m.num_experts + s.routing.redundant_experts) / c.ep : 0.0;
    r.weights_experts_bytes = n_moe * local_experts * m.expert_params() / c.moe_tp * bytes_with_scales(c.w_exp);
    // Expert offload (DESIGN §10): only the cached experts stay in HBM, plus a staging buffer for the streamed
    // ones (the misses of one layer, two layers' worth with prefetch); the rest lives in the host tier / on SSD.
    double offload_staging = 0;
    if (m.is_moe() && s.runtime.expert_offload.tier != OffloadTier::none) {
        const double tokens_world = double(s.workload.batch) * (1 + s.runtime.speculative.draft_tokens) * c.dp;
        const OffloadPlan op = offload_plan(c, tokens_world);
        const double per_layer = m.expert_params() / c.moe_tp * bytes_with_scales(c.w_exp);
        r.weights_experts_bytes = n_moe * op.cached * per_layer;
        r.offloaded_experts_bytes = n_moe * (op.local - op.cached) * per_layer;
        r.offload_hit_rate = op.hit_rate;
        offload_staging = std::ceil(op.miss_experts) * per_layer * (s.runtime.expert_offload.prefetch ? 2.0 : 1.0);
    }
    // Shared experts TP-sharded; LatentMoE's two latent projections replicated on every GPU (vLLM ReplicatedLinear), in
    // the same format (ops_ffn.cpp), counted with them.
    r.weights_shared_bytes = n_moe * (m.shared_params() / c.tp + m.latent_proj_params()) * bytes_with_scales(c.w_shared);
    r.weights_dense_ffn_bytes = (n_dense * m.dense_ffn_params() / c.tp + own_ffn) * bytes_with_scales(c.w_shared);
    const double embed = double(m.vocab) * h / c.tp * bytes_with_scales(c.w_embed);
    // With pp > 1 the first stage holds the embedding and the last the LM head; report the heavier stage.
    r.weights_embedding_bytes = c.pp > 1 ? embed : embed * (m.tie_embeddings ? 1.0 : 2.0);
    // router, norms and hyper-connection maps, FP32 and replicated (DeepSeek-V4-Pro's hc maps: 61 x 1.38 M x 4 B = 336 MB)
    r.weights_other_bytes = n_moe * m.router_params() * 4.0 +
                            (n_layers * (m.norm_params_per_layer() + m.hc_params_per_layer()) + own_norms) * 4.0 + h * 4.0;
    const SpeculativeConfig& sp = s.runtime.speculative;
    if (sp.draft_tokens > 0 && sp.method == SpecMethod::eagle) {
        // EAGLE-3 head (ModelSpec::eagle3_head_params): one dense decoder layer of the target's width, TP-sharded like
        // the target's layers, with the embedding half of its 2h-wide q, k, v; its 3h x h fc (a plain torch Linear in
        // SGLang llama_eagle3.py: unsharded) and its LM head over the 32,000-token draft vocabulary (vocab-parallel);
        // norms in FP32; the embedding is the target's. The head is its own checkpoint, BF16 as the public heads ship
        // (draft_formats), whatever the target's formats. Counted with the MTP modules.
        const DraftFormats df = draft_formats(c, true);
        const double kv_rank = std::max(1.0, double(m.num_kv_heads) / c.tp);
        const double qkv_extra = m.attn == AttnKind::mla ? 0.0 : h * (double(m.num_heads) / c.tp + 2.0 * kv_rank) * m.head_dim;
        r.weights_mtp_bytes = (attn_sharded + qkv_extra) * bytes_with_scales(df.attn) +
                              m.dense_ffn_params() / c.tp * bytes_with_scales(df.ffn) + 3.0 * h * h * dtype_bytes(kEagleFcDtype) +
                              h * m.eagle3_draft_vocab() / c.tp * dtype_bytes(kEagleFcDtype) + 4.0 * h * 4.0;
    } else if (sp.draft_tokens > 0 && sp.method == SpecMethod::mtp && m.mtp_layers > 0) {
        // One decoder layer of the model's kind (DeepSeek-V3's model.layers.61 has its own MLA attention, router,
        // 256 experts and shared expert: the 14 B of "MTP Module weights" its README counts beside the 671 B), plus
        // enorm, hnorm and the final (shared_head) norm, plus eh_proj (mtp_proj_dtype, replicated); the embedding and
        // LM head are the target's (SGLang and vLLM share them). Router, norms and hyper-connection maps are counted
        // as weights_other counts the main layers' (FP32); V4's MTP block adds its hc_head map (hc x hc*h).
        const double fp32_params = (m.is_moe() ? m.router_params() : 0.0) + m.norm_params_per_layer() + 3.0 * h +
                                   m.hc_params_per_layer() + (m.hc_mult > 1 ? double(m.hc_mult) * m.hc_mult * h : 0.0);
        const DraftFormats df = draft_formats(c, false);
        const double mtp_layer = attn_sharded * bytes_with_scales(df.attn) +
                                 (m.is_moe() ? local_experts * m.expert_params() / c.moe_tp * bytes_with_scales(df.exp) +
                                                   (m.shared_params() / c.tp + m.latent_proj_params()) * bytes_with_scales(df.ffn)
                                             : m.dense_ffn_params() / c.tp * bytes_with_scales(df.ffn)) +
                                 fp32_params * 4.0 + 2.0 * h * h * bytes_with_scales(mtp_proj_dtype(c));  // eh_proj
        r.weights_mtp_bytes = m.mtp_layers * mtp_layer;
    }
    r.weights_bytes = r.weights_attention_bytes + r.weights_experts_bytes + r.weights_shared_bytes +
                      r.weights_dense_ffn_bytes + r.weights_embedding_bytes + r.weights_other_bytes + r.weights_mtp_bytes;

    // --- KV cache ---
    // Context parallelism shards every sequence's KV over cp ranks, each with the heads of tp / cp GPUs.
    const double kv_heads_gpu = std::max(1.0, double(m.num_kv_heads) * c.cp / c.tp);
    const double attn_tp = double(c.tp) / c.cp;  // splits the KV heads of layers with their own shape
    const double kvb = c.kv_elem_bytes;
    const double block = s.kv_block_tokens();
    // A request also holds the Gated DeltaNet and Mamba-2 layers' recurrent state, whatever its length (0 for other
    // models).
    const double state_per_request = m.linear_state_bytes_per_request(c.tp, layers_share);
    // With MTP on, the MTP modules' layers keep a KV cache of their own (on the last pipeline stage).
    // An EAGLE head keeps the KV cache of its one layer (a full-attention layer of the target's kind).
    const bool mtp_kv = sp.draft_tokens > 0 && sp.method == SpecMethod::mtp && m.mtp_layers > 0;
    const bool eagle_kv = sp.draft_tokens > 0 && sp.method == SpecMethod::eagle;
    auto kv_request = [&](double ctx) {
        const double rounded = std::ceil(ctx / block) * block;
        const double mtp = mtp_kv     ? m.mtp_kv_bytes_per_request(rounded, kv_heads_gpu, kvb)
                           : eagle_kv ? rounded * m.kv_elems_per_token_layer() * kvb *
                                            (m.attn == AttnKind::mla ? 1.0 : std::min(1.0, kv_heads_gpu / std::max(1, m.num_kv_heads)))
                                      : 0.0;
        return (m.kv_bytes_per_request(rounded, kv_heads_gpu, kvb, layers_share, attn_tp) + mtp) / c.cp + state_per_request;
    };
    r.kv_bytes_per_token = m.compressed_kv() ? (kv_request(1e6) - state_per_request) / 1e6
                                             : m.kv_bytes_per_request(1.0, kv_heads_gpu, kvb, layers_share, attn_tp) / c.cp;
    const double ctx = s.context_len();
    const int n_draft = s.runtime.speculative.draft_tokens;
    const double per_seq_kv = kv_request(ctx + n_draft);

    // --- activations (seed 002 §4) ---
    const double Hr = double(m.num_heads) / c.tp;
    const double qdim = m.attn == AttnKind::mla ? double(m.qk_nope_head_dim + m.qk_rope_head_dim) : double(m.head_dim);
    const double n_mb = s.micro_batches();
    const bool prefill = s.workload.phase != PhaseSel::decode;
    const bool decode = s.workload.phase != PhaseSel::prefill;
    const double C = prefill ? s.workload.prefill_tokens / n_mb : 0.0;  // micro-batches split the live chunk
    const double moe_pairs_per_token = m.is_moe() ? double(c.dp) * m.top_k / c.ep * s.routing.imbalance : 0.0;
    // gate+up in fp32 of the token's dense FFN or shared experts (seed 002 §4). The routed experts' gate+up lives in
    // the grouped-GEMM workspace below (seed 002 §5), not here as well: counting it in both was a double count.
    const double ffn_dense = m.n_dense_layers > 0 ? 2.0 * m.intermediate / c.tp : 0.0;
    const double ffn_shared = m.is_moe() ? 2.0 * m.shared_intermediate / c.tp : 0.0;
    const double ffn_per_token = std::max(ffn_dense, ffn_shared) * 4.0;
    const double seq_per_chunk = std::max(1.0, C / std::max(1, s.workload.prompt_len));
    // residual stream: bf16 hidden + residual, or hc_mult fp32 streams with hyper-connections (seed 002 §4)
    const double residual = m.hc_mult > 1 ? h * m.hc_mult * 4.0 : h * 2.0 * 2.0;
    // q, k and v of the chunk in bf16: q at the GPU's query heads; k and v at its KV heads for GQA / MHA (a GQA
    // layer's k and v projections are KV-head wide), at the query heads for MLA (prefill expands the latent to every
    // head's k and v through kv_b)
    const double kv_act_heads = m.attn == AttnKind::mla ? Hr : std::min(Hr, kv_heads_gpu);
    r.activation_prefill_bytes = C * (residual + (Hr + 2.0 * kv_act_heads) * qdim * 2.0 + ffn_per_token) +
                                 seq_per_chunk * double(m.vocab) / c.tp * 4.0;
    const double dec_tok = 1.0 + n_draft;
    const double act_per_seq = dec_tok * (residual + std::max(Hr * qdim * 2.0, h * 4.0 + ffn_per_token / 2.0)) +
                               n_draft * 2.0 * h * 2.0;  // MTP: embedding + hidden concatenated (seed 002 §7)
    // fp32 logits of every verified position, plus the draft heads' logits kept until verification (seed 002 §7)
    const double logits_per_seq = (dec_tok + n_draft) * double(m.vocab) / c.tp * 4.0;
    r.logits_bytes = (decode ? s.workload.batch * logits_per_seq : 0.0);

    // --- workspace ---
    // Contiguous layout: the grouped GEMM's fp32 accumulator of the token-expert pairs, sized for the busiest expert
    // (seed 002 §5: max tokens per expert x inter x 4, load factor over the mean).
    const double gg_ws_per_token = m.is_moe() ? moe_pairs_per_token * c.cal.grouped_load_factor * m.moe_intermediate / c.moe_tp * 4.0 : 0.0;
    const double attn_ws_per_seq = Hr * (m.attn == AttnKind::mla ? m.kv_lora_rank : m.head_dim) * 4.0 * 16.0;  // split-KV partials
    const double ws_fixed = c.cal.cublas_workspace_MB * 1e6 + offload_staging;
    // A chunked fused MoE (seed 001; runtime.moe_chunk_tokens) sizes its workspace for one chunk of the tokens that
    // enter this rank's experts.
    const double moe_chunk = s.moe_chunk(), rank_share = c.dp * moe_rank_token_share(c);
    const bool chunked_ws = m.is_moe() && moe_chunk > 0 && s.runtime.expert_layout != ExpertLayout::per_token &&
                            C * rank_share > moe_chunk;
    const double ws_prefill = (chunked_ws ? moe_chunk / rank_share : C) * gg_ws_per_token;
    const A2ABackend bp = e.prefill_backend, bd = e.decode_backend;
    const bool ll_decode = m.is_moe() && decode && (bd == A2ABackend::deepep_low_latency || bd == A2ABackend::pplx);
    const bool masked_decode = m.is_moe() && decode &&
                               (s.runtime.expert_layout == ExpertLayout::masked ||
                                (s.runtime.expert_layout == ExpertLayout::auto_ && ll_decode));
    // Tokens one GPU dispatches per decode step: the buffers below hold at least 128 (SGLang's and DeepEP's default
    // num_max_dispatch_tokens_per_rank), more when the step carries more.
    const double ll_min_tokens = 128.0;
    const double dec_tokens_per_seq_gpu = dec_tok / c.tp;
    // Batched (masked) layout (seed 001): the dispatch output is [local experts][dispatchers x max tokens per rank][K],
    // every expert's slot padded to the most tokens it could receive; the expert kernels' intermediates take the same
    // shape: gate+up (2i/moe_tp, bf16) and the activation-quantised down input (i/moe_tp).
    const double act_b = compute_of(c.g, c.w_exp, s.precision.fp4_compute) == Dtype::fp8 ? 1.0 : 2.0;
    const double masked_ws_per_token = masked_decode ? local_experts * c.ep * (2.0 * m.moe_intermediate / c.moe_tp * 2.0 +
                                                                               double(m.moe_intermediate) / c.moe_tp * act_b)
                                                     : 0.0;
    const double ws_per_seq = (masked_decode ? 0.0 : dec_tok * gg_ws_per_token) + attn_ws_per_seq;

    // --- communication buffers (seed 002 §5) ---
    double comm_fixed = 0, comm_per_seq = 0;
    if (c.tp > 1 || c.dp > 1) comm_fixed += c.cal.nccl_buffer_MB * 1e6;
    const double db = dtype_bytes(c.disp) + (c.disp == Dtype::fp8 ? 4.0 / 128 : 0), cb = dtype_bytes(c.comb);
    if (m.is_moe() && (bp == A2ABackend::deepep_normal || bd == A2ABackend::deepep_normal)) {
        const double chunk = std::max<double>(s.workload.prefill_tokens / n_mb, s.workload.batch);
        // (the dispatched width: hidden, or LatentMoE's latent)
        comm_fixed += chunk * m.top_k * std::min(1.0, double(c.gpn) / c.ep + 1.0 / c.ep) * ew * (db + cb) * 2.0;  // double-buffered
    }
    // DeepEP low-latency RDMA buffer (deepseek-ai/DeepEP csrc/config.hpp, LowLatencyLayout and
    // get_low_latency_rdma_size_hint), linear in N = num_max_dispatch_tokens_per_rank: two send and two receive
    // buffers (odd/even), each receive one holding a message for every (expert, sending token) pair: num_experts x
    // N messages, num_experts = local experts x ranks. So it does not shrink with ep. pplx's batched receive buffer
    // has the same [local experts][ranks x N][hidden] shape (seed 001) and is sized the same way here.
    double ll_slope = 0, ll_fixed = 0;  // bytes per token of N; N-independent signalling
    if (ll_decode) {
        const double E = m.num_experts + s.routing.redundant_experts;
        const double scales = std::floor(ew / 128.0);
        const double dispatch_msg = 16.0 + std::max(2.0 * ew, ew + scales * 4.0);  // int4 header + bf16, or fp8 + scales
        const double combine_msg = scales * 4.0 + 2.0 * ew;                         // bf16 + per-128 min/max
        const double send = std::max(dispatch_msg, E * combine_msg), recv = E * std::max(dispatch_msg, combine_msg);
        ll_slope = 2.0 * send + 2.0 * recv;
        ll_fixed = 2.0 * std::ceil((E * 8.0 + local_experts * 4.0) / 128.0) * 128.0 + 128.0;  // signals; alignment
    }
    // LL buffers and masked workspace at N = max(128, tokens per GPU): fixed up to 128 tokens, then per sequence.
    const double n_slope = ll_slope + masked_ws_per_token;
    const double n_tokens = std::max(ll_min_tokens, (decode ? s.workload.batch : 0.0) * dec_tokens_per_seq_gpu);
    const double masked_ws = masked_ws_per_token * n_tokens;
    comm_fixed += ll_fixed;

    // --- totals as F + per_seq * B + max(prefill peak, decode per-seq * B) ---
    const double reserve = (s.runtime.reserve_GB >= 0 ? s.runtime.reserve_GB : c.cal.reserve_GB) * 1e9;
    const double fixed = r.weights_bytes + reserve + ws_fixed + comm_fixed;
    const double per_seq_peak = decode ? act_per_seq + logits_per_seq + ws_per_seq : 0.0;
    const double prefill_peak = r.activation_prefill_bytes + ws_prefill;
    // prefill-only: the KV of the chunk's prompts is held too
    const double prefill_kv = prefill && !decode ? seq_per_chunk * kv_request(s.workload.prompt_len) : 0.0;

    const double B = decode ? s.workload.batch : 0.0;
    r.kv_cache_bytes = decode ? B * per_seq_kv : prefill_kv;
    r.linear_state_bytes_per_request = state_per_request;
    r.linear_state_bytes = (decode ? B : seq_per_chunk * (prefill ? 1.0 : 0.0)) * state_per_request;
    r.activation_decode_bytes = B * (act_per_seq + logits_per_seq);
    const bool prefill_dominates = prefill_peak >= B * per_seq_peak;
    r.activation_bytes = prefill_dominates ? r.activation_prefill_bytes : r.activation_decode_bytes;
    r.workspace_bytes = ws_fixed + masked_ws + (prefill_dominates ? ws_prefill : B * ws_per_seq);
    r.comm_buffer_bytes = comm_fixed + B * comm_per_seq + ll_slope * n_tokens;
    r.reserved_bytes = reserve;
    r.total_bytes = r.weights_bytes + r.kv_cache_bytes + r.activation_bytes + r.workspace_bytes + r.comm_buffer_bytes + r.reserved_bytes;
    r.capacity_bytes = c.g.hbm_capacity_GiB * 1073741824.0;
    r.usable_bytes = r.capacity_bytes * s.runtime.memory_fraction();
    r.fits = r.total_bytes <= r.usable_bytes;
    r.shortfall_bytes = r.fits ? 0.0 : r.total_bytes - r.usable_bytes;

    // --- largest batch at this context: F + a*B + max(P, q*B) + X*max(N0, d*B) <= U, solved exactly ---
    const double q = act_per_seq + logits_per_seq + ws_per_seq, P = prefill ? prefill_peak : 0.0;
    auto solve = [&](double U, double a) {
        if (!(U > P && a > 0)) return 0.0;
        double b1 = (U - P) / a;                // while the prefill peak dominates
        if (q * b1 > P) b1 = U / (a + q);       // decode activations dominate
        return std::max(0.0, b1);
    };
    const double U0 = r.usable_bytes - fixed - prefill_kv;
    double best = solve(U0 - n_slope * ll_min_tokens, per_seq_kv + comm_per_seq);
    if (n_slope > 0 && best * dec_tokens_per_seq_gpu > ll_min_tokens)  // past N0 the buffers grow with the batch
        best = std::max(ll_min_tokens / dec_tokens_per_seq_gpu, solve(U0, per_seq_kv + comm_per_seq + n_slope * dec_tokens_per_seq_gpu));
    r.max_batch = std::min(std::floor(best), 1e9);
    // --- largest context at this batch: the KV budget per sequence, inverted by bisection (KV is monotone) ---
    if (decode && B > 0) {
        const double budget = (r.usable_bytes - (r.total_bytes - r.kv_cache_bytes)) / B;
        if (budget <= kv_request(1.0)) {
            r.max_context = 0;
        } else if (!m.compressed_kv() && m.n_window_layers == 0 && !mtp_kv) {
            // linear in the context: invert directly, then round down to whole blocks
            const double rate = m.kv_bytes_per_request(1.0, kv_heads_gpu, kvb, layers_share, attn_tp) / c.cp;
            r.max_context = std::min(1e9, std::floor((budget - state_per_request) / rate / block) * block);
        } else {
            // The largest whole context that fits, rounded down to whole blocks. kv_request is monotone in the
            // context (every term is, and so is rounding) and constant over each block ((k - 1) x block, k x block],
            // so that context is k x block for the largest k whose kv_request(k x block) fits: found by bisection
            // over k, started from where the cache's straight line beyond its windows meets the budget (a few
            // evaluations instead of ~50). The same answer as doubling from 1 to past the context, then bisecting:
            // contexts from 2^29 on are reported as 1e9 (windowed/compressed caches may never fill).
            const double x_top = 536870912.0;  // 2^29: the last power of two below 1e9
            const double f_top = kv_request(x_top);
            if (f_top <= budget) {
                r.max_context = 1e9;
            } else {
                double k_lo = 1, k_hi = std::ceil(x_top / block);  // kv_request fits at k_lo x block, not at k_hi's
                const double slope = (f_top - kv_request(x_top / 2)) / (x_top / 2);
                const double guess = std::floor((x_top - (f_top - budget) / slope) / block);
                if (slope > 0 && std::isfinite(guess) && guess > k_lo && guess < k_hi) {
                    // gallop out from the guess until the answer is bracketed
                    const bool fits = kv_request(guess * block) <= budget;
                    (fits ? k_lo : k_hi) = guess;
                    for (double step = 1;; step *= 2) {
                        const double k = fits ? k_lo + step : k_hi - step;
                        if (k <= k_lo || k >= k_hi) break;
                        if ((kv_request(k * block) <= budget) != fits) {
                            (fits ? k_hi : k_lo) = k;
                            break;
                        }
                        (fits ? k_lo : k_hi) = k;
                    }
                }
                while (k_hi - k_lo > 1) {
                    const double mid = std::floor((k_lo + k_hi) / 2);
                    (kv_request(mid * block) <= budget ? k_lo : k_hi) = mid;
                }
                r.max_context = k_lo * block;
            }
        }
    }
    // whole bytes (field by field rather than a loop over a table of pointers: ~90 instructions less per estimate)
    auto whole = [](double& v) { v = std::ceil(v); };
    whole(r.weights_bytes);
    whole(r.kv_cache_bytes);
    whole(r.activation_bytes);
    whole(r.workspace_bytes);
    whole(r.comm_buffer_bytes);
    whole(r.reserved_bytes);
    whole(r.weights_attention_bytes);
    whole(r.weights_experts_bytes);
    whole(r.weights_shared_bytes);
    whole(r.weights_dense_ffn_bytes);
    whole(r.weights_embedding_bytes);
    whole(r.weights_other_bytes);
    whole(r.weights_mtp_bytes);
    whole(r.activation_prefill_bytes);
    whole(r.activation_decode_bytes);
    whole(r.logits_bytes);
    whole(r.linear_state_bytes);
    whole(r.linear_state_bytes_per_request);
    whole(r.offloaded_experts_bytes);
    r.total_bytes = r.weights_bytes + r.kv_cache_bytes + r.activation_bytes + r.workspace_bytes + r.comm_buffer_bytes + r.reserved_bytes;
    r.capacity_bytes = std::floor(r.capacity_bytes);
    r.usable_bytes = std::floor(r.usable_bytes);
    r.fits = r.total_bytes <= r.usable_bytes;
    r.shortfall_bytes = r.fits ? 0.0 : r.total_bytes - r.usable_bytes;
    const double world = double(c.tp) * c.dp * c.pp;
    r.cluster_weights_bytes = r.weights_bytes * world;
    r.cluster_kv_cache_bytes = r.kv_cache_bytes * world;
    r.cluster_max_batch = r.max_batch * c.dp;
}

}  // namespace moe::detail
