// model_spec.h — a model as the roofline needs it, parsed from any HuggingFace config.json.
//
//   moe::Issues errs;
//   moe::ModelSpec m = moe::parse_hf_config(json, "model", errs);   // errs names fields like "model.hidden_size"
//   m.total_params, m.active_params, m.layers (per-layer kind)
//
// Accepted spellings: num_experts / num_local_experts / n_routed_experts / num_routed_experts; num_experts_per_tok;
// moe_intermediate_size; n_shared_experts / num_shared_experts / shared_expert_intermediate_size;
// first_k_dense_replace, moe_layer_freq, decoder_sparse_step, mlp_only_layers, interleave_moe_layer_step;
// MLA (q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim); head_dim; sliding_window with
// layer_types / use_sliding_window / max_window_layers; tie_word_embeddings; quantization_config; text_config nesting;
// Gated DeltaNet linear attention (Qwen3-Next, Qwen3.5: layer_types "linear_attention" or full_attention_interval,
// linear_num_key_heads / linear_num_value_heads / linear_key_head_dim / linear_value_head_dim / linear_conv_kernel_dim,
// mamba_ssm_dtype) and the output gate of their full-attention layers (attn_output_gate); Mamba-2 hybrids (Nemotron-H,
// Nemotron-3: hybrid_override_pattern or layers_block_type, one block per layer; mamba_num_heads, mamba_head_dim,
// ssm_state_size, n_groups, conv_kernel, chunk_size, mamba_ssm_cache_dtype; relu2 MLPs and experts of two matrices,
// moe_shared_expert_intermediate_size) and LatentMoE (moe_latent_size: Nemotron-3 Super / Ultra); the DSA indexer
// (index_n_heads, index_head_dim: DeepSeek-V3.2, GLM-5, DeepSeek-V4); DeepSeek-V4's grouped low-rank output
// (o_lora_rank, o_groups), hyper-connections (hc_mult) and FP4 experts (expert_dtype); MiniMax-M3's block-sparse
// attention (sparse_attention_config) and its FFN widths (dense_intermediate_size, shared_intermediate_size);
// Gemma-4's global-attention layers (global_head_dim, num_global_key_value_heads, attention_k_eq_v) and its MoE block
// beside the dense MLP (enable_moe_block, num_experts, top_k_experts); Kimi-K3's Kimi Delta Attention
// (linear_attn_config), MLA output gate (mla_use_output_gate), latent routed experts (routed_expert_hidden_size,
// latent_moe_use_norm) and attention residuals (attn_res_block_size); MiMo-V2's hybrid attention
// (hybrid_layer_pattern with swa_* heads and widths, attention sink biases); Nemotron NAS block_configs (per-layer
// n_heads_in_group, ffn_mult, no_op, replace_with_linear). Per-layer parsing: model_layers.cpp, model_kda.cpp.
#pragma once
#include <nlohmann/json.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "core/base/types.h"

