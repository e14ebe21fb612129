// model_attention_kinds.cpp — attention kinds and FFN blocks announced by keys of their own, which parse_hf_config in
// model_spec.cpp reads through these once the layers exist: MiniMax-M3's block-sparse attention (MiniMax Sparse
// Attention, `sparse_attention_config`) and its dense / shared FFN widths; Gemma-4's global-attention layers and its
// MoE block.
//
// MiniMax-M3's sparse layers, as the public implementations run them (cited in docs/model.md, "Block-sparse
// attention"): the q/k/v projection also yields index_q (sparse_num_index_heads x sparse_index_dim, sharded like the
// KV heads) and one index_k head of sparse_index_dim (replicated on every rank); both pass an RMSNorm and RoPE.
// index_q scores every cached index key, the scores are max-pooled over blocks of sparse_block_size, the query's own
// block (sparse_local_block) and the first sparse_init_block blocks are forced in, and the query attends to the
// sparse_topk_blocks best blocks only. Each layer caches its index keys beside K and V.
#include <algorithm>
#include <string>

#include "core/base/json_util.h"
#include "core/scenario/model_spec.h"

namespace moe {
using namespace detail;

double ModelSpec::sparse_index_bytes_per_token_layer() const {
    return block_sparse() ? index_head_dim * dtype_bytes(dtype) : 0.0;
}

namespace {

// A per-layer list of 0 / 1 flags (`key` under `path`), one per layer; empty when absent, and on an error (named).
std::vector<bool> layer_flags(const json& obj, const char* key, const std::string& path, int layers, Issues& errors) {
    std::vector<bool> out;
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return out;
    const std::string where = path + "." + key;
    if (!it->is_array()) {
        errors.push_back({where, "must be a list of 0 / 1, one per layer"});
        return out;
    }
    if (it->size() != std::size_t(layers)) {
        errors.push_back({where, "has " + std::to_string(it->size()) + " entries for " + std::to_string(layers) + " layers"});
        return out;
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
        const json& v = (*it)[i];
        if (!v.is_number_integer() || (v.get<long long>() != 0 && v.get<long long>() != 1)) {
            errors.push_back({where + "[" + std::to_string(i) + "]", "must be 0 or 1, not " + shown(v)});
            return {};
        }
        out.push_back(v.get<long long>() == 1);
    }
    return out;
}

}  // namespace

void read_block_sparse_attention(const json& c, const std::string& path, ModelSpec& m, Issues& errors) {
    auto it = c.find("sparse_attention_config");
    if (it == c.end() || it->is_null()) return;
    const std::string p = path + ".sparse_attention_config";
    if (!it->is_object()) {
        errors.push_back({p, "must be an object"});
        return;
    }
    const json& s = *it;
    if (!read_bool(s, "use_sparse_attention", true)) return;  // the layers then run full attention
    if (m.attn == AttnKind::mla || m.compressed_kv()) {
        errors.push_back({p, "block-sparse attention is modelled on GQA / MHA layers only"});
        return;
    }
    const std::size_t before = errors.size();
    m.sparse_block_size = read_int(s, "sparse_block_size", p, errors, 0, true, 1, 1 << 20);
    m.sparse_topk_blocks = read_int(s, "sparse_topk_blocks", p, errors, 0, true, 1, 1 << 20);
    m.sparse_local_blocks = read_int(s, "sparse_local_block", p, errors, 1, false, 0, 1 << 20);
    m.sparse_init_blocks = read_int(s, "sparse_init_block", p, errors, 0, false, 0, 1 << 20);
    m.index_n_heads = read_int(s, "sparse_num_index_heads", p, errors, 0, true, 1, 65536);
    m.index_head_dim = read_int(s, "sparse_index_dim", p, errors, 0, true, 1, 65536);
    if (errors.size() == before && m.sparse_init_blocks + m.sparse_local_blocks > m.sparse_topk_blocks)
        errors.push_back({p + ".sparse_topk_blocks", std::to_string(m.sparse_topk_blocks) + " leaves no room for the " +
                                                         std::to_string(m.sparse_init_blocks) + " initial and " +
                                                         std::to_string(m.sparse_local_blocks) +
                                                         " local blocks every query keeps (they are among the top-k)"});
    // Which layers are sparse: sparse_attention_freq, every layer when absent (NeMo AutoModel's reading).
    std::vector<bool> sparse = layer_flags(s, "sparse_attention_freq", p, m.num_layers, errors);
    if (!has(s, "sparse_attention_freq")) sparse.assign(std::size_t(m.num_layers), true);
    // sparse_disable_index_value 0 on a sparse layer would give the indexer a value path of its own, which no
    // implementation we know runs (MiniMax-M3 sets 1 on every sparse layer): refused rather than priced without it.
    const std::vector<bool> no_value = layer_flags(s, "sparse_disable_index_value", p, m.num_layers, errors);
    for (std::size_t i = 0; i < no_value.size() && i < sparse.size(); ++i)
        if (sparse[i] && !no_value[i]) {
            errors.push_back({p + ".sparse_disable_index_value[" + std::to_string(i) + "]",
                              "is 0 on a sparse layer: an indexer value path is not modelled"});
            break;
        }
    if (errors.size() != before) {
        m.sparse_block_size = 0;
        return;
    }
    for (std::size_t i = 0; i < sparse.size() && i < m.layers.size(); ++i) m.layers[i].sparse = sparse[i];
}

void read_ffn_widths(const json& c, const std::string& path, ModelSpec& m, Issues& errors) {
    // MiniMax-M3: intermediate_size is the routed experts' width; the dense layers have dense_intermediate_size.
    if (has(c, "dense_intermediate_size"))
        m.intermediate = read_int(c, "dense_intermediate_size", path, errors, m.intermediate, false, 1, 1 << 20);
    // ... and each shared expert shared_intermediate_size (n_shared_experts of them, one when the count is absent).
    if (m.is_moe() && has(c, "shared_intermediate_size")) {
        const int n_shared = has(c, "n_shared_experts") ? read_int(c, "n_shared_experts", path, errors, 1, false, 0, 1024) : 1;
        m.shared_intermediate = n_shared * read_int(c, "shared_intermediate_size", path, errors, 0, false, 0, 1 << 20);
    }
}

// Gemma-4 (Hugging Face transformers, models/gemma4: Gemma4TextAttention, Gemma4TextRouter, Gemma4TextDecoderLayer).
// A full-attention layer has heads of global_head_dim and num_global_key_value_heads KV heads; with attention_k_eq_v
// it has no v_proj: its values are the k_proj output, normed without the keys' RoPE (both are cached). Sliding layers
// keep head_dim and num_key_value_heads.
double ModelSpec::global_attn_params() const {
    const double h = hidden, H = num_heads, d = global_head_dim, Hkv = global_kv_heads;
    double p = h * H * d + (global_k_eq_v ? 1.0 : 2.0) * h * Hkv * d + H * d * h;
    if (qkv_bias) p += H * d + (global_k_eq_v ? 1.0 : 2.0) * Hkv * d;
    return p;
}

void read_global_attention(const json& c, const std::string& path, ModelSpec& m, Issues& errors) {
    if (!has(c, "global_head_dim")) return;
    if (m.attn == AttnKind::mla) {
        errors.push_back({path + ".global_head_dim", "global-attention heads are modelled on GQA / MHA layers only"});
        return;
    }
    m.global_head_dim = read_int(c, "global_head_dim", path, errors, 0, true, 1, 65536);
    m.global_kv_heads = read_int(c, "num_global_key_value_heads", path, errors, m.num_kv_heads, false, 1, 65536);
    m.global_k_eq_v = read_bool(c, "attention_k_eq_v", false);
    if (m.global_kv_heads > 0 && m.num_heads % m.global_kv_heads != 0)
        errors.push_back({path + ".num_global_key_value_heads", std::to_string(m.global_kv_heads) + " does not divide " +
                                                                    std::to_string(m.num_heads) + " attention heads"});
    if (double(m.num_heads) * m.global_head_dim > double(1 << 24))
        errors.push_back({path + ".global_head_dim", "attention width (heads x global_head_dim) exceeds 16777216"});
}

void read_moe_block(const json& c, const std::string& path, ModelSpec& m, Issues& errors) {
    // Gemma-4's sandwich norms: before and after the attention and the MLP, 4 of hidden (2 counted for every model).
    if (m.model_type.rfind("gemma4", 0) == 0) m.extra_norms_per_layer = 2;
    if (!read_bool(c, "enable_moe_block", false)) return;
    if (!m.is_moe()) {
        errors.push_back({path + ".num_experts", "is required: enable_moe_block adds routed experts to every layer"});
        return;
    }
    // Every layer runs its dense MLP (intermediate_size) and, beside it on the same residual, the routed experts: the
    // MLP is a shared expert in all but name (the model card counts "128 experts + 1 shared").
    if (m.intermediate <= 0) {
        errors.push_back({path + ".intermediate_size", "is required: the MoE block keeps the dense MLP beside the experts"});
        return;
    }
    m.shared_intermediate += m.intermediate;
    // Norms: the MLP's own post-norm and the experts' pre- and post-norms (7 of hidden in all); the router's weights
    // besides its projection: a scale per hidden dim and one per expert.
    m.extra_norms_per_layer += 3;
    m.router_extra_params = double(m.hidden) + m.num_experts;
}

}  // namespace moe

