#include "core/scenario/model_spec.h"

#include <algorithm>
#include <cmath>

#include "core/base/json_util.h"

namespace moe {
using namespace detail;

const char* attn_kind_name(AttnKind k) {
    switch (k) {
        case AttnKind::mha: return "MHA";
        case AttnKind::gqa: return "GQA";
        case AttnKind::mla: return "MLA";
    }
    return "?";
}

const char* mixer_name(Mixer k) {
    switch (k) {
        case Mixer::attention: return "attention";
        case Mixer::gated_deltanet: return "Gated DeltaNet";
        case Mixer::mamba2: return "Mamba-2";
        case Mixer::none: return "none";
        case Mixer::linear: return "linear";
    }
    return "?";
}

std::vector<ModelSpec::LayerKind> layer_kinds_of(const std::vector<LayerDesc>& layers) {
    auto same_kind = [](const LayerDesc& a, const LayerDesc& b) {
        return a.moe == b.moe && a.window == b.window && a.mixer == b.mixer && a.compress == b.compress && a.ffn == b.ffn &&
               a.sparse == b.sparse && a.q_heads == b.q_heads && a.kv_heads == b.kv_heads && a.head_dim == b.head_dim &&
               a.v_head_dim == b.v_head_dim && a.sinks == b.sinks && a.ffn_inter == b.ffn_inter && a.ffn_linear == b.ffn_linear;
    };
    std::vector<ModelSpec::LayerKind> kinds;
    for (const LayerDesc& l : layers) {
        auto it = std::find_if(kinds.begin(), kinds.end(), [&](const ModelSpec::LayerKind& k) { return same_kind(k.d, l); });
        if (it == kinds.end()) kinds.push_back({l, 1});
        else it->count++;
    }
    return kinds;
}

double ModelSpec::attn_params() const {
    const double h = hidden, H = num_heads;
    // DSA lightning indexer on every layer (DeepSeek-V3.2, GLM-5): wq_b from the q latent, wk and its LayerNorm,
    // and the per-head weights projection. DeepSeek-V4 keeps its indexer on the CSA layers only (in the totals).
    double indexer = 0;
    if (index_n_heads > 0 && !compressed_kv() && q_lora_rank > 0)
        indexer = double(q_lora_rank) * index_n_heads * index_head_dim + h * index_head_dim + 2.0 * index_head_dim +
                  h * index_n_heads;
    if (o_lora_rank > 0) {
        // DeepSeek-V4: wq_a + q norm + wq_b, one shared KV head (wkv + norm), per-head attention sinks, and the
        // output in o_groups groups: wo_a maps each group's heads to o_lora_rank, wo_b all groups to hidden.
        const double d = head_dim;
        const double q = q_lora_rank > 0 ? h * q_lora_rank + q_lora_rank + double(q_lora_rank) * H * d : h * H * d;
        return q + h * d + d + H + H * d * o_lora_rank + double(o_groups) * o_lora_rank * h;
    }
    if (attn == AttnKind::mla) {
        const double qk = qk_nope_head_dim + qk_rope_head_dim;
        double q = q_lora_rank > 0 ? h * q_lora_rank + double(q_lora_rank) * H * qk + q_lora_rank : h * H * qk;
        double kv_a = h * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank;
        double kv_b = double(kv_lora_rank) * H * (qk_nope_head_dim + v_head_dim);
        double o = H * v_head_dim * h * (mla_output_gate ? 2.0 : 1.0);  // Kimi-K3's g_proj: hidden -> heads x v_head_dim
        return q + kv_a + kv_b + o + indexer;
    }
    const double d = head_dim, Hkv = num_kv_heads;
    double p = h * H * d * (attn_output_gate ? 2.0 : 1.0) + 2.0 * h * Hkv * d + H * d * h;
    if (qkv_bias) p += H * d + 2.0 * Hkv * d;
    return p;
}

namespace {

// The storage format of a ModelOpt quant_algo: FP8 (per tensor or block, MXFP8) is 8-bit, NVFP4 and its W4A16 /
// AWQ variants 4-bit with FP8 scales per 16, INT4 AWQ int4; anything else is `fallback`.
Dtype modelopt_dtype(const std::string& algo, Dtype fallback) {
    if (algo.rfind("FP8", 0) == 0 || algo == "MXFP8") return Dtype::fp8;
    if (algo.find("NVFP4") != std::string::npos) return Dtype::nvfp4;
    if (algo == "MXFP4") return Dtype::mxfp4;
    if (algo.find("INT4") != std::string::npos || algo.find("AWQ") != std::string::npos) return Dtype::int4;
    return fallback;
}

// What read_quantization found beyond the formats: the exclusion list (applied once the layers are known) and where.
struct QuantRead {
    std::vector<std::string> exclude;
    std::string path;
    bool per_module = false;  // ModelOpt MIXED_PRECISION: quantized_layers names every quantised module
};

// Reads quantization_config into the checkpoint's formats: linear weights (attention), dense FFN and shared experts,
// routed experts; the modules it leaves unquantised are collected into `out` (quant_exclusions.cpp applies them).
void read_quantization(const json& cfg, ModelSpec& m, const std::string& path, Issues& errors, QuantRead& out) {
    m.weight_dtype = m.dtype;
    m.expert_dtype = m.dtype;
    m.ffn_dtype = m.dtype;
    auto it = cfg.find("quantization_config");
    if (it == cfg.end() || it->is_null()) return;
    if (!it->is_object()) {
        errors.push_back({path + ".quantization_config", "must be an object"});
        return;
    }
    const json& q = *it;
    std::string method = read_str(q, "quant_method");
    std::transform(method.begin(), method.end(), method.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    // ModelOpt's hf_quant_config.json has no quant_method: {"producer": {"name": "modelopt"}, "quantization": {...}}
    if (method.empty() && (has(q, "quantization") || (q.contains("producer") && q["producer"].is_object() &&
                                                       read_str(q["producer"], "name") == "modelopt")))
        method = "modelopt";
    auto qq = q.find("quantization");
    const json& qa = qq != q.end() && qq->is_object() ? *qq : q;
    // The exclusion lists: ModelOpt's quantization.exclude_modules (hf_quant_config.json) or ignore (config.json),
    // compressed-tensors' ignore, transformers' modules_to_not_convert, vLLM's ignored_layers.
    out.path = path + ".quantization_config";
    for (const json* obj : {&q, &qa}) {
        for (const char* key : {"exclude_modules", "modules_to_not_convert", "ignore", "ignored_layers"}) {
            auto l = obj->find(key);
            if (l == obj->end() || !l->is_array()) continue;
            for (const json& e : *l)
                if (e.is_string()) out.exclude.push_back(e.get<std::string>());
        }
        if (&qa == &q) break;
    }
    if (method == "fp8" || method == "fbgemm_fp8") {
        m.weight_dtype = m.expert_dtype = m.ffn_dtype = Dtype::fp8;
        // DeepSeek-V3's, Qwen3's and MiniMax's FP8 checkpoints carry weight_block_size [128, 128]; fbgemm's is per
        // channel
        auto wb = q.find("weight_block_size");
        m.fp8_block_scaled = method == "fp8" && wb != q.end() && wb->is_array() && !wb->empty();
    } else if (method == "mxfp4") {
        m.weight_dtype = m.expert_dtype = m.ffn_dtype = Dtype::mxfp4;  // gpt-oss: modules_to_not_convert keeps attention
    } else if (method == "modelopt" || method == "modelopt_fp4") {
        // ModelOpt's hf_quant_config.json (its content given as quantization_config) nests the algorithm under
        // "quantization"; MIXED_PRECISION lists each quantised module with its own algorithm (quantized_layers:
        // DeepSeek-V4-NVFP4 only its routed experts, Qwen3.6-NVFP4 FP8 attention and NVFP4 experts / MLPs).
        const std::string algo = read_str(qa, "quant_algo");
        m.fp8_block_scaled = algo == "FP8_BLOCK_SCALES";  // TensorRT-LLM QuantAlgo: block-scaled FP8
        if (algo == "MIXED_PRECISION") {
            out.per_module = true;
            auto layers = qa.find("quantized_layers");
            bool any_expert = false, any_attn = false, any_ffn = false;
            Dtype exp = m.dtype, attn = m.dtype, ffn = m.dtype;
            if (layers != qa.end() && layers->is_object()) {
                for (auto it2 = layers->begin(); it2 != layers->end(); ++it2) {
                    if (!it2.value().is_object()) continue;
                    const std::string& name = it2.key();
                    if (name.find("vision") != std::string::npos || name.find("visual") != std::string::npos ||
                        name.rfind("mtp", 0) == 0)
                        continue;
                    const Dtype d = modelopt_dtype(read_str(it2.value(), "quant_algo"), m.dtype);
                    const bool shared = name.find("shared_expert") != std::string::npos;
                    const bool routed = !shared && name.find("experts") != std::string::npos;
                    const bool attn_like = name.find("self_attn") != std::string::npos || name.find(".attn.") != std::string::npos ||
                                           name.find("linear_attn") != std::string::npos;
                    const bool ffn_like = shared || name.find(".mlp.") != std::string::npos || name.find(".ffn.") != std::string::npos;
                    if (routed) {
                        if (!any_expert) exp = d, any_expert = true;
                    } else if (attn_like) {
                        if (!any_attn) attn = d, any_attn = true;
                    } else if (ffn_like && !(name.size() > 5 && name.compare(name.size() - 5, 5, ".gate") == 0)) {  // not the router
                        if (!any_ffn) ffn = d, any_ffn = true;
                    }
                }
            }
            m.expert_dtype = exp;
            m.weight_dtype = attn;
            m.ffn_dtype = ffn;
        } else {
            m.weight_dtype = m.expert_dtype = m.ffn_dtype = modelopt_dtype(algo, Dtype::nvfp4);
        }
    } else if (method == "gptq" || method == "awq" || method == "auto-round" || method == "bitsandbytes") {
        int bits = read_int(q, "bits", path + ".quantization_config", errors, 4, false, 1, 16);
        m.weight_dtype = m.expert_dtype = m.ffn_dtype = bits <= 4 ? Dtype::int4 : Dtype::fp8;
    } else if (method == "compressed-tensors") {
        std::string format = read_str(q, "format");
        Dtype d = m.dtype;
        auto groups = q.find("config_groups");
        if (groups != q.end() && groups->is_object()) {
            for (const json& g : *groups) {
                if (!g.is_object()) continue;
                auto w = g.find("weights");
                if (w == g.end() || !w->is_object()) continue;
                int bits = w->value("num_bits", 16);
                std::string type = read_str(*w, "type", "int");
                if (bits == 8) {
                    d = Dtype::fp8;
                    m.fp8_block_scaled = read_str(*w, "strategy") == "block";  // compressed-tensors' block scales
                }
                else if (bits == 4) d = (format.find("nvfp4") != std::string::npos) ? Dtype::nvfp4
                                       : (type == "float" ? Dtype::mxfp4 : Dtype::int4);
            }
        }
        // The ignore list keeps modules unquantised: Kimi-K2.5 (moonshotai/Kimi-K2.5 config.json) quantises only
        // the routed experts to int4 and lists self_attn, shared_experts and the dense mlp projections there.
        m.weight_dtype = m.expert_dtype = m.ffn_dtype = d;
    } else if (!method.empty()) {
        errors.push_back({path + ".quantization_config.quant_method", "unknown method '" + shown_text(method) + "'"});
    }
}

// A layer mechanism the step model does not have, named by the config key that announces it (issue 29: every
// config that ships either evaluates or is refused naming what is missing), or "" when there is none.
std::string unmodelled_mechanism(const json& c, const std::string& model_type) {
    (void)model_type;
    if (has(c, "mtp_hybrid_override_pattern") && c["mtp_hybrid_override_pattern"].is_string() &&
        c["mtp_hybrid_override_pattern"].get_ref<const std::string&>() != "*E")
        return "mtp_hybrid_override_pattern: an MTP block other than attention + MoE (\"*E\") is not modelled";
    if (has(c, "mtp_layers_block_type") && c["mtp_layers_block_type"] != json::array({"attention", "moe"}))
        return "mtp_layers_block_type: an MTP block other than [\"attention\", \"moe\"] is not modelled";
    if (has(c, "num_kv_shared_layers") && is_number(c["num_kv_shared_layers"]) && c["num_kv_shared_layers"].get<double>() > 0)
        return "num_kv_shared_layers: Gemma's KV sharing (the last layers reuse earlier layers' keys and values, and may "
               "double their MLP) is not modelled";
    if (has(c, "hidden_size_per_layer_input") && is_number(c["hidden_size_per_layer_input"]) &&
        c["hidden_size_per_layer_input"].get<double>() > 0)
        return "hidden_size_per_layer_input: Gemma's per-layer input embeddings are not modelled";
    return "";
}

}  // namespace

ModelSpec parse_hf_config(const json& root, const std::string& path_in, Issues& errors) {
    ModelSpec m;
    if (!root.is_object()) {
        errors.push_back({path_in, "must be a HuggingFace config.json object"});
        return m;
    }
    // Multimodal configs nest the language model under text_config (Llama 4, Qwen3.5, Gemma 3).
    const json* cfgp = &root;
    std::string path = path_in;
    if (!has(root, "hidden_size") && root.contains("text_config") && root["text_config"].is_object()) {
        cfgp = &root["text_config"];
        path = path_in + ".text_config";
    }
    const json& c = *cfgp;
    const size_t errors_before = errors.size();

    m.model_type = read_str(c, "model_type", read_str(root, "model_type"));
    m.name = m.model_type;
    if (const std::string missing = unmodelled_mechanism(c, m.model_type); !missing.empty()) {
        errors.push_back({path, missing});
        return m;
    }
    // The checkpoint's dtype: torch_dtype (or the newer `dtype`), bfloat16 when absent. A value we do not know is an
    // error naming its key (it used to be read as bf16: "float128" gave a bf16 model).
    m.dtype = Dtype::bf16;
    const json* dtype_obj = has(c, "torch_dtype") || has(c, "dtype") ? &c : has(root, "torch_dtype") ? &root : nullptr;
    if (dtype_obj) {
        const char* key = has(*dtype_obj, "torch_dtype") ? "torch_dtype" : "dtype";
        const json& v = (*dtype_obj)[key];
        const std::string where = (dtype_obj == &c ? path : path_in) + "." + key;
        if (!v.is_string()) errors.push_back({where, "must be a string such as \"bfloat16\", got " + shown(v)});
        else if (!parse_dtype(v.get_ref<const std::string&>(), m.dtype))
            errors.push_back({where, "unknown dtype \"" + shown_text(v.get_ref<const std::string&>()) +
                                         "\" (bfloat16, float16, float32, fp8, ...)"});
    }
    if (m.dtype == Dtype::fp32) m.dtype = Dtype::bf16;  // served in 16-bit

    constexpr int kMaxDim = 1 << 20, kMaxLayers = 4096;
    m.hidden = read_int(c, "hidden_size", path, errors, 0, true, 1, kMaxDim);
    // A Mamba-2 hybrid lists its blocks; num_hidden_layers, when given, must count them (Nemotron-3-Ultra omits it).
    const std::vector<LayerDesc> blocks = parse_hybrid_blocks(c, path, errors);
    const bool hybrid = !blocks.empty();
    m.num_layers = read_int(c, "num_hidden_layers", path, errors, int(std::min<std::size_t>(blocks.size(), kMaxLayers)),
                            !hybrid, 1, kMaxLayers);
    if (hybrid && has(c, "num_hidden_layers") && size_t(m.num_layers) != blocks.size())
        errors.push_back({path + ".num_hidden_layers", std::to_string(m.num_layers) + " disagrees with the " +
                                                           std::to_string(blocks.size()) + " blocks of " +
                                                           (has(c, "hybrid_override_pattern") ? "hybrid_override_pattern" : "layers_block_type")});
    m.num_heads = read_int(c, "num_attention_heads", path, errors, 0, true, 1, 65536);
    m.num_kv_heads = read_int(c, "num_key_value_heads", path, errors, m.num_heads, false, 1, 65536);
    m.vocab = read_int(c, "vocab_size", path, errors, 0, true, 1, 1 << 27);
    m.tie_embeddings = read_bool(c, "tie_word_embeddings", read_bool(root, "tie_word_embeddings", false));
    m.qkv_bias = read_bool(c, "attention_bias", false) || read_bool(c, "qkv_bias", false) ||
                 m.model_type.rfind("qwen2", 0) == 0;
    const char* mtp_key = has(c, "mtp_num_hidden_layers") ? "mtp_num_hidden_layers"                       // Qwen3.5
                          : has(c, "num_mtp_modules") && read_bool(c, "use_mtp", false) ? "num_mtp_modules"  // MiniMax-M2
                                                                                       : "num_nextn_predict_layers";
    m.mtp_layers = read_int(c, mtp_key, path, errors, 0, false, 0, 16);
    m.hc_mult = read_int(c, "hc_mult", path, errors, 1, false, 1, 64);
    if (m.num_heads > 0 && m.num_kv_heads > m.num_heads)
        errors.push_back({path + ".num_key_value_heads", "exceeds num_attention_heads"});
    else if (m.num_kv_heads > 0 && m.num_heads % m.num_kv_heads != 0)
        errors.push_back({path + ".num_key_value_heads", std::to_string(m.num_kv_heads) + " does not divide " +
                                                             std::to_string(m.num_heads) + " attention heads"});

    // Attention kind
    m.kv_lora_rank = read_int(c, "kv_lora_rank", path, errors, 0, false, 0, kMaxDim);
    if (m.kv_lora_rank > 0) {
        m.attn = AttnKind::mla;
        m.q_lora_rank = read_int(c, "q_lora_rank", path, errors, 0, false, 0, kMaxDim);
        m.qk_nope_head_dim = read_int(c, "qk_nope_head_dim", path, errors, 128, false, 1, 65536);
        m.qk_rope_head_dim = read_int(c, "qk_rope_head_dim", path, errors, 64, false, 0, 65536);
        m.v_head_dim = read_int(c, "v_head_dim", path, errors, 128, false, 1, 65536);
        m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    } else {
        m.attn = (m.num_kv_heads == m.num_heads) ? AttnKind::mha : AttnKind::gqa;
        int fallback = (m.num_heads > 0 && m.hidden > 0) ? m.hidden / m.num_heads : 0;
        // Without head_dim the width is hidden_size / heads, which must then be whole (Qwen3.5-27B's 5120 / 24 comes
        // with its head_dim 256; Kimi-K3's 7168 / 96 is MLA, whose widths are its own keys).
        if (!has(c, "head_dim") && fallback > 0 && m.hidden % m.num_heads != 0)
            errors.push_back({path + ".hidden_size", std::to_string(m.hidden) + " is not divisible by " + std::to_string(m.num_heads) +
                                                         " attention heads: give head_dim"});
        // Nemotron-H-56B names it attention_head_dim
        const char* hd_key = !has(c, "head_dim") && has(c, "attention_head_dim") ? "attention_head_dim" : "head_dim";
        m.head_dim = read_int(c, hd_key, path, errors, fallback, false, 1, 65536);
        if (m.head_dim <= 0 && errors.size() == errors_before)
            errors.push_back({path + ".head_dim", "cannot be derived: hidden_size smaller than num_attention_heads"});
    }
    // DeepSeek-V4's grouped low-rank output and q latent; the DSA indexer (V3.2, GLM-5, V4).
    m.o_lora_rank = read_int(c, "o_lora_rank", path, errors, 0, false, 0, kMaxDim);
    if (m.o_lora_rank > 0) {
        m.q_lora_rank = read_int(c, "q_lora_rank", path, errors, 0, false, 0, kMaxDim);
        m.o_groups = read_int(c, "o_groups", path, errors, 1, false, 1, 65536);
        if (m.num_heads % m.o_groups != 0)
            errors.push_back({path + ".o_groups", std::to_string(m.o_groups) + " does not divide " +
                                                      std::to_string(m.num_heads) + " attention heads"});
    }
    m.index_n_heads = read_int(c, "index_n_heads", path, errors, 0, false, 0, 65536);
    if (m.index_n_heads > 0) {
        m.index_head_dim = read_int(c, "index_head_dim", path, errors, 128, false, 1, 65536);
        m.index_topk = read_int(c, "index_topk", path, errors, 2048, false, 1, 1 << 30);
    }
    m.attn_output_gate = read_bool(c, "attn_output_gate", m.model_type.rfind("qwen3_next", 0) == 0);
    // The widest attention projection (heads x head width) is a GEMM dimension the estimator keeps in an int.
    const double attn_width = double(m.num_heads) * (m.attn == AttnKind::mla ? std::max(m.head_dim, m.qk_nope_head_dim + m.v_head_dim)
                                                                             : m.head_dim);
    if (attn_width > double(1 << 24))
        errors.push_back({path + ".num_attention_heads", fmt_num(attn_width) + " attention width (heads x head dim) exceeds 16777216"});

    // FFN / experts (every spelling seen in the wild)
    m.intermediate = read_int(c, "intermediate_size", path, errors, 0, false, 0, kMaxDim);
    // Nemotron NAS: one block per layer with its own KV heads and FFN width (model_layers.cpp)
    const std::vector<LayerDesc> nas_blocks = read_block_configs(c, path, m, errors);
    // The routed experts, under any of their spellings; two spellings must agree (GLM-5.2 gives two, equal), and a
    // config that routes tokens (top-k, a *moe* model type) must have experts: 0 used to turn it dense silently.
    int experts = 0;
    const char* experts_key = nullptr;
    for (const char* key : {"n_routed_experts", "num_routed_experts", "num_experts", "num_local_experts"}) {
        if (!has(c, key)) continue;
        const int n = read_int(c, key, path, errors, 0, false, 0, 1 << 16);
        if (!experts_key) experts = n, experts_key = key;
        else if (n != experts)
            errors.push_back({path + "." + key, std::to_string(n) + " disagrees with " + experts_key + " = " + std::to_string(experts)});
    }
    if (experts_key && experts == 0) {
        const char* routes = nullptr;
        for (const char* key : {"num_experts_per_tok", "experts_per_token"}) {
            auto it = c.find(key);
            if (it != c.end() && is_number(*it) && it->get<double>() > 0) routes = key;
        }
        if (routes || m.model_type.find("moe") != std::string::npos)
            errors.push_back({path + "." + experts_key, std::string("is 0 in a mixture-of-experts config (") +
                                                            (routes ? std::string(routes) + " > 0" : "model_type \"" + shown_text(m.model_type) + "\"") +
                                                            "): give the routed experts, or drop the MoE keys for a dense model"});
    }
    m.num_experts = experts;
    const bool llama4 = m.model_type.rfind("llama4", 0) == 0;
    if (m.num_experts > 0) {
        m.n_group = read_int(c, "n_group", path, errors, 1, false, 1, m.num_experts);
        m.topk_group = read_int(c, "topk_group", path, errors, m.n_group, false, 1, m.n_group);
        if (m.n_group > 0 && m.num_experts % m.n_group != 0)
            errors.push_back({path + ".n_group", std::to_string(m.n_group) + " does not divide " + std::to_string(m.num_experts) + " experts"});
        const char* topk_key = has(c, "experts_per_token") && !has(c, "num_experts_per_tok") ? "experts_per_token"
                               : has(c, "top_k_experts") && !has(c, "num_experts_per_tok")   ? "top_k_experts"  // Gemma-4
                               : has(c, "num_experts_per_token") && !has(c, "num_experts_per_tok") ? "num_experts_per_token"  // Kimi-K3
                                                                                            : "num_experts_per_tok";
        m.top_k = read_int(c, topk_key, path, errors, 0, true, 1, m.num_experts);
        if (m.n_group > 0 && m.num_experts % m.n_group == 0 && m.top_k > m.topk_group * (m.num_experts / m.n_group))
            errors.push_back({path + ".topk_group", std::to_string(m.topk_group) + " of " + std::to_string(m.n_group) + " groups hold " +
                                                        std::to_string(m.topk_group * (m.num_experts / m.n_group)) + " experts, fewer than the " +
                                                        std::to_string(m.top_k) + " a token picks"});
        if (llama4) {
            // Llama 4: routed and shared experts use intermediate_size; dense layers use intermediate_size_mlp.
            m.moe_intermediate = m.intermediate;
            m.shared_intermediate = m.intermediate;
            m.intermediate = read_int(c, "intermediate_size_mlp", path, errors, m.intermediate, false, 0, kMaxDim);
        } else {
            m.moe_intermediate = read_int(c, "moe_intermediate_size", path, errors, m.intermediate, false, 1, kMaxDim);
            if (m.moe_intermediate <= 0 && errors.size() == errors_before)
                errors.push_back({path + ".moe_intermediate_size", "is required for an MoE model"});
            int n_shared = 0;
            for (const char* key : {"n_shared_experts", "num_shared_experts"})
                if (has(c, key)) { n_shared = read_int(c, key, path, errors, 0, false, 0, 1024); break; }
            int shared_inter = read_int(c, "shared_expert_intermediate_size", path, errors, 0, false, 0, kMaxDim);
            // Nemotron-H: n_shared_experts shared MLPs of moe_shared_expert_intermediate_size each, ungated
            const int nemotron_shared = read_int(c, "moe_shared_expert_intermediate_size", path, errors, 0, false, 0, kMaxDim);
            if (nemotron_shared > 0) {
                m.shared_intermediate = nemotron_shared * (has(c, "n_shared_experts") ? n_shared : 1);
            } else if (shared_inter > 0) {
                m.shared_intermediate = shared_inter * std::max(1, n_shared);
                m.shared_gate = true;
            } else {
                m.shared_intermediate = n_shared * m.moe_intermediate;
            }
        }
    } else if (m.intermediate <= 0 && errors.size() == errors_before) {
        errors.push_back({path + ".intermediate_size", "is required"});
    }
    // LatentMoE (Nemotron-3 Super / Ultra; vLLM's and TensorRT-LLM's NemotronH MoE: fc1/fc2_latent_proj with mlp_bias,
    // experts of hidden size moe_latent_size; docs/model.md "LatentMoE" has the sources).
    if (has(c, "moe_latent_size") && !c["moe_latent_size"].is_null()) {
        m.moe_latent = read_int(c, "moe_latent_size", path, errors, 0, true, 1, kMaxDim);
        m.latent_bias = read_bool(c, "mlp_bias", false);
        if (!m.is_moe() && errors.size() == errors_before)
            errors.push_back({path + ".moe_latent_size", "is set but the config has no routed experts (n_routed_experts)"});
    }

    // Which layers are MoE: first_k_dense_replace, moe_layer_freq, decoder_sparse_step, mlp_only_layers,
    // interleave_moe_layer_step (Llama 4).
    if (errors.size() != errors_before) return m;
    m.layers.assign(size_t(m.num_layers), LayerDesc{});
    if (!nas_blocks.empty()) m.layers = nas_blocks;
    if (m.is_moe()) {
        int first_dense = read_int(c, "first_k_dense_replace", path, errors, 0, false, 0, m.num_layers);
        int freq = 1;
        // moe_layer_freq as a list: one 0/1 per layer (MiniMax-M3, MiMo-V2-Flash), which layers are MoE.
        auto freq_list = c.find("moe_layer_freq");
        const bool listed = freq_list != c.end() && freq_list->is_array();
        if (listed) {
            if (freq_list->size() != size_t(m.num_layers))
                errors.push_back({path + ".moe_layer_freq", "has " + std::to_string(freq_list->size()) + " entries for " +
                                                                std::to_string(m.num_layers) + " layers"});
            for (size_t i = 0; i < freq_list->size() && i < size_t(m.num_layers); ++i) {
                const json& v = (*freq_list)[i];
                if (!v.is_number_integer() || (v.get<long long>() != 0 && v.get<long long>() != 1)) {
                    errors.push_back({path + ".moe_layer_freq[" + std::to_string(i) + "]", "must be 0 (dense) or 1 (MoE)"});
                    break;
                }
            }
        } else if (has(c, "moe_layer_freq")) freq = read_int(c, "moe_layer_freq", path, errors, 1, false, 1, m.num_layers);
        else if (has(c, "decoder_sparse_step")) freq = read_int(c, "decoder_sparse_step", path, errors, 1, false, 1, m.num_layers);
        else if (has(c, "interleave_moe_layer_step")) freq = read_int(c, "interleave_moe_layer_step", path, errors, 1, false, 1, m.num_layers);
        const bool qwen_style = has(c, "decoder_sparse_step") && !has(c, "moe_layer_freq");
        for (int i = 0; i < m.num_layers; ++i) {
            bool moe;
            if (qwen_style) moe = (i + 1) % freq == 0;               // Qwen2/3-MoE: (layer_idx + 1) % step == 0
            else if (llama4) moe = (i + 1) % freq == 0;              // Llama 4: interleave step
            else moe = i >= first_dense && (i - first_dense) % freq == 0;  // DeepSeek: after the first k, every freq-th
            if (listed) moe = size_t(i) < freq_list->size() && (*freq_list)[size_t(i)].is_number_integer() &&
                              (*freq_list)[size_t(i)].get<long long>() == 1;
            m.layers[size_t(i)].moe = moe;
        }
        auto only = c.find("mlp_only_layers");
        if (only != c.end() && only->is_array()) {
            for (const json& v : *only) {
                if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= m.num_layers) {
                    errors.push_back({path + ".mlp_only_layers", "entries must be layer indices in [0, num_hidden_layers)"});
                    break;
                }
                m.layers[size_t(v.get<int>())].moe = false;
            }
        }
    }