namespace moe {

enum class AttnKind : std::uint8_t { mha, gqa, mla };
const char* attn_kind_name(AttnKind k);

// What mixes tokens in a layer: softmax attention (MHA / GQA / MLA, maybe windowed), Gated DeltaNet linear
// attention or a Mamba-2 mixer (both a fixed-size recurrent state per request instead of a KV cache), or nothing (a
// Nemotron-H MLP or MoE block, which is a layer of its own).
// Kimi Delta Attention (Kimi-K3) is a gated_deltanet layer of a model with ModelSpec::kda set (the same recurrent
// state per head, a per-channel forget gate); `linear` is a Nemotron NAS layer whose attention is one hidden x hidden
// linear map (replace_with_linear).
enum class Mixer : std::uint8_t { attention, gated_deltanet, mamba2, none, linear };
const char* mixer_name(Mixer k);

struct LayerDesc {
    bool moe = false;   // routed-expert FFN (else dense FFN)
    int window = 0;     // sliding-window / chunked attention length in tokens; 0 = full attention
    Mixer mixer = Mixer::attention;
    // DeepSeek-V4 compressed attention (compress_ratios): besides its `window` of uncompressed tokens, the layer
    // attends to compressed entries, one per `compress` tokens: 4 = CSA (the indexer picks index_topk of them),
    // larger = HCA (all of them); 0 = no compressed part (a V4 SWA layer, or any other model's layer).
    int compress = 0;
    // false: the layer has no FFN (a Nemotron-H mixer block: its Mamba-2 or attention block is a layer of its own).
    bool ffn = true;
    // MiniMax Sparse Attention (MiniMax-M3's sparse_attention_freq): a lightweight indexer scores every cached key
    // and each query attends to the sparse_topk_blocks blocks of sparse_block_size keys it picks.
    bool sparse = false;
    // A softmax-attention layer's own shape where it differs from the model's (MiMo-V2's sliding-window layers,
    // Nemotron NAS's per-layer KV heads); 0 = the model's num_attention_heads / num_key_value_heads / head_dim, and
    // V as wide as K. GQA / MHA layers only.
    int q_heads = 0, kv_heads = 0, head_dim = 0, v_head_dim = 0;
    bool sinks = false;  // a learned attention-sink bias per query head (MiMo-V2): parameters only
    // A dense FFN's own width (Nemotron NAS ffn_mult); 0 = the model's intermediate_size. ffn_linear: the FFN is one
    // hidden x hidden linear map (replace_with_linear).
    int ffn_inter = 0;
    bool ffn_linear = false;
    bool own_attention() const { return q_heads > 0 || kv_heads > 0 || head_dim > 0 || v_head_dim > 0; }
};

struct ModelSpec {
    std::string name;           // display name (preset id or config's model_type)
    std::string model_type;     // HF model_type
    int num_layers = 0;
    int hidden = 0;
    int num_heads = 0;
    int num_kv_heads = 0;
    int head_dim = 0;           // q/k/v head dim for MHA/GQA
    int vocab = 0;
    bool tie_embeddings = false;
    bool qkv_bias = false;
    AttnKind attn = AttnKind::gqa;
    // MLA (DeepSeek-V2/V3, Kimi-K2)
    int q_lora_rank = 0;        // 0: q projected directly
    int kv_lora_rank = 0;
    int qk_nope_head_dim = 0;
    int qk_rope_head_dim = 0;
    int v_head_dim = 0;
    // FFN
    int intermediate = 0;       // dense FFN intermediate (dense layers)
    int num_experts = 0;        // routed experts (0 = dense model)
    int top_k = 0;
    int n_group = 1;            // expert groups for node-limited routing (DeepSeek: 8)
    int topk_group = 1;         // groups a token may use (DeepSeek: 4); 1 group = unconstrained when n_group = 1
    int moe_intermediate = 0;   // per routed expert
    int shared_intermediate = 0;  // total intermediate of the shared expert(s) (n_shared * moe_inter, or explicit)
    // LatentMoE (moe_latent_size; Nemotron-3 Super / Ultra): the routed path projects each token from hidden to this
    // width (fc1_latent_proj), dispatches it, runs the routed experts with it as their input and output width, and
    // projects the combined result back (fc2_latent_proj); router and shared experts stay at hidden. 0 = none.
    int moe_latent = 0;
    bool latent_bias = false;   // the latent projections carry biases (mlp_bias)
    bool shared_gate = false;   // Qwen2-MoE style sigmoid gate on the shared expert
    int mtp_layers = 0;         // num_nextn_predict_layers
    int hc_mult = 1;            // hyper-connections: residual streams kept per token (seed 002 §4)
    std::vector<LayerDesc> layers;  // one per hidden layer
    // The distinct kinds of `layers` (MoE or dense, window, mixer, compression) in order of first appearance, with how
    // many layers each has: the step model times one layer per kind (set with the layers; step.cpp).
    struct LayerKind {
        LayerDesc d;
        int count = 0;
    };
    std::vector<LayerKind> layer_kinds;
    // Compressed sparse attention (seed 002 §3, DeepSeek-V4 style): per-layer compression ratio (0 = sliding window
    // only, 4 = CSA with an indexer, else HCA), the uncompressed local window and the indexer head dim.
    std::vector<int> compress_ratios;
    int compress_window = 0;
    int index_head_dim = 0;
    // DSA lightning indexer (DeepSeek-V3.2, GLM-5; DeepSeek-V4 on its CSA layers): heads x head dim scoring keys,
    // and the keys (DSA: tokens; CSA: compressed entries) each query then attends to (index_topk, default 2048).
    int index_n_heads = 0;
    int index_topk = 0;
    // DeepSeek-V4 attention: one shared KV head of head_dim, q through q_lora_rank, output through o_groups
    // grouped low-rank projections of o_lora_rank each (0 = a plain o_proj).
    int o_lora_rank = 0;
    int o_groups = 0;
    // MiniMax Sparse Attention (MiniMax-M3; layers with LayerDesc::sparse): an indexer of index_n_heads query heads
    // (sharded like the KV heads) against one key head of index_head_dim, both projected from the hidden state;
    // keys are scored one by one, max-pooled over blocks of sparse_block_size, and each query attends to the
    // sparse_topk_blocks best blocks, its own (sparse_local_blocks) and the first sparse_init_blocks forced among them.
    int sparse_block_size = 0;   // 0: no block-sparse attention
    int sparse_topk_blocks = 0;
    int sparse_local_blocks = 0;
    int sparse_init_blocks = 0;
    // Gemma-4's global layers (the full-attention layers of a model with global_head_dim): their own head width and
    // KV heads, and with attention_k_eq_v no v_proj (V is the K projection, normed apart from K).
    int global_head_dim = 0;     // 0: full-attention layers are shaped like the others
    int global_kv_heads = 0;
    bool global_k_eq_v = false;
    // Gemma-4: RMSNorms per decoder layer beyond the two counted for every model (its sandwich norms: 4 per layer, 7
    // with the MoE block), and router weights beyond the experts x hidden projection (a scale per hidden dim and one
    // per expert).
    int extra_norms_per_layer = 0;
    double router_extra_params = 0;
    // Kimi-K3 (model_kda.cpp): its gated_deltanet layers are Kimi Delta Attention (lin_* give their heads and widths);
    // kda_full_rank_gate: the output gate is one hidden x (heads x dim) projection (else low rank through head_dim).
    bool kda = false;
    bool kda_full_rank_gate = false;
    bool mla_output_gate = false;   // MLA with a sigmoid output gate per head and value dim (g_proj, mla_use_output_gate)
    bool latent_norm = false;       // an RMSNorm over the routed experts' latent output (latent_moe_use_norm)
    // Attention residuals (attn_res_block_size): each sublayer's input is a softmax mix of the block summaries so far
    // and the running sum; attn_res_reads is the mean number of hidden-size vectors one layer's two mixes read per
    // token (0 = plain residuals).
    int attn_res_block = 0;
    double attn_res_reads = 0;
    // Nemotron NAS (block_configs): layers priced one by one from their own blocks (params summed per layer).
    bool per_layer_blocks = false;
    bool attn_output_gate = false;  // q_proj also yields a sigmoid gate per head and dim (Qwen3-Next, Qwen3.5)
    // Gated DeltaNet (layers with LayerDesc::mixer == gated_deltanet): q/k heads, v heads, their dims, the short
    // causal convolution's kernel, and the recurrent state's storage format (config mamba_ssm_dtype, else fp32).
    int lin_num_k_heads = 0;
    int lin_num_v_heads = 0;
    int lin_k_head_dim = 0;
    int lin_v_head_dim = 0;
    int lin_conv_kernel = 0;
    Dtype lin_state_dtype = Dtype::fp32;
    // Mamba-2 (layers with LayerDesc::mixer == mamba2; Dao & Gu, "Transformers are SSMs"): heads x head dim = the inner
    // width d_inner, n_groups groups of B and C of ssm_state_size each, the causal conv's kernel (with a bias when
    // use_conv_bias), the SSD scan's chunk, and the SSM state's storage format (mamba_ssm_cache_dtype, else fp32).
    int ssm_num_heads = 0;
    int ssm_head_dim = 0;
    int ssm_state_size = 0;
    int ssm_groups = 0;
    int ssm_conv_kernel = 0;
    int ssm_chunk = 0;
    bool ssm_conv_bias = false;
    bool ssm_proj_bias = false;
    Dtype ssm_state_dtype = Dtype::fp32;
    // Nemotron-H: every layer is one block (one RMSNorm before it, a residual add after), and its MLPs and experts are
    // up_proj and down_proj around relu^2 (2 matrices; 3 in the gated SwiGLU FFNs of the other models).
    bool single_block_layers = false;
    int ffn_matrices = 3;
    // Checkpoint formats
    Dtype dtype = Dtype::bf16;          // torch_dtype (non-quantised parts)
    Dtype weight_dtype = Dtype::bf16;   // quantised linear layers (quantization_config), else dtype
    Dtype expert_dtype = Dtype::bf16;   // routed experts (gpt-oss: mxfp4 experts, bf16 attention)
    Dtype ffn_dtype = Dtype::bf16;      // dense FFN layers, shared experts and LatentMoE's projections
    // What the checkpoint's exclusion list (quant_exclusions.cpp) leaves unquantised: the share of each component's
    // weights it names (a component is in `dtype` when more than half is), and whether it names the MTP module.
    struct QuantExcluded {
        double attention = 0, ffn = 0, experts = 0;
        bool mtp = false;   // the MTP module's weights stay in `dtype`
        int patterns = 0;   // entries of the list
    };
    QuantExcluded quant_excluded;
    bool fp8_block_scaled = false;      // FP8 weights in 128 x 128 scaled blocks (weight_block_size; strategy "block")
    // Derived
    int n_moe_layers = 0;
    int n_dense_layers = 0;
    int n_window_layers = 0;
    int n_linear_layers = 0;    // Gated DeltaNet layers (no KV cache)
    int n_mamba_layers = 0;     // Mamba-2 layers (no KV cache)
    int n_mixerless_layers = 0; // layers without a mixer (Nemotron-H MLP / MoE blocks)
    int n_sparse_layers = 0;    // block-sparse attention layers (MiniMax-M3)
    int n_global_layers = 0;    // Gemma-4 global layers (is_global)
    int n_proj_layers = 0;      // Nemotron NAS layers whose attention is one linear map (Mixer::linear, no KV)
    std::vector<std::pair<int, int>> window_groups;  // (window, layers) of the sliding-window layers
    double total_params = 0;    // incl. embeddings (and LM head when untied), excl. MTP modules
    double active_params = 0;   // per token: attention + top_k routed + shared + dense + embed + head
    double active_compute_params = 0;  // active minus the input-embedding lookup (OpenAI's convention)
    double mtp_params = 0;      // the MTP modules' own weights (not the embedding and LM head they share)

