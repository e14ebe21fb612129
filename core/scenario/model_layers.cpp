// model_layers.cpp — layers that carry their own shape: a softmax-attention layer's own heads, KV heads and K / V head
// widths (MiMo-V2's sliding-window layers, read in model_attention_kinds.cpp; Nemotron NAS's n_heads_in_group), a dense
// FFN's own width, and Nemotron NAS's block_configs (attention or FFN skipped, or replaced by one linear map), with
// their parameters. parse_hf_config in model_spec.cpp reads block_configs through read_block_configs.
//
// Nemotron NAS (DeciLM; nvidia/Llama-3_3-Nemotron-Super-49B-v1's modeling_decilm.py, as llama.cpp's
// convert_hf_to_gguf.py DeciModel and vLLM's nemotron_nas.py read it): per layer, `attention` has n_heads_in_group
// (KV heads = num_attention_heads / n_heads_in_group), or no_op (no attention and no input_layernorm), or
// replace_with_linear (one hidden x hidden linear, no bias); `ffn` has ffn_mult (a SwiGLU MLP of
// _ffn_mult_to_intermediate_size: int(2 x ffn_mult x hidden / 3) rounded up to a multiple of 256), or no_op (no MLP
// and no post_attention_layernorm), or replace_with_linear. Sink tokens, windows and sparsified blocks are refused.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/json_util.h"
#include "core/scenario/model_spec.h"