    // Mamba-2 hybrids (Nemotron-H, Nemotron-3): the blocks are the layers; the mixer's shape with Hugging Face's
    // NemotronHConfig defaults where a key is absent.
    if (hybrid && errors.size() == errors_before) {
        m.layers = blocks;
        m.single_block_layers = true;
        m.ffn_matrices = 2;  // NemotronHMLP: up_proj and down_proj around mlp_hidden_act (relu2), no gate
        bool any_moe = false, any_mlp = false, any_mamba = false;
        for (const LayerDesc& l : m.layers) {
            any_moe = any_moe || (l.ffn && l.moe);
            any_mlp = any_mlp || (l.ffn && !l.moe);
            any_mamba = any_mamba || l.mixer == Mixer::mamba2;
        }
        const char* pattern_key = has(c, "hybrid_override_pattern") ? "hybrid_override_pattern" : "layers_block_type";
        if (any_moe && !m.is_moe())
            errors.push_back({path + "." + pattern_key, "has MoE blocks but the config has no n_routed_experts"});
        if (any_mlp && m.intermediate <= 0)
            errors.push_back({path + ".intermediate_size", "is required: " + std::string(pattern_key) + " has MLP blocks"});
        if (!any_moe && m.is_moe())
            errors.push_back({path + "." + pattern_key, "has no MoE block (E / \"moe\") but the config gives n_routed_experts"});
        if (any_mamba) read_mamba_mixer(c, path, m, errors);
        if (errors.size() != errors_before) return m;
    }

