#include "core/scenario/catalog.h"

#include <cstdio>

#include "core/base/embedded.h"
#include "core/base/json_text.h"
#include "core/base/json_util.h"

namespace moe {
using namespace detail;

namespace {
constexpr std::size_t kMaxPresetBytes = 4u << 20;

std::string describe_model(const ModelSpec& m) {
    char buf[240];
    // "GQA" or, with Gated DeltaNet layers, "GQA x 12 + Gated DeltaNet x 36"
    std::string mixers = attn_kind_name(m.attn);
    if (m.n_linear_layers > 0)
        mixers += " x " + std::to_string(m.num_layers - m.n_linear_layers) + (m.kda ? " + Kimi Delta Attention x " : " + Gated DeltaNet x ") +
                  std::to_string(m.n_linear_layers);
    // Nemotron-H, one block per layer: "GQA x 6 + Mamba-2 x 23 + MoE x 23"
    if (m.n_mamba_layers > 0 || m.single_block_layers) {
        mixers += " x " + std::to_string(m.n_attention_layers()) + " + Mamba-2 x " + std::to_string(m.n_mamba_layers);
        if (m.single_block_layers && m.n_moe_layers > 0) mixers += " + MoE x " + std::to_string(m.n_moe_layers);
        if (m.single_block_layers && m.n_dense_layers > 0) mixers += " + MLP x " + std::to_string(m.n_dense_layers);
    }
    // LatentMoE: ", latent 1024" after the experts
    const std::string latent = m.moe_latent > 0 ? ", latent " + std::to_string(m.moe_latent) : "";
    if (m.is_moe())
        std::snprintf(buf, sizeof buf, "%.1fB params (%.1fB active), %d layers, %s, %d experts top-%d%s%s", m.total_params / 1e9,
                      m.active_params / 1e9, m.num_layers, mixers.c_str(), m.num_experts, m.top_k,
                      m.shared_intermediate > 0 ? " + shared" : "", latent.c_str());
    else
        std::snprintf(buf, sizeof buf, "%.1fB params, %d layers, %s, dense", m.total_params / 1e9, m.num_layers,
                      mixers.c_str());
    return buf;
}
std::string describe_gpu(const GpuSpec& g) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s: %.0f TFLOPS bf16, %.0f TFLOPS fp8, %.0f GB/s HBM, %.0f GiB", g.name.c_str(),
                  g.dense_tflops_bf16, g.dense_tflops_fp8, g.hbm_bandwidth_GBps, g.hbm_capacity_GiB);
    return buf;
}
}  // namespace

bool Catalog::add(std::string_view kind, std::string_view id, std::string_view text, Issues& errors) {
    const std::string where = std::string(kind) + "/" + std::string(id);
    if (!valid_utf8(id)) {  // ids are printed in JSON, links and listings
        errors.push_back({shown_text(where), "the preset id is not valid UTF-8"});
        return false;
    }
    if (text.size() > kMaxPresetBytes) {
        errors.push_back({where, "larger than 4 MiB"});
        return false;
    }
    json j;
    JsonTextError bad;
    if (!parse_json_text(text, j, bad)) {
        errors.push_back({where, (bad.number_out_of_range ? "" : "not valid JSON: ") + bad.message});
        return false;
    }
    if (!j.is_object()) {
        errors.push_back({where, "is not a JSON object"});
        return false;
    }
    if (json_depth(j, 64) > 64) {
        errors.push_back({where, "nested deeper than 64 levels"});
        return false;
    }
    CatalogEntry e{std::string(id), read_str(j, "description"), j};
    const size_t before = errors.size();
    auto replace_or_add = [&](std::vector<CatalogEntry>& list) -> size_t {
        for (size_t i = 0; i < list.size(); ++i)
            if (list[i].id == e.id) { list[i] = e; return i; }
        list.push_back(e);
        return list.size() - 1;
    };
    if (kind == "models") {
        ModelSpec m = parse_hf_config(j, where, errors);
        if (errors.size() != before) return false;
        m.name = e.id;
        if (e.description.empty()) e.description = describe_model(m);
        size_t i = replace_or_add(models_);
        if (i == model_specs_.size()) model_specs_.push_back(m); else model_specs_[i] = m;
    } else if (kind == "hardware") {
        GpuSpec g = parse_gpu_spec(j, where, errors);
        if (errors.size() != before) return false;
        if (g.id.empty()) g.id = e.id;
        if (e.description.empty()) e.description = describe_gpu(g);
        size_t i = replace_or_add(hardware_);
        if (i == gpu_specs_.size()) gpu_specs_.push_back(g); else gpu_specs_[i] = g;
    } else if (kind == "scenarios") {
        replace_or_add(scenarios_);
    } else {
        errors.push_back({where, "unknown preset kind (models, hardware, scenarios)"});
        return false;
    }
    return true;
}

const ModelSpec* Catalog::model(std::string_view id) const {
    for (size_t i = 0; i < models_.size(); ++i)
        if (models_[i].id == id) return &model_specs_[i];
    return nullptr;
}
const GpuSpec* Catalog::gpu(std::string_view id) const {
    for (size_t i = 0; i < hardware_.size(); ++i)
        if (hardware_[i].id == id) return &gpu_specs_[i];
    return nullptr;
}
const CatalogEntry* Catalog::scenario(std::string_view id) const {
    for (const CatalogEntry& e : scenarios_)
        if (e.id == id) return &e;
    return nullptr;
}

const Catalog& builtin_catalog() {
    static const Catalog catalog = [] {
        Catalog c;
        Issues errors;
        // Models and hardware first: scenarios refer to them.
        for (const char* kind : {"models", "hardware", "scenarios"}) {
            const std::string prefix = std::string("presets/") + kind + "/";
            for (const EmbeddedFile& f : embedded_files()) {
                std::string_view p(f.path);
                if (p.substr(0, prefix.size()) != prefix || p.size() < 5 || p.substr(p.size() - 5) != ".json") continue;
                std::string_view id = p.substr(prefix.size(), p.size() - prefix.size() - 5);
                if (id.find('/') != std::string_view::npos) continue;
                c.add(kind, id, std::string_view(f.data, f.size), errors);
            }
        }
        // Built-in presets are checked by the unit tests (every preset parses); errors here would be our bug.
        return c;
    }();
    return catalog;
}

}  // namespace moe