namespace moe {
using namespace detail;

ModelSpec::AttnDims ModelSpec::attn_dims(const LayerDesc& l) const {
    AttnDims a{};
    a.heads = l.q_heads > 0 ? l.q_heads : num_heads;
    a.kv_heads = l.kv_heads > 0 ? l.kv_heads : num_kv_heads;
    a.head_dim = l.head_dim > 0 ? l.head_dim : head_dim;
    a.v_head_dim = l.v_head_dim > 0 ? l.v_head_dim : a.head_dim;
    return a;
}

double ModelSpec::own_attn_params(const LayerDesc& l) const {
    // q_proj (doubled by an output gate), k_proj at the K width, v_proj at the V width, o_proj from the V width; the
    // biases with attention_bias; a sink bias per query head.
    const AttnDims a = attn_dims(l);
    const double h = hidden, H = a.heads, Hkv = a.kv_heads, d = a.head_dim, dv = a.v_head_dim;
    double p = h * H * d * (attn_output_gate ? 2.0 : 1.0) + h * Hkv * (d + dv) + H * dv * h;
    if (qkv_bias) p += H * d + Hkv * (d + dv);
    if (l.sinks) p += H;
    return p;
}

double ModelSpec::layer_ffn_params(const LayerDesc& l) const {
    if (l.ffn_linear) return double(hidden) * hidden;
    if (l.ffn_inter > 0) return double(ffn_matrices) * hidden * l.ffn_inter;
    return dense_ffn_params();
}

namespace {

// DeciLM's _ffn_mult_to_intermediate_size: int(2 * ffn_mult * hidden / 3), then the next multiple of 256.
int nas_intermediate(double ffn_mult, int hidden) {
    const long long i = (long long)(2.0 * ffn_mult * hidden / 3.0);
    return int((i + 255) / 256 * 256);
}

// A block key that would change the layer in a way we do not price: an error naming it (", not modelled").
bool refuse_set(const json& b, const char* key, const std::string& where, const char* what, Issues& errors) {
    auto it = b.find(key);
    if (it == b.end() || it->is_null() || (it->is_boolean() && !it->get<bool>())) return false;
    errors.push_back({where + "." + key, std::string(what) + " (" + shown(*it) + ") is not modelled"});
    return true;
}

}  // namespace

std::vector<LayerDesc> read_block_configs(const json& c, const std::string& path, ModelSpec& m, Issues& errors) {
    auto it = c.find("block_configs");
    if (it == c.end() || it->is_null()) return {};
    const std::string p = path + ".block_configs";
    if (!it->is_array() || it->size() != std::size_t(m.num_layers)) {
        errors.push_back({p, "must be a list of one block per layer (" + std::to_string(m.num_layers) + ")"});
        return {};
    }
    std::vector<LayerDesc> out;
    int first_kv = 0, widest = 0;
    for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string w = p + "[" + std::to_string(i) + "]";
        const json& b = (*it)[i];
        if (!b.is_object() || !b.contains("attention") || !b["attention"].is_object() || !b.contains("ffn") ||
            !b["ffn"].is_object()) {
            errors.push_back({w, "must be an object with \"attention\" and \"ffn\" objects"});
            return {};
        }
        const json& a = b["attention"];
        const json& f = b["ffn"];
        const std::string wa = w + ".attention", wf = w + ".ffn";
        if (refuse_set(a, "num_sink_tokens", wa, "attention over sink tokens", errors) ||
            refuse_set(a, "unshifted_sink", wa, "an unshifted sink", errors) ||
            refuse_set(a, "use_prefill_window_in_sink_attention", wa, "a prefill window in sink attention", errors) ||
            refuse_set(a, "sparsify", wa, "a sparsified attention block", errors) ||
            refuse_set(f, "sparsify", wf, "a sparsified FFN block", errors))
            return {};
        LayerDesc d;
        if (read_bool(a, "no_op", false)) {
            d.mixer = Mixer::none;
        } else if (read_bool(a, "replace_with_linear", false)) {
            d.mixer = Mixer::linear;
        } else {
            const int group = read_int(a, "n_heads_in_group", wa, errors, 0, true, 1, 65536);
            if (group <= 0) return {};
            if (m.num_heads % group != 0) {
                errors.push_back({wa + ".n_heads_in_group", std::to_string(group) + " does not divide " +
                                                                 std::to_string(m.num_heads) + " attention heads"});
                return {};
            }
            d.kv_heads = m.num_heads / group;
            d.window = read_int(a, "window_length", wa, errors, 0, false, 0, 1 << 30);
            if (first_kv == 0) first_kv = d.kv_heads;
        }
        if (read_bool(f, "no_op", false)) {
            d.ffn = false;
        } else if (read_bool(f, "replace_with_linear", false)) {
            d.ffn_linear = true;
        } else {
            const double mult = read_num(f, "ffn_mult", wf, errors, 0, true, 1e-6, 1e6);
            if (!(mult > 0)) return {};
            d.ffn_inter = nas_intermediate(mult, m.hidden);
            widest = std::max(widest, d.ffn_inter);
        }
        out.push_back(d);
    }
    // Model-wide figures the other readers and the scenario checks use: the first attention layer's KV heads, and
    // the widest FFN (activation buffers); each layer is priced from its own block.
    m.num_kv_heads = first_kv > 0 ? first_kv : m.num_heads;
    m.attn = m.num_kv_heads == m.num_heads ? AttnKind::mha : AttnKind::gqa;
    m.intermediate = std::max(widest, 1);
    m.per_layer_blocks = true;
    return out;
}

}  // namespace moe

namespace moe {

double ModelSpec::block_params(const LayerDesc& l) const {
    // A Nemotron NAS layer: its attention (own KV heads) or linear map, and its FFN, each with the RMSNorm before it.
    const double h = hidden;
    const double mixer = l.mixer == Mixer::attention ? own_attn_params(l) : l.mixer == Mixer::linear ? h * h : 0.0;
    return mixer + (l.mixer != Mixer::none ? h : 0.0) + (l.ffn ? layer_ffn_params(l) + h : 0.0);
}

double ModelSpec::own_attention_delta() const {
    double delta = 0;
    const double model_attn = attn_params();
    for (const LayerKind& k : layer_kinds)
        if (k.d.mixer == Mixer::attention && (k.d.own_attention() || k.d.sinks))
            delta += k.count * (own_attn_params(k.d) - model_attn);
    return delta;
}

}  // namespace moe