    // Sliding windows: layer_types ("sliding_attention"), use_sliding_window + max_window_layers (Qwen2),
    // Llama 4 chunked attention on the RoPE layers (every 4th layer is global).
    int window = 0;
    if (has(c, "sliding_window")) window = read_int(c, "sliding_window", path, errors, 0, false, 0, 1 << 30);
    auto types = c.find("layer_types");
    auto layer_type_is = [&](size_t i, const char* kind) {
        return (*types)[i].is_string() && (*types)[i].get<std::string>() == kind;
    };
    // Gated DeltaNet layers: layer_types "linear_attention" (Qwen3.5), else every layer but each
    // full_attention_interval-th (Qwen3-Next: layer i is full attention when (i + 1) % interval == 0).
    bool any_linear = false;
    if (types != c.end() && types->is_array())
        for (size_t i = 0; i < types->size(); ++i) any_linear = any_linear || layer_type_is(i, "linear_attention");
    // Every entry must be a kind we model; an unknown one (a new mixer) was silently full attention.
    if (types != c.end() && types->is_array()) {
        static const char* const kKnown[] = {"full_attention", "sliding_attention", "linear_attention", "deepseek_sparse_attention"};
        for (size_t i = 0; i < types->size(); ++i) {
            const json& t = (*types)[i];
            if (t.is_string() && std::any_of(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return t.get_ref<const std::string&>() == k; }))
                continue;
            errors.push_back({path + ".layer_types[" + std::to_string(i) + "]",
                              "unknown layer type " + shown(t) + " (full_attention, sliding_attention, linear_attention, deepseek_sparse_attention)"});
            break;
        }
    } else if (types != c.end() && !types->is_null()) {
        errors.push_back({path + ".layer_types", "must be a list of layer types"});
    }
    const bool gdn_family = m.model_type.rfind("qwen3_next", 0) == 0 || m.model_type.rfind("qwen3_5", 0) == 0 ||
                            has(c, "linear_num_value_heads");
    const bool interval_linear = !any_linear && gdn_family && has(c, "full_attention_interval");
    if ((types != c.end() && types->is_array() && (window > 0 || any_linear)) &&
        types->size() != size_t(m.num_layers)) {
        errors.push_back({path + ".layer_types", "has " + std::to_string(types->size()) + " entries for " +
                                                      std::to_string(m.num_layers) + " layers"});
        any_linear = false;
    }
    if (any_linear || interval_linear) {
        const int interval = interval_linear ? read_int(c, "full_attention_interval", path, errors, 4, false, 1, m.num_layers) : 0;
        for (int i = 0; i < m.num_layers; ++i)
            if (interval_linear ? (i + 1) % interval != 0 : layer_type_is(size_t(i), "linear_attention"))
                m.layers[size_t(i)].mixer = Mixer::gated_deltanet;
        // Hugging Face's defaults (Qwen3NextConfig) where a key is absent.
        m.lin_num_k_heads = read_int(c, "linear_num_key_heads", path, errors, 16, false, 1, 65536);
        m.lin_num_v_heads = read_int(c, "linear_num_value_heads", path, errors, 32, false, 1, 65536);
        m.lin_k_head_dim = read_int(c, "linear_key_head_dim", path, errors, 128, false, 1, 65536);
        m.lin_v_head_dim = read_int(c, "linear_value_head_dim", path, errors, 128, false, 1, 65536);
        m.lin_conv_kernel = read_int(c, "linear_conv_kernel_dim", path, errors, 4, false, 1, 1024);
        if (m.lin_num_v_heads % m.lin_num_k_heads != 0)
            errors.push_back({path + ".linear_num_value_heads", std::to_string(m.lin_num_v_heads) + " is not a multiple of " +
                                                                     std::to_string(m.lin_num_k_heads) + " linear_num_key_heads"});
        const std::string state = read_str(c, "mamba_ssm_dtype", "float32");
        if (!parse_dtype(state, m.lin_state_dtype) || (m.lin_state_dtype != Dtype::fp32 && m.lin_state_dtype != Dtype::bf16 &&
                                                       m.lin_state_dtype != Dtype::fp16))
            errors.push_back({path + ".mamba_ssm_dtype", "must be float32, bfloat16 or float16, not '" + shown_text(state) + "'"});
    }
    if (types != c.end() && types->is_array() && window > 0 && types->size() == size_t(m.num_layers)) {
        for (size_t i = 0; i < types->size(); ++i)
            if (layer_type_is(i, "sliding_attention")) m.layers[i].window = window;
    } else if (types != c.end() && types->is_array() && window > 0) {
        // size mismatch reported above
    } else if (window > 0 && has(c, "use_sliding_window")) {
        if (read_bool(c, "use_sliding_window", false)) {
            int max_window_layers = read_int(c, "max_window_layers", path, errors, m.num_layers, false, 0, 1 << 20);
            for (int i = max_window_layers; i < m.num_layers; ++i) m.layers[size_t(i)].window = window;
        }
    } else if (window > 0 && m.model_type != "qwen3" && m.model_type != "qwen3_moe") {
        for (LayerDesc& l : m.layers) l.window = window;  // Mistral-style: every layer
    }
    if (llama4) {
        int chunk = read_int(c, "attention_chunk_size", path, errors, 0, false, 0, 1 << 30);
        if (chunk > 0)
            for (int i = 0; i < m.num_layers; ++i)
                if ((i + 1) % 4 != 0) m.layers[size_t(i)].window = chunk;
    }