namespace moe {

// MiMo-V2 (XiaomiMiMo/MiMo-V2-Flash config.json; Xiaomi's modeling_mimo_v2_flash.py and SGLang's mimo_v2_flash.py):
// hybrid_layer_pattern has one entry per layer, 1 = a sliding-window layer (window sliding_window, heads
// swa_num_attention_heads, KV heads swa_num_key_value_heads, K width swa_head_dim, V width swa_v_head_dim), 0 = full
// attention (num_attention_heads, num_key_value_heads, head_dim, v_head_dim). add_swa_attention_sink_bias /
// add_full_attention_sink_bias give the layers of that kind a learned sink bias per query head (parameters only: the
// sink takes softmax mass, it reads no key). partial_rotary_factor, the two rope_thetas and attention_value_scale
// change no weight and no cost.
void read_hybrid_attention(const json& c, const std::string& path, ModelSpec& m, Issues& errors) {
    if (!has(c, "hybrid_layer_pattern")) return;
    if (m.attn == AttnKind::mla) {
        errors.push_back({path + ".hybrid_layer_pattern", "per-layer attention shapes are modelled on GQA / MHA layers only"});
        return;
    }
    const std::size_t before = errors.size();
    const std::vector<bool> swa = layer_flags(c, "hybrid_layer_pattern", path, m.num_layers, errors);
    const char* window_key = has(c, "sliding_window") ? "sliding_window" : "sliding_window_size";
    const int window = read_int(c, window_key, path, errors, 0, true, 1, 1 << 30);
    LayerDesc full, sliding;
    full.q_heads = m.num_heads;
    full.kv_heads = m.num_kv_heads;
    full.head_dim = m.head_dim;
    full.v_head_dim = read_int(c, "v_head_dim", path, errors, m.head_dim, false, 1, 65536);
    full.sinks = read_bool(c, "add_full_attention_sink_bias", false);
    sliding.q_heads = read_int(c, "swa_num_attention_heads", path, errors, full.q_heads, false, 1, 65536);
    sliding.kv_heads = read_int(c, "swa_num_key_value_heads", path, errors, full.kv_heads, false, 1, 65536);
    sliding.head_dim = read_int(c, "swa_head_dim", path, errors, full.head_dim, false, 1, 65536);
    sliding.v_head_dim = read_int(c, "swa_v_head_dim", path, errors, full.v_head_dim, false, 1, 65536);
    sliding.sinks = read_bool(c, "add_swa_attention_sink_bias", false);
    sliding.window = window;
    if (errors.size() == before && sliding.q_heads % sliding.kv_heads != 0)
        errors.push_back({path + ".swa_num_key_value_heads", std::to_string(sliding.kv_heads) + " does not divide " +
                                                                 std::to_string(sliding.q_heads) + " swa_num_attention_heads"});
    if (double(sliding.q_heads) * std::max(sliding.head_dim, sliding.v_head_dim) > double(1 << 24))
        errors.push_back({path + ".swa_head_dim", "attention width (heads x head dim) exceeds 16777216"});
    if (errors.size() != before) return;
    for (std::size_t i = 0; i < swa.size() && i < m.layers.size(); ++i) {
        const LayerDesc& shape = swa[i] ? sliding : full;
        LayerDesc& l = m.layers[i];
        l.q_heads = shape.q_heads;
        l.kv_heads = shape.kv_heads;
        l.head_dim = shape.head_dim;
        l.v_head_dim = shape.v_head_dim;
        l.sinks = shape.sinks;
        l.window = shape.window;
    }
}

}  // namespace moe
