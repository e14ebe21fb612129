// model_kda.cpp — Kimi-K3's mechanisms (config model_type kimi_linear under text_config): Kimi Delta Attention layers
// (linear_attn_config), the output gate of its MLA layers (mla_use_output_gate), routed experts run at a latent width
// (routed_expert_hidden_size, latent_moe_use_norm) and attention residuals (attn_res_block_size). parse_hf_config in
// model_spec.cpp calls read_kimi_linear once the layers exist.
//
// Sources: Kimi Linear (Kimi Team, arXiv 2510.26692) for KDA: the gated delta rule of Gated DeltaNet with a forget gate
// per key channel instead of one scalar per head, a beta gate per head, short causal convolutions on q, k and v, and a
// sigmoid-gated RMSNorm before o_proj; the Kimi K3 Technical Report (arXiv 2607.24653, §2.2: Block AttnRes, 8 blocks of
// 12 layers) and SGLang's Kimi-K3 model (models/kimi_linear.py: KimiDeltaAttention, KimiMLAAttention's g_proj,
// KimiMoE's routed_expert_down_proj / routed_expert_up_proj / routed_expert_norm, KimiDecoderLayer's
// self_attention_res_norm / _proj and mlp_res_norm / _proj) for the layer shapes counted below.
//
// Keys read for what they change in the parameters and the step; the others deliberately not:
//   hidden_act "situ" with activation_situ_beta / activation_situ_linear_beta: an activation of the gated FFN with two
//     constants, no weights; priced as the SwiGLU epilogue it replaces (AIConfigurator times K3's experts with the silu
//     epilogue too and measures up to ~5.5% apart at small token counts: shared/anchors/aic/perf collection_meta.yaml).
//   mla_use_nope: the MLA layers apply no RoPE; the widths (qk_rope_head_dim 64 included) and the cache are unchanged.
//   linear_attn_config.gate_lower_bound: a clamp on the forget gate, no weights.
//   moe_renormalize, moe_router_activation_func, routed_scaling_factor, use_grouped_topk: routing arithmetic, no weights.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/json_util.h"
#include "core/scenario/model_spec.h"

namespace moe {
using namespace detail;

double ModelSpec::kda_params() const {
    // Per KDA layer (P = heads x head_dim for q and k, heads x v_head_dim for v and the output): q_proj, k_proj,
    // v_proj from hidden; the forget gate f_b_proj(f_a_proj(x)) through head_dim to one decay per key channel; b_proj
    // (beta per head); the output gate g_proj (full rank) or g_b_proj(g_a_proj(x)); the three depthwise convs (no
    // bias); A_log per head, dt_bias per key channel, o_norm's weight (head_dim); o_proj back to hidden.
    const double h = hidden, H = lin_num_v_heads, dk = lin_k_head_dim, Kd = lin_key_dim(), Vd = lin_value_dim();
    const double qkv = h * (2.0 * Kd + Vd);
    const double forget = h * dk + dk * Kd;
    const double gate = kda_full_rank_gate ? h * Vd : h * dk + dk * Vd;
    const double conv = lin_conv_dim() * lin_conv_kernel;
    return qkv + forget + h * H + gate + conv + H + Kd + lin_v_head_dim + Vd * h;
}

namespace {

// A 1-based layer list of linear_attn_config (Kimi Linear's is_kda_layer: layer_idx + 1 in kda_layers), as 0-based
// flags; an entry out of range is an error naming it.
std::vector<bool> one_based_layers(const json& obj, const char* key, const std::string& path, int layers, Issues& errors) {
    std::vector<bool> out(std::size_t(layers), false);
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return out;
    if (!it->is_array()) {
        errors.push_back({path + "." + key, "must be a list of 1-based layer numbers"});
        return out;
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
        const json& v = (*it)[i];
        if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > layers) {
            errors.push_back({path + "." + key + "[" + std::to_string(i) + "]",
                              "must be a layer number in [1, " + std::to_string(layers) + "], not " + shown(v)});
            return out;
        }
        out[std::size_t(v.get<long long>() - 1)] = true;
    }
    return out;
}

}  // namespace