    auto ratios = c.find("compress_ratios");
    if (ratios != c.end() && ratios->is_array()) {
        for (const json& r : *ratios) {
            if (!r.is_number_integer() || r.get<long long>() < 0 || r.get<long long>() > (1 << 20)) {
                errors.push_back({path + ".compress_ratios", "entries must be whole numbers >= 0"});
                m.compress_ratios.clear();
                break;
            }
            m.compress_ratios.push_back(r.get<int>());
        }
        m.compress_window = read_int(c, "window_size", path, errors, window > 0 ? window : 128, false, 1, 1 << 24);
        m.index_head_dim = read_int(c, "index_head_dim", path, errors, 128, false, 0, 65536);
        if (m.index_topk <= 0) m.index_topk = read_int(c, "index_topk", path, errors, 2048, false, 1, 1 << 30);
        // Each layer: its window of uncompressed tokens plus its compressed entries. A list shorter than the layers
        // leaves the rest window-only; entries past the layers belong to the MTP modules.
        for (int i = 0; i < m.num_layers; ++i) {
            m.layers[size_t(i)].window = m.compress_window;
            m.layers[size_t(i)].compress = size_t(i) < m.compress_ratios.size() ? m.compress_ratios[size_t(i)] : 0;
        }
        m.mtp_layer.window = m.compress_window;
        m.mtp_layer.compress = m.compress_ratios.size() > size_t(m.num_layers) ? m.compress_ratios[size_t(m.num_layers)] : 0;
    }

