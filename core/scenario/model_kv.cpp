// model_kv.cpp — what a request keeps per layer: the KV cache of every softmax-attention kind (MHA / GQA with sliding
// windows, Gemma-4's global layers, MLA, the DSA and block-sparse indexers' keys, DeepSeek-V4's compressed entries) and
// the MTP layers' own cache. Split from model_spec.cpp (the parser); the recurrent states are in model_recurrent.cpp.
#include <algorithm>
#include <cmath>

#include "core/scenario/model_spec.h"

namespace moe {

double ModelSpec::kv_elems_per_token_layer() const {
    if (attn == AttnKind::mla) return double(kv_lora_rank + qk_rope_head_dim);
    return 2.0 * num_kv_heads * head_dim;
}

double ModelSpec::compressed_entry_bytes() const {
    // nope part in fp8, rope part in bf16 (seed 002 §3: 448 x 1 + 64 x 2 = 576 bytes for head_dim 512)
    const double rope = qk_rope_head_dim > 0 ? qk_rope_head_dim : 64;
    return std::max(0.0, head_dim - rope) * 1.0 + rope * 2.0;
}

namespace {
// KV bytes of one request in one DeepSeek-V4 layer of compression `ratio` (0: its window only), window `win`:
// the window's uncompressed entries, one compressed entry per `ratio` tokens, and on CSA layers (ratio 4) the
// indexer's FP4 keys of index_head_dim per compressed entry (seed 002 §3).
double compressed_layer_bytes(const ModelSpec& m, int ratio, double seq) {
    const double win = m.compress_window, entry = m.compressed_entry_bytes();
    if (ratio <= 0) return std::min(win, seq) * entry;
    const double compressed = std::floor(seq / ratio);
    const double indexer = ratio == 4 ? compressed * m.index_head_dim * 0.5 : 0.0;
    return (std::min(win, seq) + compressed) * entry + indexer;
}
}  // namespace

double ModelSpec::kv_bytes_per_request(double seq, double kv_heads_gpu, double kv_bytes, double share, double attn_tp) const {
    double total = 0;
    if (compressed_kv()) {
        // The main layers' entries of compress_ratios (V4 configs list the MTP layer's after them).
        for (const LayerDesc& l : layers) total += compressed_layer_bytes(*this, l.compress, seq);
        return total * share;
    }
    const double per_token_layer = attn == AttnKind::mla ? double(kv_lora_rank + qk_rope_head_dim) * kv_bytes
                                                         : 2.0 * kv_heads_gpu * head_dim * kv_bytes;
    total = double(n_attention_layers() - n_window_layers - n_global_layers) * seq;  // Gated DeltaNet and Mamba-2 layers keep no KV
    for (const auto& [window, count] : window_groups) total += count * std::min(seq, double(window));
    // Gemma-4's global layers: K and V of global_head_dim for their own KV heads (per GPU in proportion to the other
    // layers', at least one)
    const double global_kv_gpu = std::max(1.0, kv_heads_gpu * global_kv_heads / std::max(1, num_kv_heads));
    const double global = double(n_global_layers) * seq * 2.0 * global_kv_gpu * global_head_dim * kv_bytes;
    // DSA: every layer also caches the indexer's key of every token (the window, if any, does not limit it);
    // block-sparse attention (MiniMax-M3): every sparse layer does
    const double index = double(num_layers) * dsa_index_bytes_per_token_layer() +
                         double(n_sparse_layers) * sparse_index_bytes_per_token_layer();
    // Layers of their own shape (MiMo-V2's, Nemotron NAS's): K and V at their own widths for their own KV heads, in
    // place of the model-wide entry counted above (their window, if any, counted there as here).
    double own = 0;
    if (attn != AttnKind::mla) {
        const double split = attn_tp > 0 ? attn_tp : double(std::max(1, num_kv_heads)) / std::max(1.0, kv_heads_gpu);
        for (const LayerKind& k : layer_kinds) {
            if (k.d.mixer != Mixer::attention || !k.d.own_attention()) continue;
            const AttnDims a = attn_dims(k.d);
            const double tokens = k.d.window > 0 ? std::min(seq, double(k.d.window)) : seq;
            const double kv_gpu = std::max(1.0, a.kv_heads / split);
            own += k.count * tokens * (kv_gpu * (a.head_dim + a.v_head_dim) * kv_bytes - per_token_layer);
        }
    }
    return (total * per_token_layer + global + seq * index + own) * share;
}

double ModelSpec::mtp_kv_bytes_per_request(double seq, double kv_heads_gpu, double kv_bytes) const {
    if (mtp_layers <= 0) return 0.0;
    if (compressed_kv()) return mtp_layers * compressed_layer_bytes(*this, mtp_layer.compress, seq);
    const double per_token = attn == AttnKind::mla ? double(kv_lora_rank + qk_rope_head_dim) * kv_bytes
                                                   : 2.0 * kv_heads_gpu * head_dim * kv_bytes;
    const double tokens = mtp_layer.window > 0 ? std::min(seq, double(mtp_layer.window)) : seq;
    return mtp_layers * (tokens * per_token + seq * dsa_index_bytes_per_token_layer());
}

}  // namespace moe