void read_kimi_linear(const json& c, const std::string& path, ModelSpec& m, Issues& errors) {
    const std::size_t before = errors.size();
    m.mla_output_gate = m.attn == AttnKind::mla && read_bool(c, "mla_use_output_gate", false);
    // Routed experts at routed_expert_hidden_size: routed_expert_down_proj (hidden -> latent) before the dispatch,
    // routed_expert_up_proj after the combine, no biases, and with latent_moe_use_norm an RMSNorm over the latent
    // output; router and shared experts read hidden (LatentMoE's pricing, docs/model.md).
    if (has(c, "routed_expert_hidden_size") && m.is_moe()) {
        m.moe_latent = read_int(c, "routed_expert_hidden_size", path, errors, 0, true, 1, 1 << 20);
        m.latent_bias = false;
        m.latent_norm = read_bool(c, "latent_moe_use_norm", false);
    }
    // Attention residuals: per layer two RMSNorms and two hidden -> 1 score projections (before the attention and
    // before the FFN), counted as four hidden-size vectors beside the layer's norms; the final mix adds one of each
    // (counted by parse_hf_config). Layer i (0-based) mixes the floor(i / B) + 1 block summaries so far and the running
    // sum: each of its two mixes reads those hidden-size vectors per token.
    if (has(c, "attn_res_block_size")) {
        m.attn_res_block = read_int(c, "attn_res_block_size", path, errors, 0, true, 1, 1 << 20);
        if (m.attn_res_block > 0 && m.num_layers > 0) {
            double reads = 0;
            for (int i = 0; i < m.num_layers; ++i) reads += 2.0 * (std::floor(double(i) / m.attn_res_block) + 2.0);
            m.attn_res_reads = reads / m.num_layers;
            m.extra_norms_per_layer += 4;
        }
    }
    auto it = c.find("linear_attn_config");
    if (it == c.end() || it->is_null()) return;
    const std::string p = path + ".linear_attn_config";
    if (!it->is_object()) {
        errors.push_back({p, "must be an object"});
        return;
    }
    const json& k = *it;
    const std::vector<bool> kda = one_based_layers(k, "kda_layers", p, m.num_layers, errors);
    const std::vector<bool> full = one_based_layers(k, "full_attn_layers", p, m.num_layers, errors);
    if (errors.size() != before) return;
    for (int i = 0; i < m.num_layers; ++i) {
        if (kda[std::size_t(i)] && full[std::size_t(i)]) {
            errors.push_back({p + ".kda_layers", "layer " + std::to_string(i + 1) + " is also in full_attn_layers"});
            return;
        }
    }
    m.kda = true;
    m.kda_full_rank_gate = read_bool(k, "use_full_rank_gate", false);
    // Every head has its own q, k and v (num_heads of each); keys head_dim wide, values v_head_dim (SGLang's
    // KimiDeltaAttention: head_v_dim = config.v_head_dim), the state head_dim x v_head_dim per head in fp32.
    m.lin_num_k_heads = m.lin_num_v_heads = read_int(k, "num_heads", p, errors, 0, true, 1, 65536);
    m.lin_k_head_dim = read_int(k, "head_dim", p, errors, 0, true, 1, 65536);
    m.lin_v_head_dim = m.v_head_dim > 0 ? m.v_head_dim : m.lin_k_head_dim;
    m.lin_conv_kernel = read_int(k, "short_conv_kernel_size", p, errors, 4, false, 1, 1024);
    m.lin_state_dtype = Dtype::fp32;
    if (errors.size() != before) {
        m.kda = false;
        return;
    }
    for (int i = 0; i < m.num_layers; ++i)
        if (kda[std::size_t(i)]) m.layers[std::size_t(i)].mixer = Mixer::gated_deltanet;
}

}  // namespace moe