    // MiniMax-M3: its dense and shared FFN widths, and its block-sparse attention layers (model_attention_kinds.cpp).
    read_ffn_widths(c, path, m, errors);
    read_block_sparse_attention(c, path, m, errors);
    // Gemma-4: the global layers' shape and the MoE block (same file).
    read_global_attention(c, path, m, errors);
    read_moe_block(c, path, m, errors);
    // MiMo-V2's per-layer attention shapes (same file); Kimi-K3's KDA layers and its other keys (model_kda.cpp).
    read_hybrid_attention(c, path, m, errors);
    read_kimi_linear(c, path, m, errors);

    // quantization_config sits beside text_config in multimodal checkpoints (Llama 4).
    QuantRead quant;
    read_quantization(has(c, "quantization_config") ? c : root, m, has(c, "quantization_config") ? path : path_in, errors, quant);
    // DeepSeek-V4 names its routed experts' format beside quantization_config ("expert_dtype": "fp4": FP4 e2m1
    // with a UE8M0 scale per 32, i.e. MXFP4).
    if (m.is_moe() && has(c, "expert_dtype")) {
        const std::string e = read_str(c, "expert_dtype");
        Dtype d{};
        if (e == "fp4") m.expert_dtype = Dtype::mxfp4;
        else if (parse_dtype(e, d)) m.expert_dtype = d;
        else errors.push_back({path + ".expert_dtype", "unknown format '" + shown_text(e) + "'"});
    }