    bool is_moe() const { return num_experts > 0; }
    bool compressed_kv() const { return !compress_ratios.empty(); }
    bool has_linear_attention() const { return n_linear_layers > 0; }
    // Layers with softmax attention (the ones that keep a KV cache).
    int n_attention_layers() const { return num_layers - n_linear_layers - n_mamba_layers - n_mixerless_layers - n_proj_layers; }
    // DeepSeek-V3.2 / GLM-5 sparse attention: an MLA model whose every layer has the lightning indexer.
    bool dsa() const { return index_n_heads > 0 && !compressed_kv() && !block_sparse(); }
    // MiniMax-M3's block-sparse attention on its LayerDesc::sparse layers.
    bool block_sparse() const { return sparse_block_size > 0; }
    // Keys a query of a block-sparse layer attends to at most: its top-k blocks (the forced local and initial blocks
    // are among them).
    double sparse_keys() const { return double(sparse_topk_blocks) * sparse_block_size; }
    // The block-sparse indexer's weights on one layer: index_q (hidden -> index heads x dim), index_k (hidden -> one
    // head) and their two RMSNorms of index_head_dim.
    double sparse_indexer_params() const {
        return double(hidden) * index_n_heads * index_head_dim + double(hidden) * index_head_dim + 2.0 * index_head_dim;
    }
    // Bytes one token keeps per block-sparse layer in the indexer's key cache: one key of index_head_dim in the
    // model's dtype (the engines keep it unquantised when the KV cache is FP8); 0 on a model without the layers.
    double sparse_index_bytes_per_token_layer() const;
    // Bytes one token keeps per layer in the DSA indexer's key cache: index_head_dim FP8 values plus one FP32 scale
    // per 128 (DeepSeek-V3.2's indexer cache layout); 0 without DSA.
    double dsa_index_bytes_per_token_layer() const {
        return dsa() ? index_head_dim * (1.0 + 4.0 / 128.0) : 0.0;
    }
    // One compressed-KV entry of DeepSeek-V4 (seed 002 §3): the nope part in FP8, the rope part in BF16.
    double compressed_entry_bytes() const;
    // The MTP module's decoder layer (its attention kind: V4 gives it the compress_ratios entry after the main layers).
    LayerDesc mtp_layer;
    // KV-cache bytes of one request with `seq` tokens in the MTP modules' layers (each keeps a cache of its own).
    double mtp_kv_bytes_per_request(double seq, double kv_heads_gpu, double kv_bytes) const;
    // KV-cache bytes of one request with `seq` tokens on `layers_share` of the layers (1 = all), kv heads per GPU
    // `kv_heads_gpu` (MHA/GQA), entries of `kv_bytes`. Sliding windows and compressed layers included; the
    // indexer of CSA layers is stored in FP4 (seed 002 §3).
    // Only softmax-attention layers keep a KV cache; Gated DeltaNet layers keep linear_state_bytes_per_request.
    // `attn_tp` (tp / cp) splits the KV heads of layers with their own shape (LayerDesc::own_attention); 0 = derived as
    // num_key_value_heads / kv_heads_gpu (exact unless the model's heads are replicated).
    double kv_bytes_per_request(double seq, double kv_heads_gpu, double kv_bytes, double layers_share, double attn_tp = 0) const;
    // The fixed recurrent state of one request on one GPU over `layers_share` of the layers: per Gated DeltaNet
    // layer, the delta-rule state (v heads x k dim x v dim in lin_state_dtype) and the causal-conv state
    // ((conv_kernel - 1) x conv channels in the model's dtype), heads split over `tp` (replicated past their count);
    // plus mamba_state_bytes_per_request.
    double linear_state_bytes_per_request(int tp, double layers_share) const;
    // The same for the Mamba-2 layers: per layer the SSM state (heads x head dim x ssm_state_size in ssm_state_dtype)
    // and the conv state ((conv_kernel - 1) x (d_inner + 2 n_groups ssm_state_size) in the model's dtype), heads and
    // groups split over `tp` (replicated past their count).
    double mamba_state_bytes_per_request(int tp, double layers_share) const;
    // KV elements per token per layer (all heads, before TP sharding): MLA = kv_lora_rank + rope; else 2·Hkv·d.
    double kv_elems_per_token_layer() const;
    // Parameter counts of one layer's parts (unsharded).
    double attn_params() const;          // a softmax-attention layer (with the DSA indexer, V4 compressor)
    double linear_attn_params() const;   // a Gated DeltaNet layer (Kimi Delta Attention with kda)
    double kda_params() const;           // a Kimi Delta Attention layer (model_kda.cpp)
    // A layer's softmax-attention shape (its own where LayerDesc sets one, else the model's) and the parameters of a
    // GQA / MHA layer of that shape (with its sink biases); model_layers.cpp.
    struct AttnDims {
        int heads, kv_heads, head_dim, v_head_dim;
    };
    AttnDims attn_dims(const LayerDesc& l) const;
    double own_attn_params(const LayerDesc& l) const;
    // A dense FFN layer's parameters: its own width, a linear map, or the model's.
    double layer_ffn_params(const LayerDesc& l) const;
    // A Nemotron NAS layer (per_layer_blocks): its mixer, its FFN and the norm before each that is there.
    double block_params(const LayerDesc& l) const;
    // Over the layers with their own attention shape or sinks: their parameters less the model-wide layer's.
    double own_attention_delta() const;
    double mamba_params() const;         // a Mamba-2 mixer (its block's RMSNorm aside)
    double mamba_inner() const { return double(ssm_num_heads) * ssm_head_dim; }               // d_inner
    double mamba_bc_dim() const { return 2.0 * ssm_groups * ssm_state_size; }                 // B and C
    double mamba_conv_dim() const { return mamba_inner() + mamba_bc_dim(); }                  // x, B, C convolved
    double mamba_in_proj_dim() const { return 2.0 * mamba_inner() + mamba_bc_dim() + ssm_num_heads; }  // z, xBC, dt
    double lin_key_dim() const { return double(lin_num_k_heads) * lin_k_head_dim; }
    double lin_value_dim() const { return double(lin_num_v_heads) * lin_v_head_dim; }
    double lin_conv_dim() const { return 2.0 * lin_key_dim() + lin_value_dim(); }  // q, k and v are convolved
    // The width a routed expert reads and writes, and the all-to-all carries per token: moe_latent_size, else hidden.
    int expert_width() const { return moe_latent > 0 ? moe_latent : hidden; }
    double expert_params() const { return double(ffn_matrices) * expert_width() * moe_intermediate; }
    // LatentMoE's fc1_latent_proj (hidden -> latent) and fc2_latent_proj (latent -> hidden) of one MoE layer.
    double latent_proj_params() const {
        return moe_latent > 0 ? 2.0 * hidden * moe_latent + (latent_bias ? double(moe_latent) + hidden : 0.0) +
                                    (latent_norm ? double(moe_latent) : 0.0)
                              : 0.0;
    }
    double shared_params() const { return double(ffn_matrices) * hidden * shared_intermediate; }
    double dense_ffn_params() const { return double(ffn_matrices) * hidden * intermediate; }
    double router_params() const { return double(num_experts) * hidden + router_extra_params; }
    // An EAGLE-3 draft head for this target (EAGLE-3, Li et al. 2025; SGLang llama_eagle3.py, the EAGLE repo's
    // cnets.py): one decoder layer whose q, k, v read the embedding and the hidden state concatenated (2h inputs; the
    // target's heads), o_proj and the MLP at h and intermediate_size, fc fusing three target hidden states (3h x h),
    // four RMSNorms (input, hidden, post-attention, final) and an LM head over its own draft vocabulary
    // (draft_vocab_size 32,000 in yuhuili/EAGLE3-LLaMA3.1-Instruct-8B and the SpecForge heads; the target's vocabulary
    // when smaller), mapped back by a d2t table; the embedding is the target's. On an MLA / other-kind target the
    // layer's attention is priced as the target's kind, at h inputs.
    double eagle3_draft_vocab() const { return vocab > 0 ? std::min(32000.0, double(vocab)) : 32000.0; }
    double eagle3_qkv_extra_params() const {  // the embedding half of the 2h-wide q, k, v inputs (GQA / MHA)
        return attn == AttnKind::mla ? 0.0 : double(hidden) * (double(num_heads) + 2.0 * num_kv_heads) * head_dim;
    }
    double eagle3_head_params() const {
        const double h = hidden;
        return attn_params() + eagle3_qkv_extra_params() + 3.0 * h * intermediate + 3.0 * h * h + h * eagle3_draft_vocab() +
               4.0 * h;
    }
    // A Gemma-4 global layer (full attention in a model with global_head_dim).
    bool is_global(const LayerDesc& l) const { return global_head_dim > 0 && l.mixer == Mixer::attention && l.window == 0; }
    double global_attn_params() const;  // one global layer's attention (model_attention_kinds.cpp)
    // RMSNorm weights of one decoder layer: before the attention and before the FFN, and in MLA the norms of the q
    // and KV latents (q_a_layernorm, kv_a_layernorm): DeepSeek-V3's four (seed 002 §2 "4 norms").
    // DeepSeek-V4's attention has the same two latent norms (q_norm over q_lora_rank, kv_norm over its one KV head).
    // A Nemotron-H layer is one block with one norm.
    double norm_params_per_layer() const {
        if (single_block_layers) return double(hidden);
        return (2.0 + extra_norms_per_layer) * hidden + (attn == AttnKind::mla ? double(q_lora_rank) + kv_lora_rank : 0.0) +
               (o_lora_rank > 0 ? double(q_lora_rank) + head_dim : 0.0);
    }
    // Hyper-connection weights of one decoder layer (DeepSeek-V4, seed 002 §2): before the attention and before the
    // FFN, a map from the hc_mult * hidden streams to (2 + hc_mult) * hc_mult mixing weights (hc_attn_fn, hc_ffn_fn),
    // kept in FP32 and replicated on every GPU; 0 without hyper-connections.
    double hc_params_per_layer() const {
        return hc_mult > 1 ? 2.0 * (2.0 + hc_mult) * hc_mult * (double(hc_mult) * hidden) : 0.0;
    }
};

// Parses an HF config (nested text_config is followed). `path` prefixes field names in errors.
ModelSpec parse_hf_config(const nlohmann::json& cfg, const std::string& path, Issues& errors);

// Mamba-2 hybrids (core/scenario/model_recurrent.cpp; parse_hf_config calls them): the blocks of
// hybrid_override_pattern / layers_block_type as layers (empty when the config has neither; an unknown block is an
// error naming its index), and the Mamba-2 mixer's keys into `m`.
std::vector<LayerDesc> parse_hybrid_blocks(const nlohmann::json& cfg, const std::string& path, Issues& errors);
void read_mamba_mixer(const nlohmann::json& cfg, const std::string& path, ModelSpec& m, Issues& errors);

// MiniMax-M3 (core/scenario/model_attention_kinds.cpp; parse_hf_config calls them once `m.layers` exist):
// sparse_attention_config into the block-sparse fields and LayerDesc::sparse (a bad entry is an error naming it), and
// the FFN widths given by their own keys (dense_intermediate_size for the dense layers, shared_intermediate_size per
// shared expert).
void read_block_sparse_attention(const nlohmann::json& cfg, const std::string& path, ModelSpec& m, Issues& errors);
void read_ffn_widths(const nlohmann::json& cfg, const std::string& path, ModelSpec& m, Issues& errors);
// Gemma-4 (same file): the global layers' shape (once the windows are set) and the MoE block, whose dense MLP beside
// the routed experts is costed as a shared expert of intermediate_size.
void read_global_attention(const nlohmann::json& cfg, const std::string& path, ModelSpec& m, Issues& errors);
void read_moe_block(const nlohmann::json& cfg, const std::string& path, ModelSpec& m, Issues& errors);
// MiMo-V2 (same file; once the layers exist): hybrid_layer_pattern's sliding-window and full layers, each with its own
// heads, KV heads, K and V head widths, and attention sinks.
void read_hybrid_attention(const nlohmann::json& cfg, const std::string& path, ModelSpec& m, Issues& errors);
// Nemotron NAS (core/scenario/model_layers.cpp): block_configs as layers (empty without the key; a block we do not
// model is refused naming its key); sets the model-wide KV heads and widest FFN the other readers check.
std::vector<LayerDesc> read_block_configs(const nlohmann::json& cfg, const std::string& path, ModelSpec& m, Issues& errors);
// Kimi-K3 (core/scenario/model_kda.cpp; once the layers exist): linear_attn_config's KDA layers, the MLA output gate,
// the latent routed experts and the attention residuals.
void read_kimi_linear(const nlohmann::json& cfg, const std::string& path, ModelSpec& m, Issues& errors);

// The exclusion list of a quantised checkpoint (quant_exclusions.cpp; parse_hf_config calls it once `m.layers` exist):
// ModelOpt globs, compressed-tensors `re:` patterns or bare module names, matched against each layer's module names;
// each component (attention, dense FFN + shared experts, routed experts) takes `m.dtype` when more than half of its
// weights are named (unless `per_module`: a ModelOpt MIXED_PRECISION file, whose quantized_layers set the formats),
// and the MTP module when it is named. An `re:` pattern beyond the supported syntax is an error at `path`.
void apply_quant_exclusions(const std::vector<std::string>& patterns, const std::string& path, bool per_module, ModelSpec& m,
                            Issues& errors);

// The distinct kinds of `layers` in order of first appearance, with their counts (ModelSpec::layer_kinds).
std::vector<ModelSpec::LayerKind> layer_kinds_of(const std::vector<LayerDesc>& layers);

}  // namespace moe
