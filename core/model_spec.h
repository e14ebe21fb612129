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
// layer_types / use_sliding_window / max_window_layers; tie_word_embeddings; quantization_config; text_config nesting.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "types.h"

namespace moe {

enum class AttnKind : std::uint8_t { mha, gqa, mla };
const char* attn_kind_name(AttnKind k);

struct LayerDesc {
    bool moe = false;   // routed-expert FFN (else dense FFN)
    int window = 0;     // sliding-window / chunked attention length in tokens; 0 = full attention
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
    bool shared_gate = false;   // Qwen2-MoE style sigmoid gate on the shared expert
    int mtp_layers = 0;         // num_nextn_predict_layers
    int hc_mult = 1;            // hyper-connections: residual streams kept per token (seed 002 §4)
    std::vector<LayerDesc> layers;  // one per hidden layer
    // Compressed sparse attention (seed 002 §3, DeepSeek-V4 style): per-layer compression ratio (0 = sliding window
    // only, 4 = CSA with an indexer, else HCA), the uncompressed local window and the indexer head dim.
    std::vector<int> compress_ratios;
    int compress_window = 0;
    int index_head_dim = 0;
    // Checkpoint formats
    Dtype dtype = Dtype::bf16;          // torch_dtype (non-quantised parts)
    Dtype weight_dtype = Dtype::bf16;   // quantised linear layers (quantization_config), else dtype
    Dtype expert_dtype = Dtype::bf16;   // routed experts (gpt-oss: mxfp4 experts, bf16 attention)
    // Derived
    int n_moe_layers = 0;
    int n_dense_layers = 0;
    int n_window_layers = 0;
    std::vector<std::pair<int, int>> window_groups;  // (window, layers) of the sliding-window layers
    double total_params = 0;    // incl. embeddings (and LM head when untied), excl. MTP modules
    double active_params = 0;   // per token: attention + top_k routed + shared + dense + embed + head
    double active_compute_params = 0;  // active minus the input-embedding lookup (OpenAI's convention)
    double mtp_params = 0;

    bool is_moe() const { return num_experts > 0; }
    bool compressed_kv() const { return !compress_ratios.empty(); }
    // KV-cache bytes of one request with `seq` tokens on `layers_share` of the layers (1 = all), kv heads per GPU
    // `kv_heads_gpu` (MHA/GQA), entries of `kv_bytes`. Sliding windows and compressed layers included; the
    // indexer of CSA layers is stored in FP4 (seed 002 §3).
    double kv_bytes_per_request(double seq, double kv_heads_gpu, double kv_bytes, double layers_share) const;
    // KV elements per token per layer (all heads, before TP sharding): MLA = kv_lora_rank + rope; else 2·Hkv·d.
    double kv_elems_per_token_layer() const;
    // Parameter counts of one layer's parts (unsharded).
    double attn_params() const;
    double expert_params() const { return 3.0 * hidden * moe_intermediate; }
    double shared_params() const { return 3.0 * hidden * shared_intermediate; }
    double dense_ffn_params() const { return 3.0 * hidden * intermediate; }
    double router_params() const { return double(num_experts) * hidden; }
};

// Parses an HF config (nested text_config is followed). `path` prefixes field names in errors.
ModelSpec parse_hf_config(const nlohmann::json& cfg, const std::string& path, Issues& errors);

}  // namespace moe