    for (LayerDesc& l : m.layers)
        if (l.mixer != Mixer::attention) l.window = 0;  // a recurrent state (or no mixer) has no window

    m.layer_kinds = layer_kinds_of(m.layers);
    if (!m.layers.empty() && m.hidden > 0) apply_quant_exclusions(quant.exclude, quant.path, quant.per_module, m, errors);
    // A dense model's "experts" format is its MLP's (what `dtypes.experts` reports).
    if (!m.is_moe()) m.expert_dtype = m.ffn_dtype;
    for (const LayerDesc& l : m.layers) {
        if (l.ffn) (l.moe ? m.n_moe_layers : m.n_dense_layers) += 1;
        if (l.mixer == Mixer::gated_deltanet) m.n_linear_layers += 1;
        if (l.mixer == Mixer::mamba2) m.n_mamba_layers += 1;
        if (l.mixer == Mixer::none) m.n_mixerless_layers += 1;
        if (l.mixer == Mixer::linear) m.n_proj_layers += 1;
        if (l.sparse && l.mixer == Mixer::attention) m.n_sparse_layers += 1;
        if (m.is_global(l)) m.n_global_layers += 1;
        if (l.window > 0) {
            m.n_window_layers += 1;
            auto it = std::find_if(m.window_groups.begin(), m.window_groups.end(), [&](const auto& g) { return g.first == l.window; });
            if (it == m.window_groups.end()) m.window_groups.push_back({l.window, 1});
            else it->second += 1;
        }
    }

