// quant_exclusions.cpp — the modules a quantised checkpoint leaves in its 16-bit dtype (issue 29).
//
// ModelOpt's hf_quant_config.json (`quantization.exclude_modules`), a config.json's quantization_config (`ignore`:
// ModelOpt and compressed-tensors; `modules_to_not_convert`: transformers' FP8 / MXFP4; `ignored_layers`) list
// module names or patterns: ModelOpt globs (fnmatch: `model.layers.*.self_attn*`, `model.layers.0*`, `lm_head`),
// compressed-tensors regular expressions after `re:` (`re:.*self_attn.*`), transformers' bare names (`gate`, matched
// as the last parts of a module name). This file matches them against the names of each layer's modules and gives
// every priced component (attention, dense FFN + shared experts, routed experts, the MTP module) the format of the
// larger part of its weights: the checkpoint's quantised format, or the model's dtype for what is excluded.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/scenario/model_spec.h"

namespace moe {

namespace {

// fnmatch without character classes: `*` any run (dots included, as Python's fnmatch), `?` one character.
bool glob_match(std::string_view p, std::string_view s) {
    std::size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
    while (si < s.size()) {
        if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
            ++pi, ++si;
        } else if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (star != std::string_view::npos) {
            pi = star + 1;
            si = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

// A compressed-tensors `re:` pattern as globs: `.*` -> `*`, `.` -> `?`, `\.` -> `.`, `^` / `$` at the ends dropped,
// and each `(a|b|...)` group (not nested) expanded into one glob per alternative. Other syntax: false.
bool regex_to_globs(std::string_view re, std::vector<std::string>& out) {
    if (!re.empty() && re.front() == '^') re.remove_prefix(1);
    if (!re.empty() && re.back() == '$' && (re.size() < 2 || re[re.size() - 2] != '\\')) re.remove_suffix(1);
    std::vector<std::string> globs{""};
    for (std::size_t i = 0; i < re.size(); ++i) {
        const char ch = re[i];
        std::vector<std::string> alts;
        if (ch == '\\') {
            if (i + 1 >= re.size()) return false;
            const char e = re[++i];
            if (std::string_view(".-_/[](){}*+?|^$\\").find(e) == std::string_view::npos) return false;
            alts.push_back(std::string(1, e));
        } else if (ch == '.' && i + 1 < re.size() && re[i + 1] == '*') {
            alts.push_back("*");
            ++i;
        } else if (ch == '.') {
            alts.push_back("?");
        } else if (ch == '(') {
            const std::size_t close = re.find(')', i);
            if (close == std::string_view::npos) return false;
            std::string_view body = re.substr(i + 1, close - i - 1);
            if (body.rfind("?:", 0) == 0) body.remove_prefix(2);
            std::size_t start = 0;
            for (std::size_t j = 0; j <= body.size(); ++j) {
                if (j < body.size() && std::string_view("()[]{}*+?\\.^$").find(body[j]) != std::string_view::npos)
                    return false;
                if (j == body.size() || body[j] == '|') {
                    alts.emplace_back(body.substr(start, j - start));
                    start = j + 1;
                }
            }
            i = close;
        } else if (std::string_view("[]{}*+?|^$)").find(ch) != std::string_view::npos) {
            return false;
        } else {
            alts.push_back(std::string(1, ch));
        }
        if (globs.size() * alts.size() > 64) return false;
        std::vector<std::string> next;
        for (const std::string& g : globs)
            for (const std::string& a : alts) next.push_back(g + a);
        globs.swap(next);
    }
    out.insert(out.end(), globs.begin(), globs.end());
    return true;
}

// The patterns, sorted by what they can match: a pattern that names one layer (`...layers.12.` then anything) goes
// to that layer's list with the text before `layers.` cut off (so `model.language_model.layers.3.mlp*` and
// `backbone.layers.3.mlp*` both read `layers.3.mlp*`); one under an `mtp` prefix to the MTP list; the rest to a
// list every layer tries (with the same cut when it names `layers.`: `model.layers.0*`, `model.layers.*.self_attn`).
struct Patterns {
    std::vector<std::vector<std::string>> by_layer;
    std::vector<std::string> any_layer_cut;  // start at "layers."
    std::vector<std::string> full;           // matched against the whole name
    std::vector<std::string> mtp;

    void add(std::string p, int num_layers) {
        if (p.empty()) return;
        const std::size_t at = p.find("layers.");
        if (at == std::string::npos) {
            (p.rfind("mtp", 0) == 0 ? mtp : full).push_back(std::move(p));
            return;
        }
        if (p.substr(0, at).find("mtp") != std::string::npos) {
            mtp.push_back(std::move(p));
            return;
        }
        std::string cut = p.substr(at);
        std::size_t k = 7;  // after "layers."
        long long idx = 0;
        bool digits = false;
        while (k < cut.size() && cut[k] >= '0' && cut[k] <= '9' && idx < (1 << 20)) idx = idx * 10 + (cut[k++] - '0'), digits = true;
        if (digits && k < cut.size() && cut[k] == '.' && idx <= num_layers) {
            by_layer[std::size_t(idx)].push_back(std::move(cut));
            return;
        }
        any_layer_cut.push_back(std::move(cut));
    }
};

// Whether module `leaf` of layer `layer` (e.g. "self_attn.q_proj") is excluded: a pattern matches its name or the
// name of a module above it (excluding `self_attn` excludes its projections); a bare name without wildcards (`gate`,
// `lm_head`) also matches the last parts of the name.
bool excluded(const Patterns& P, int layer, std::string_view leaf) {
    const std::string cut = "layers." + std::to_string(layer) + "." + std::string(leaf);
    const std::string full = "model." + cut;
    auto try_name = [&](const std::string& name, const std::vector<std::string>& pats, bool bare_suffix) {
        if (pats.empty()) return false;
        // the name and each module above it, from the deepest
        std::vector<std::string_view> names;
        for (std::size_t end = name.size(); end > 0;) {
            names.emplace_back(name.data(), end);
            const std::size_t dot = name.rfind('.', end - 1);
            if (dot == std::string::npos || dot == 0) break;
            end = dot;
        }
        for (const std::string& p : pats)
            for (std::string_view n : names) {
                if (glob_match(p, n)) return true;
                if (bare_suffix && p.find_first_of("*?") == std::string::npos && n.size() > p.size() &&
                    n.substr(n.size() - p.size()) == p && n[n.size() - p.size() - 1] == '.')
                    return true;
            }
        return false;
    };
    if (std::size_t(layer) < P.by_layer.size() && try_name(cut, P.by_layer[std::size_t(layer)], false)) return true;
    return try_name(cut, P.any_layer_cut, false) || try_name(full, P.full, true);
}

struct Leaf {
    const char* name;
    double params;
};

// The share of `leaves`' weights that is excluded, under the container naming that matches most (checkpoints name
// the same module differently: self_attn / attn / mixer / linear_attn; mlp / feed_forward / ffn).
double excluded_share(const Patterns& P, int layer, const std::vector<std::string>& containers, const std::vector<Leaf>& leaves) {
    double total = 0;
    for (const Leaf& l : leaves) total += l.params;
    if (total <= 0) return 0;
    double best = 0;
    for (const std::string& c : containers) {
        double hit = 0;
        for (const Leaf& l : leaves)
            if (excluded(P, layer, c + "." + l.name)) hit += l.params;
        best = std::max(best, hit / total);
    }
    return best;
}

}  // namespace

void apply_quant_exclusions(const std::vector<std::string>& raw, const std::string& path, bool per_module, ModelSpec& m,
                            Issues& errors) {
    m.quant_excluded = {};
    if (raw.empty()) return;
    Patterns P;
    P.by_layer.resize(std::size_t(m.num_layers) + 1);  // + the DeepSeek-style MTP layer (model.layers.<num_layers>)
    for (const std::string& r : raw) {
        if (r.rfind("re:", 0) == 0) {
            std::vector<std::string> globs;
            if (!regex_to_globs(std::string_view(r).substr(3), globs)) {
                errors.push_back({path, "pattern '" + r.substr(0, 80) +
                                            "' uses regular-expression syntax beyond .*, ., \\. and (a|b) groups"});
                return;
            }
            for (std::string& g : globs) P.add(std::move(g), m.num_layers);
        } else {
            P.add(r, m.num_layers);
        }
    }
    m.quant_excluded.patterns = int(raw.size());
    const double h = m.hidden, H = m.num_heads, d = m.head_dim, Hkv = m.num_kv_heads;
    const bool gemma = m.model_type.rfind("gemma4", 0) == 0;
    const std::vector<std::string> attn_names = {"self_attn", "attn", "mixer", "linear_attn", "attention"};
    const std::vector<Leaf> attn_leaves = [&]() -> std::vector<Leaf> {
        if (m.o_lora_rank > 0)
            return {{"wq_a", h * m.q_lora_rank}, {"wq_b", double(m.q_lora_rank) * H * d}, {"wkv", h * d},
                    {"wo_a", H * d * m.o_lora_rank}, {"wo_b", double(m.o_groups) * m.o_lora_rank * h}};
        if (m.attn == AttnKind::mla) {
            const double qk = double(m.qk_nope_head_dim) + m.qk_rope_head_dim;
            const double kv_a = h * (double(m.kv_lora_rank) + m.qk_rope_head_dim);
            const double kv_b = double(m.kv_lora_rank) * H * (double(m.qk_nope_head_dim) + m.v_head_dim);
            const double o = H * m.v_head_dim * h;
            if (m.q_lora_rank > 0)
                return {{"kv_a_proj_with_mqa", kv_a}, {"kv_b_proj", kv_b}, {"o_proj", o}, {"q_a_proj", h * m.q_lora_rank},
                        {"q_b_proj", double(m.q_lora_rank) * H * qk}};
            return {{"kv_a_proj_with_mqa", kv_a}, {"kv_b_proj", kv_b}, {"o_proj", o}, {"q_proj", h * H * qk}};
        }
        return {{"q_proj", h * H * d * (m.attn_output_gate ? 2.0 : 1.0)}, {"k_proj", h * Hkv * d}, {"v_proj", h * Hkv * d},
                {"o_proj", H * d * h}};
    }();
    const std::vector<Leaf> gdn_leaves = {{"in_proj_qkvz", h * (2.0 * m.lin_key_dim() + 2.0 * m.lin_value_dim())},
                                          {"in_proj_ba", h * 2.0 * m.lin_num_v_heads}, {"out_proj", m.lin_value_dim() * h}};
    const std::vector<Leaf> mamba_leaves = {{"in_proj", h * m.mamba_in_proj_dim()}, {"out_proj", m.mamba_inner() * h}};
    const std::vector<Leaf> ffn3 = {{"gate_proj", 1}, {"up_proj", 1}, {"down_proj", 1}};
    const std::vector<Leaf> ffn_w = {{"w1", 1}, {"w2", 1}, {"w3", 1}};
    const std::vector<Leaf> ffn2 = {{"up_proj", 1}, {"down_proj", 1}};
    // (container, leaves) namings of a dense MLP, a shared expert and one routed expert
    struct Naming {
        std::string container;
        const std::vector<Leaf>* leaves;
    };
    const std::vector<Naming> dense_names = {{"mlp", &ffn3}, {"feed_forward", &ffn3}, {"ffn", &ffn_w}, {"mixer", &ffn2}, {"mlp", &ffn2}};
    std::vector<Naming> shared_names = {{"mlp.shared_experts", &ffn3}, {"mlp.shared_expert", &ffn3}, {"ffn.shared_experts", &ffn_w},
                                        {"mixer.shared_experts", &ffn2}, {"feed_forward.shared_expert", &ffn3}};
    std::vector<Naming> expert_names = {{"mlp.experts.0", &ffn3}, {"block_sparse_moe.experts.0", &ffn_w},
                                        {"ffn.experts.0", &ffn_w}, {"mixer.experts.0", &ffn2}, {"feed_forward.experts.0", &ffn3}};
    if (gemma) {
        // Gemma-4 (transformers models/gemma4): the MoE block's dense MLP is `mlp` (costed as the shared expert), its
        // routed experts `experts` beside it: `layers.N.mlp*` excludes the MLP only.
        shared_names = {{"mlp", &ffn3}};
        expert_names = {{"experts", &ffn3}, {"moe.experts", &ffn3}};
    }
    auto share_of = [&](int layer, const std::vector<Naming>& names) {
        double best = 0;
        for (const Naming& n : names) best = std::max(best, excluded_share(P, layer, {n.container}, *n.leaves));
        return best;
    };
    double attn_total = 0, attn_ex = 0, ffn_total = 0, ffn_ex = 0, exp_total = 0, exp_ex = 0;
    for (int i = 0; i < m.num_layers; ++i) {
        const LayerDesc& l = m.layers[std::size_t(i)];
        if (l.mixer != Mixer::none) {
            const double size = l.mixer == Mixer::gated_deltanet ? m.linear_attn_params()
                                : l.mixer == Mixer::mamba2       ? m.mamba_params()
                                                                 : m.attn_params();
            const std::vector<Leaf>& leaves = l.mixer == Mixer::gated_deltanet ? gdn_leaves
                                              : l.mixer == Mixer::mamba2       ? mamba_leaves
                                                                               : attn_leaves;
            attn_total += size;
            attn_ex += size * excluded_share(P, i, attn_names, leaves);
        }
        if (!l.ffn) continue;
        if (l.moe) {
            const double shared = m.shared_params() + m.latent_proj_params();
            ffn_total += shared;
            if (shared > 0) ffn_ex += shared * share_of(i, shared_names);
            const double experts = double(m.num_experts) * m.expert_params();
            exp_total += experts;
            exp_ex += experts * share_of(i, expert_names);
        } else {
            ffn_total += m.dense_ffn_params();
            ffn_ex += m.dense_ffn_params() * share_of(i, dense_names);
        }
    }
    ModelSpec::QuantExcluded& q = m.quant_excluded;
    q.attention = attn_total > 0 ? attn_ex / attn_total : 0;
    q.ffn = ffn_total > 0 ? ffn_ex / ffn_total : 0;
    q.experts = exp_total > 0 ? exp_ex / exp_total : 0;
    // The MTP module: an `mtp*` pattern (Qwen3.5 / 3.6, DeepSeek-V4), or its DeepSeek-style layer index
    // (`model.layers.61*` in DeepSeek-V3.1-NVFP4) over its FFN.
    const int L = m.num_layers;
    const std::vector<Naming>& mtp_ffn = m.is_moe() ? expert_names : dense_names;
    q.mtp = !P.mtp.empty() || (m.mtp_layers > 0 && share_of(L, mtp_ffn) > 0.5);
    if (per_module) return;  // MIXED_PRECISION lists each quantised module: its own formats are already set
    // Each component in the format of the larger part of its weights.
    if (q.attention > 0.5) m.weight_dtype = m.dtype;
    if (q.ffn > 0.5) m.ffn_dtype = m.dtype;
    if (q.experts > 0.5) m.expert_dtype = m.dtype;
}

}  // namespace moe
