// model_recurrent.cpp — the layers that keep a fixed recurrent state instead of a KV cache: Gated DeltaNet (Qwen3-Next,
// Qwen3.5) and the Mamba-2 mixers of Nemotron-H / Nemotron-3 hybrids (their block list and mixer keys, which
// parse_hf_config in model_spec.cpp reads through these), with their parameters and per-request state.
#include <algorithm>

#include "core/base/json_util.h"
#include "core/scenario/model_spec.h"

namespace moe {
using namespace detail;

// Nemotron-H's layer list, one block per layer: hybrid_override_pattern (M = Mamba-2, * = attention, - = MLP, E =
// MoE) or layers_block_type ("mamba", "attention", "mlp", "moe"). Empty when the config has neither; an entry of
// another kind is an error naming it.
std::vector<LayerDesc> parse_hybrid_blocks(const json& c, const std::string& path, Issues& errors) {
    std::vector<LayerDesc> out;
    auto block = [](char k, LayerDesc& d) {
        switch (k) {
            case 'M': d.mixer = Mixer::mamba2, d.ffn = false; return true;
            case '*': d.mixer = Mixer::attention, d.ffn = false; return true;
            case '-': d.mixer = Mixer::none, d.ffn = true, d.moe = false; return true;
            case 'E': d.mixer = Mixer::none, d.ffn = true, d.moe = true; return true;
        }
        return false;
    };
    auto pat = c.find("hybrid_override_pattern");
    if (pat != c.end() && !pat->is_null()) {
        if (!pat->is_string()) {
            errors.push_back({path + ".hybrid_override_pattern", "must be a string of M, *, - and E"});
            return {};
        }
        const std::string& p = pat->get_ref<const std::string&>();
        for (std::size_t i = 0; i < p.size(); ++i) {
            LayerDesc d;
            if (!block(p[i], d)) {
                errors.push_back({path + ".hybrid_override_pattern[" + std::to_string(i) + "]",
                                  "unknown block '" + shown_text(p.substr(i, 1)) + "' (M = Mamba-2, * = attention, - = MLP, E = MoE)"});
                return {};
            }
            out.push_back(d);
        }
        if (out.empty()) errors.push_back({path + ".hybrid_override_pattern", "is empty"});
        return out;
    }
    auto types = c.find("layers_block_type");
    if (types == c.end() || types->is_null()) return out;
    if (!types->is_array() || types->empty()) {
        errors.push_back({path + ".layers_block_type", "must be a list of \"mamba\", \"attention\", \"mlp\" and \"moe\""});
        return {};
    }
    for (std::size_t i = 0; i < types->size(); ++i) {
        const json& t = (*types)[i];
        const std::string k = t.is_string() ? t.get<std::string>() : std::string();
        LayerDesc d;
        const char code = k == "mamba" ? 'M' : k == "attention" ? '*' : k == "mlp" ? '-' : k == "moe" ? 'E' : '?';
        if (!block(code, d)) {
            errors.push_back({path + ".layers_block_type[" + std::to_string(i) + "]",
                              "unknown block " + shown(t) + " (mamba, attention, mlp, moe)"});
            return {};
        }
        out.push_back(d);
    }
    return out;
}

void read_mamba_mixer(const json& c, const std::string& path, ModelSpec& m, Issues& errors) {
    constexpr int kMaxDim = 1 << 20;
    m.ssm_num_heads = read_int(c, "mamba_num_heads", path, errors, 128, false, 1, 65536);
    m.ssm_head_dim = read_int(c, "mamba_head_dim", path, errors, 64, false, 1, 65536);
    m.ssm_state_size = read_int(c, "ssm_state_size", path, errors, 128, false, 1, 65536);
    m.ssm_groups = read_int(c, "n_groups", path, errors, 8, false, 1, 65536);
    m.ssm_conv_kernel = read_int(c, "conv_kernel", path, errors, 4, false, 1, 1024);
    m.ssm_chunk = read_int(c, "chunk_size", path, errors, 128, false, 1, 1 << 20);
    m.ssm_conv_bias = read_bool(c, "use_conv_bias", true);
    m.ssm_proj_bias = read_bool(c, "mamba_proj_bias", read_bool(c, "use_bias", false));
    if (m.ssm_num_heads % m.ssm_groups != 0)
        errors.push_back({path + ".n_groups", std::to_string(m.ssm_groups) + " does not divide " +
                                                  std::to_string(m.ssm_num_heads) + " mamba_num_heads"});
    if (double(m.ssm_num_heads) * m.ssm_head_dim > double(kMaxDim))
        errors.push_back({path + ".mamba_num_heads", "mamba_num_heads x mamba_head_dim exceeds " + std::to_string(kMaxDim)});
    // The SSM state's format: mamba_ssm_cache_dtype (Nemotron-3: float32), else fp32 as for Gated DeltaNet.
    const char* state_key = has(c, "mamba_ssm_cache_dtype") ? "mamba_ssm_cache_dtype" : "mamba_ssm_dtype";
    const std::string state = read_str(c, state_key, "float32");
    if (!parse_dtype(state, m.ssm_state_dtype) ||
        (m.ssm_state_dtype != Dtype::fp32 && m.ssm_state_dtype != Dtype::bf16 && m.ssm_state_dtype != Dtype::fp16))
        errors.push_back({path + "." + state_key, "must be float32, bfloat16 or float16, not '" + shown_text(state) + "'"});
}

double ModelSpec::mamba_state_bytes_per_request(int tp, double share) const {
    if (n_mamba_layers == 0) return 0.0;
    const double per_gpu = std::max(1, tp);
    const double heads = std::max(1.0, ssm_num_heads / per_gpu), groups = std::max(1.0, ssm_groups / per_gpu);
    const double ssm = heads * ssm_head_dim * ssm_state_size * dtype_bytes(ssm_state_dtype);
    const double conv_channels = heads * ssm_head_dim + 2.0 * groups * ssm_state_size;
    const double conv = std::max(0, ssm_conv_kernel - 1) * conv_channels * dtype_bytes(dtype);
    return n_mamba_layers * (ssm + conv) * share;
}

double ModelSpec::linear_state_bytes_per_request(int tp, double share) const {
    const double mamba = mamba_state_bytes_per_request(tp, share);
    if (n_linear_layers == 0) return mamba;
    const double per_gpu = std::max(1, tp);
    const double v_heads = std::max(1.0, lin_num_v_heads / per_gpu), k_heads = std::max(1.0, lin_num_k_heads / per_gpu);
    const double recurrent = v_heads * lin_k_head_dim * lin_v_head_dim * dtype_bytes(lin_state_dtype);
    const double conv_channels = 2.0 * k_heads * lin_k_head_dim + v_heads * lin_v_head_dim;
    const double conv = std::max(0, lin_conv_kernel - 1) * conv_channels * dtype_bytes(dtype);
    return n_linear_layers * (recurrent + conv) * share + mamba;
}

double ModelSpec::mamba_params() const {
    // HF NemotronHMamba2Mixer: in_proj (hidden -> z, x, B, C, dt), the depthwise conv1d over x, B and C (kernel
    // weights, a bias per channel with use_conv_bias), A_log, D and dt_bias per head, the gated RMSNorm's weight over
    // d_inner, out_proj (d_inner -> hidden); the projections' biases with mamba_proj_bias / use_bias.
    const double h = hidden, d_inner = mamba_inner(), heads = ssm_num_heads;
    const double in_proj = h * mamba_in_proj_dim() + (ssm_proj_bias ? mamba_in_proj_dim() : 0.0);
    const double conv = mamba_conv_dim() * ssm_conv_kernel + (ssm_conv_bias ? mamba_conv_dim() : 0.0);
    const double out_proj = d_inner * h + (ssm_proj_bias ? h : 0.0);
    return in_proj + conv + 3.0 * heads + d_inner + out_proj;
}

double ModelSpec::linear_attn_params() const {
    if (kda) return kda_params();
    const double h = hidden, Hv = lin_num_v_heads;
    const double in_proj = h * (2.0 * lin_key_dim() + 2.0 * lin_value_dim()) + h * 2.0 * Hv;  // q,k,v,z and b,a
    const double conv = lin_conv_dim() * lin_conv_kernel;                                       // depthwise, no bias
    const double per_head = 2.0 * Hv + lin_v_head_dim;  // A_log and dt_bias per v head, the gated norm's weight
    return in_proj + conv + per_head + lin_value_dim() * h;  // + out_proj
}

}  // namespace moe