    // Parameter counts (norms included; rotary/bias-free where the config says so)
    const double h = m.hidden;
    const double embed = double(m.vocab) * h;
    const double head = m.tie_embeddings ? 0.0 : embed;
    const double norms = 2.0 * h;
    const double attn = m.attn_params();
    const double lin_attn = m.n_linear_layers > 0 ? m.linear_attn_params() : 0.0;
    const double dense_layer = attn + m.dense_ffn_params() + norms;
    const double latent = m.latent_proj_params();  // LatentMoE's projections (0 otherwise), run for every token
    const double moe_layer_total = attn + m.num_experts * m.expert_params() + m.shared_params() + m.router_params() + latent + norms;
    const double moe_layer_active = attn + m.top_k * m.expert_params() + m.shared_params() + m.router_params() + latent + norms;
    // Hyper-connections (DeepSeek-V4, seed 002 §2): before the attention and the FFN, a map from hc_mult*h to
    // (2 + hc_mult) * hc_mult mixing weights.
    const double hc = m.hc_params_per_layer();
    // DeepSeek-V4 compressed layers: a KV compressor (wkv and wgate to coff * head_dim, coff = 2 where the windows
    // overlap at ratio 4, a positional bias per slot, a norm); CSA layers (ratio 4) add the indexer (wq_b from the q
    // latent, the weights projection, and a compressor of its own at index_head_dim).
    auto compressor = [&](int ratio, double dim) {
        const double coff = ratio == 4 ? 2.0 : 1.0;
        return 2.0 * h * coff * dim + ratio * coff * dim + dim;
    };
    double compress_extra = 0;
    for (int r : m.compress_ratios) {
        if (r <= 0) continue;
        compress_extra += compressor(r, m.head_dim);
        if (r == 4 && m.index_n_heads > 0)
            compress_extra += double(m.q_lora_rank) * m.index_n_heads * m.index_head_dim + h * m.index_n_heads +
                              compressor(r, m.index_head_dim);
    }
    // A Gated DeltaNet layer swaps its attention parameters for the linear-attention ones.
    const double mixer_swap = m.n_linear_layers * (lin_attn - attn);
    // Gemma-4: its global layers' attention in place of the sliding layers' shape, and its extra norms.
    const double gemma = m.n_global_layers * (m.global_attn_params() - attn) + double(m.num_layers) * m.extra_norms_per_layer * h;
    // Layers of their own attention shape (MiMo-V2); attention residuals' final mix (a norm and a score projection).
    const double own = m.own_attention_delta() + (m.attn_res_block > 0 ? 2.0 * h : 0.0);
    const double extra = mixer_swap + m.num_layers * hc + compress_extra + m.n_sparse_layers * m.sparse_indexer_params() + gemma + own;
    m.total_params = embed + head + h + m.n_dense_layers * dense_layer + m.n_moe_layers * moe_layer_total + extra;
    m.active_params = embed + (m.tie_embeddings ? 0.0 : head) + h + m.n_dense_layers * dense_layer +
                      m.n_moe_layers * moe_layer_active + extra;
    if (m.single_block_layers) {
        // One block per layer (Nemotron-H): its mixer or its FFN, and one RMSNorm.
        const double mamba = m.n_mamba_layers > 0 ? m.mamba_params() : 0.0;
        const double moe_total = m.num_experts * m.expert_params() + m.shared_params() + m.router_params() + latent;
        const double moe_active = m.top_k * m.expert_params() + m.shared_params() + m.router_params() + latent;
        m.total_params = m.active_params = embed + head + h;
        for (const LayerDesc& l : m.layers) {
            const double mixer = l.mixer == Mixer::attention ? attn : l.mixer == Mixer::mamba2 ? mamba
                                 : l.mixer == Mixer::gated_deltanet ? lin_attn : 0.0;
            const double ffn_total = !l.ffn ? 0.0 : l.moe ? moe_total : m.dense_ffn_params();
            const double ffn_active = !l.ffn ? 0.0 : l.moe ? moe_active : m.dense_ffn_params();
            m.total_params += mixer + ffn_total + m.norm_params_per_layer();
            m.active_params += mixer + ffn_active + m.norm_params_per_layer();
        }
    }
    if (m.per_layer_blocks) {
        // Nemotron NAS: every layer from its own block (dense)
        m.total_params = embed + head + h;
        for (const LayerDesc& l : m.layers) m.total_params += m.block_params(l);
        m.active_params = m.total_params;
    }
    m.active_compute_params = m.tie_embeddings ? m.active_params : m.active_params - embed;
    // An MTP module (DeepSeek-V3's model.layers.61): one extra decoder layer (MoE when the model is), the eh_proj
    // (2h x h), enorm and hnorm before it and shared_head.norm after it (three norms of h). The embedding and
    // shared_head.head are the main model's (the checkpoint stores copies; the engines load them once).
    const double mtp_layer = (m.is_moe() ? moe_layer_total : dense_layer) + 2.0 * h * h + 3.0 * h;
    m.mtp_params = m.mtp_layers * mtp_layer;
    return m;
}

}  // namespace moe
