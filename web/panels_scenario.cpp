// panels_scenario.cpp — the scenario editor: model (preset or a pasted / dropped config.json, with a summary),
// hardware (preset plus editable specs), parallelism (with the derived world size and experts per GPU, and the
// core's own words when a layout is invalid), workload, serving (DESIGN §8: mode, engine, request lengths,
// concurrency; for disaggregated serving each pool's layout, workers and batch, with the GPU total), precision,
// runtime and routing.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "format.h"
#include "panels.h"
#include "platform.h"
#include "theme.h"
#include "widgets.h"

namespace web {

namespace {

void error_text(const std::string& text) {
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::kBad));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The model's and the edit's errors whose path starts with one of `prefixes` (e.g. "parallel."), under the section.
void section_errors(const AppState& st, std::initializer_list<const char*> prefixes) {
    auto match = [&](const std::string& path) {
        for (const char* p : prefixes)
            if (starts_with(path, p)) return true;
        return false;
    };
    for (const moe::Issue& i : st.edit_errors)
        if (match(i.path) || match(st.edit_error_path)) error_text(i.text());
    for (const moe::Issue& i : st.estimate.errors)
        if (match(i.path)) error_text(i.text());
}

bool section(const char* title) {
    ImGui::Spacing();
    ImGui::PushFont(theme::fonts().bold);
    const bool open = ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen);
    ImGui::PopFont();
    return open;
}

// A two-column key/value line of the model summary.
void summary_row(const char* key, const std::string& value) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", key);
    ImGui::TableNextColumn();
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(value.c_str());
    ImGui::PopTextWrapPos();
}

int config_text_resize(ImGuiInputTextCallbackData* data) {
    if (data->EventFlag == ImGuiInputTextFlags_CallbackResize) {
        auto* s = static_cast<std::string*>(data->UserData);
        s->resize(static_cast<std::size_t>(data->BufTextLen));
        data->Buf = s->data();
    }
    return 0;
}

void model_section(AppState& st) {
    if (!section("Model")) return;
    const moe::Scenario& s = st.scenario;
    const moe::ModelSpec& m = s.model;
    if (s.model_inline.is_object()) {
        // A pasted config: the combo shows its name and offers the presets.
        std::string label = "config.json: " + m.name;
        form_label("Model");
        const bool open = ImGui::BeginCombo("##model", label.c_str(), ImGuiComboFlags_HeightLarge);
        const ImVec2 fmin = ImGui::GetItemRectMin(), fmax = ImGui::GetItemRectMax();
        if (open) {
            for (const moe::CatalogEntry& e : st.catalog->models()) {
                if (ImGui::Selectable(e.id.c_str(), false)) edit_field(st, "model", e.id);
                record_last_item(st, "model=" + e.id);
            }
            ImGui::EndCombo();
        }
        record_rect(st, "model", fmin, fmax);
        help_for_field("model");
    } else {
        field_preset_combo(st, "model", "Model", st.catalog->models());
    }

    // paste / drop a config.json
    form_label("");
    if (ImGui::Button(st.config_box_open ? "Hide config.json box" : "Paste config.json\u2026")) {
        st.config_box_open = !st.config_box_open;
        if (st.config_box_open && st.config_text.empty() && s.model_inline.is_object()) st.config_text = s.model_inline.dump(2);
    }
    record_last_item(st, "button.config_box");
    help_marker("Paste a HuggingFace config.json into the box (or drop the file anywhere on the page): the model "
                "becomes that config, parsed the same way as `moe-roofline --set model=config.json`.");
    if (st.config_box_open) {
        ImGui::TextDisabled("Paste (Ctrl+V) or drop a config.json file on the page:");
        if (st.config_text.capacity() < 64) st.config_text.reserve(64);
        ImGui::InputTextMultiline("##config", st.config_text.data(), st.config_text.capacity() + 1,
                                  ImVec2(-1, ImGui::GetTextLineHeight() * 8),
                                  ImGuiInputTextFlags_CallbackResize | ImGuiInputTextFlags_AllowTabInput,
                                  config_text_resize, &st.config_text);
        record_last_item(st, "model.config_text");
        if (ImGui::Button("Use this config")) {
            if (apply_model_config(st, st.config_text)) {
                st.toast = "Model set from the pasted config.json";
                st.toast_until = ImGui::GetTime() + 3;
                st.last_action = "load:config";
            }
            st.publish_pending = true;
        }
        record_last_item(st, "button.use_config");
        ImGui::SameLine();
        if (ImGui::Button("Clear")) {
            st.config_text.clear();
            st.config_errors.clear();
        }
        for (const std::string& e : st.config_errors) error_text(e);
    }

    // summary of the parsed model
    if (m.num_layers > 0 &&
        ImGui::BeginTable("model_summary", 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoPadOuterX)) {
        ImGui::TableSetupColumn("k", ImGuiTableColumnFlags_WidthFixed, form_label_width() - ImGui::GetStyle().CellPadding.x * 2);
        ImGui::TableSetupColumn("v", ImGuiTableColumnFlags_WidthStretch);
        char buf[256];
        if (m.single_block_layers)  // Nemotron-H: one block per layer
            std::snprintf(buf, sizeof buf, "%d (%d Mamba-2, %d attention, %d %s)", m.num_layers, m.n_mamba_layers,
                          m.n_attention_layers(), m.is_moe() ? m.n_moe_layers : m.n_dense_layers, m.is_moe() ? "MoE" : "MLP");
        else if (m.n_dense_layers > 0 && m.n_moe_layers > 0)
            std::snprintf(buf, sizeof buf, "%d (%d dense + %d MoE)", m.num_layers, m.n_dense_layers, m.n_moe_layers);
        else
            std::snprintf(buf, sizeof buf, "%d %s", m.num_layers, m.is_moe() ? "MoE" : "dense");
        summary_row("Layers", buf);
        std::snprintf(buf, sizeof buf, "%s \u00b7 vocab %s", fmt::number(m.hidden).c_str(), fmt::number(m.vocab).c_str());
        summary_row("Hidden", buf);
        std::string attn;
        if (m.attn == moe::AttnKind::mla) {
            std::snprintf(buf, sizeof buf, "MLA, %d heads, KV latent %d + rope %d", m.num_heads, m.kv_lora_rank,
                          m.qk_rope_head_dim);
        } else {
            std::snprintf(buf, sizeof buf, "%s, %d heads / %d KV \u00d7 %d", m.attn == moe::AttnKind::gqa ? "GQA" : "MHA",
                          m.num_heads, m.num_kv_heads, m.head_dim);
        }
        attn = buf;
        if (m.n_window_layers > 0 && !m.window_groups.empty()) {
            std::snprintf(buf, sizeof buf, "; window %d on %d layers", m.window_groups.front().first, m.n_window_layers);
            attn += buf;
        }
        summary_row("Attention", attn);
        if (m.is_moe()) {
            std::snprintf(buf, sizeof buf, "%d routed, top-%d%s \u00b7 FFN %d", m.num_experts, m.top_k,
                          m.shared_intermediate > 0 ? " + shared" : "", m.moe_intermediate);
            summary_row("Experts", buf);
        } else {
            summary_row("FFN", "dense, intermediate " + fmt::number(m.intermediate));
        }
        std::snprintf(buf, sizeof buf, "%s total \u00b7 %s active", fmt::params(m.total_params).c_str(),
                      fmt::params(m.active_params).c_str());
        summary_row("Parameters", buf);
        std::snprintf(buf, sizeof buf, "%s weights%s", moe::dtype_name(m.weight_dtype),
                      m.expert_dtype != m.weight_dtype ? (std::string(", experts ") + moe::dtype_name(m.expert_dtype)).c_str() : "");
        summary_row("Checkpoint", buf);
        if (m.mtp_layers > 0) summary_row("MTP", std::to_string(m.mtp_layers) + " draft layer(s)");
        ImGui::EndTable();
    }
    section_errors(st, {"model"});
}

// ---- hardware: a preset, and its specs editable as overrides {"base": id, field: value}
// Labels of the editable GPU specs; their units, ranges and "(?)" text come from moe::gpu_fields().
struct GpuField {
    const char* key;
    const char* label;
    bool integer;
    bool mesh_only = false;  // shown when the topology is a mesh
};
const GpuField kGpuFields[] = {
    {"dense_tflops_bf16", "BF16 TFLOPS", false}, {"dense_tflops_fp8", "FP8 TFLOPS", false},
    {"dense_tflops_fp4", "FP4 TFLOPS", false},   {"hbm_bandwidth_GBps", "HBM GB/s", false},
    {"hbm_capacity_GiB", "HBM GiB", false},      {"nvlink_bandwidth_GBps", "NVLink GB/s", false},
    {"rdma_bandwidth_GBps", "RDMA GB/s", false}, {"gpus_per_node", "GPUs per node", true},
    {"sm_count", "SMs", true},
    {"mesh_rows", "Mesh rows", true, true}, {"mesh_cols", "Mesh columns", true, true},
    {"links_per_chip", "Links per chip", true, true}, {"link_bandwidth_GBps", "Link GB/s", false, true},
    {"tile_tokens", "Tile tokens", true},    {"matmul_efficiency", "Matmul efficiency", false},
    {"gemm_efficiency", "GEMM efficiency", false}, {"gemm_hbm_efficiency", "GEMM HBM efficiency", false},
    {"grouped_gemm_efficiency", "Grouped GEMM efficiency", false},
    {"attn_efficiency", "Attention efficiency", false},
    {"host_memory_bytes", "Host memory bytes", false}, {"host_bandwidth_GBps", "Host GB/s", false},
    {"ssd_bandwidth_GBps", "SSD GB/s", false},
    {"board_power_w", "Board power W", false}, {"idle_power_w", "Idle power W", false},
};

const char* gpu_field_help(const char* key);

// A string-valued GPU field (topology, mesh_wrap) as a combo writing the hardware override object.
void gpu_choice(AppState& st, const char* key, const char* label, const char* const* choices, const char* current,
                const std::string& base, const moe::GpuSpec* preset) {
    const moe::Scenario& s = st.scenario;
    const bool custom = s.hardware_inline.is_object();
    form_label(label, custom && s.hardware_inline.contains(key));
    ImGui::PushID(key);
    std::string picked;
    if (ImGui::BeginCombo("##v", current)) {
        for (int i = 0; choices[i]; ++i) {
            const bool sel = std::string(choices[i]) == current;
            if (ImGui::Selectable(choices[i], sel) && !sel) picked = choices[i];
            record_last_item(st, std::string("hardware.") + key + "=" + choices[i]);
        }
        ImGui::EndCombo();
    }
    record_last_item(st, std::string("hardware.") + key);
    ImGui::PopID();
    help_marker(gpu_field_help(key));
    if (picked.empty()) return;
    nlohmann::json obj = custom ? s.hardware_inline : nlohmann::json{{"base", base}};
    const nlohmann::json preset_json = preset ? moe::gpu_spec_to_json(*preset) : nlohmann::json::object();
    if (preset_json.contains(key) && preset_json[key] == picked) obj.erase(key);
    else obj[key] = picked;
    if (obj.size() == 1 && obj.contains("base") && !base.empty()) edit_field(st, "hardware", base);
    else edit_field(st, "hardware", obj);
    st.edit_error_path = st.edit_errors.empty() ? "" : "hardware";
}

const char* gpu_field_help(const char* key) {
    for (const moe::GpuFieldDesc& d : moe::gpu_fields())
        if (std::string(d.key) == key) return d.help;
    if (std::string(key) == "topology")
        return "switch: NVLink node + RDMA; rack: one NVLink domain up to 72 GPUs (NVL72); mesh: chips joined by point-to-point links, all-to-all costed in link-hops (Tenstorrent); unified: CPU and GPU share one memory (Apple).";
    if (std::string(key) == "mesh_wrap") return "Mesh: whether each axis wraps around (ring) or ends (line).";
    return "";
}

std::string hardware_base(const moe::Scenario& s) {
    if (s.hardware_inline.is_object()) {
        const auto it = s.hardware_inline.find("base");
        if (it != s.hardware_inline.end() && it->is_string()) return it->get<std::string>();
        return "";
    }
    return s.hardware_ref;
}

void hardware_section(AppState& st) {
    if (!section("Hardware")) return;
    const moe::Scenario& s = st.scenario;
    const std::string base = hardware_base(s);
    const bool custom = s.hardware_inline.is_object();
    {
        form_label("GPU");
        std::string preview = base.empty() ? "custom GPU" : base;
        if (custom && !base.empty()) preview += " (edited)";
        const bool open = ImGui::BeginCombo("##hardware", preview.c_str(), ImGuiComboFlags_HeightLarge);
        const ImVec2 fmin = ImGui::GetItemRectMin(), fmax = ImGui::GetItemRectMax();
        if (open) {
            for (const moe::CatalogEntry& e : st.catalog->hardware()) {
                const bool selected = !custom && e.id == base;
                if (ImGui::Selectable(e.id.c_str(), selected) && !selected) edit_field(st, "hardware", e.id);
                record_last_item(st, "hardware=" + e.id);
                if (ImGui::IsItemHovered() && !e.description.empty()) ImGui::SetTooltip("%s", e.description.c_str());
            }
            ImGui::EndCombo();
        }
        record_rect(st, "hardware", fmin, fmax);
        help_for_field("hardware");
    }
    ImGui::TextDisabled("%s", s.gpu.name.c_str());
    {
        // topology and memory tiers at a glance (DESIGN §10)
        std::string topo = moe::topology_name(s.gpu.topology);
        if (s.gpu.topology == moe::Topology::mesh)
            topo += " " + std::to_string(s.gpu.mesh_rows) + " x " + std::to_string(s.gpu.mesh_cols) + (s.gpu.mesh_ring ? " ring" : " line") +
                    ", " + fmt::number(s.gpu.neighbour_GBps(), 3) + " GB/s to a neighbour";
        else if (s.gpu.topology != moe::Topology::unified)
            topo += ", " + std::to_string(s.gpu.gpus_per_node) + " per NVLink domain";
        if (s.gpu.tile_tokens > 1) topo += ", tiles of " + std::to_string(s.gpu.tile_tokens);
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("topology: %s", topo.c_str());
        ImGui::PopStyleColor();
        record_last_item(st, "hardware.topology_summary");
        if (s.gpu.host_bandwidth_GBps > 0 || s.gpu.ssd_bandwidth_GBps > 0)
            ImGui::TextDisabled("tiers: host %s GB/s%s%s", fmt::number(s.gpu.host_bandwidth_GBps, 3).c_str(),
                                s.gpu.host_memory_bytes > 0 ? (", " + fmt::bytes(s.gpu.host_memory_bytes)).c_str() : "",
                                s.gpu.ssd_bandwidth_GBps > 0 ? (", SSD " + fmt::number(s.gpu.ssd_bandwidth_GBps, 3) + " GB/s").c_str() : "");
    }
    if (custom && !base.empty()) {
        ImGui::SameLine();
        if (ImGui::SmallButton("reset specs")) edit_field(st, "hardware", base);
        record_last_item(st, "button.hardware_reset");
    }
    // The specs, editable: open by default only when some are already edited.
    ImGui::SetNextItemOpen(custom, ImGuiCond_Appearing);
    const bool specs_open = ImGui::TreeNodeEx("Specs", ImGuiTreeNodeFlags_SpanAvailWidth, "Specs  %s TFLOPS, %s GB/s, %s GiB",
                                              fmt::number(s.gpu.dense_tflops_bf16, 3).c_str(),
                                              fmt::number(s.gpu.hbm_bandwidth_GBps, 4).c_str(),
                                              fmt::number(s.gpu.hbm_capacity_GiB, 4).c_str());
    record_last_item(st, "hardware.specs");
    if (!specs_open) {
        section_errors(st, {"hardware"});
        return;
    }
    const nlohmann::json spec = moe::gpu_spec_to_json(s.gpu);
    const moe::GpuSpec* preset = base.empty() ? nullptr : st.catalog->gpu(base);
    const nlohmann::json preset_json = preset ? moe::gpu_spec_to_json(*preset) : nlohmann::json::object();
    {
        static const char* const kWrapChoices[] = {"line", "ring", nullptr};
        gpu_choice(st, "topology", "Topology", moe::topology_choices(), moe::topology_name(s.gpu.topology), base, preset);
        if (s.gpu.topology == moe::Topology::mesh)
            gpu_choice(st, "mesh_wrap", "Mesh axes", kWrapChoices, s.gpu.mesh_ring ? "ring" : "line", base, preset);
    }
    for (const GpuField& f : kGpuFields) {
        if (f.mesh_only && s.gpu.topology != moe::Topology::mesh) continue;
        const double cur = spec.value(f.key, 0.0);
        const bool overridden = custom && s.hardware_inline.contains(f.key);
        form_label(f.label, overridden);
        const std::string key = std::string("hardware.") + f.key;
        double typed = 0;
        // typed_number lives in widgets.cpp; use the generic number field through a small lambda-like block
        ImGui::PushID(f.key);
        std::string& buf = st.edit_text[key];
        if (st.active_edit != key) buf = number_text(cur, f.integer);
        buf.resize(64, '\0');
        ImGui::InputText("##v", buf.data(), buf.size(), ImGuiInputTextFlags_CharsScientific | ImGuiInputTextFlags_AutoSelectAll);
        if (ImGui::IsItemActive()) st.active_edit = key;
        if (ImGui::IsItemDeactivated() && st.active_edit == key) st.active_edit.clear();
        const bool commit = ImGui::IsItemDeactivatedAfterEdit();
        record_last_item(st, key);
        ImGui::PopID();
        help_marker(gpu_field_help(f.key));
        if (!commit) continue;
        char* end = nullptr;
        const std::string text(buf.c_str());
        typed = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || !std::isfinite(typed)) continue;
        nlohmann::json obj = custom ? s.hardware_inline : nlohmann::json{{"base", base}};
        const bool integer = f.integer;
        const nlohmann::json value = integer ? nlohmann::json(static_cast<long long>(std::llround(typed))) : nlohmann::json(typed);
        if (preset && preset_json.contains(f.key) && preset_json[f.key] == value) obj.erase(f.key);
        else obj[f.key] = value;
        if (obj.size() == 1 && obj.contains("base") && !base.empty()) edit_field(st, "hardware", base);
        else edit_field(st, "hardware", obj);
        st.edit_error_path = st.edit_errors.empty() ? "" : "hardware";
    }
    ImGui::TreePop();
    section_errors(st, {"hardware"});
}

void parallel_section(AppState& st) {
    if (!section("Parallelism")) return;
    field_pow2_stepper(st, "parallel.tp", "TP (attention)");
    field_pow2_stepper(st, "parallel.dp", "DP (attention)");
    field_pow2_stepper(st, "parallel.ep", "EP (experts)");
    field_pow2_stepper(st, "parallel.pp", "PP (stages)");
    field_pow2_stepper(st, "parallel.cp", "CP (context)");
    field_input_number(st, "parallel.gpus_per_node", "GPUs per node", "from the GPU");
    const moe::Scenario& s = st.scenario;
    const int world = s.world();
    const int per_node = std::max(1, s.gpus_per_node());
    const int nodes = (world + per_node - 1) / per_node;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%d GPU%s = TP %d \u00d7 DP %d \u00d7 PP %d, %d node%s", world, world == 1 ? "" : "s",
                  s.parallel.tp, s.parallel.dp, s.parallel.pp, nodes, nodes == 1 ? "" : "s");
    form_label("World");
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(buf);
    ImGui::PopTextWrapPos();
    record_last_item(st, "derived.world");
    const bool ep_divides = s.parallel.ep > 0 && (s.parallel.tp * s.parallel.dp) % s.parallel.ep == 0;
    const std::string moe_tp = ep_divides ? std::to_string(s.moe_tp()) : "\u2014";
    if (s.model.is_moe()) {
        const int experts = s.model.num_experts + s.routing.redundant_experts;
        const double per_gpu = s.parallel.ep > 0 ? double(experts) / s.parallel.ep : 0;
        if (s.routing.redundant_experts > 0)
            std::snprintf(buf, sizeof buf, "%s per GPU (%d + %d redundant over EP %d), expert TP %s", fmt::number(per_gpu).c_str(),
                          s.model.num_experts, s.routing.redundant_experts, s.parallel.ep, moe_tp.c_str());
        else
            std::snprintf(buf, sizeof buf, "%s per GPU (%d over EP %d), expert TP %s", fmt::number(per_gpu).c_str(),
                          s.model.num_experts, s.parallel.ep, moe_tp.c_str());
    } else {
        std::snprintf(buf, sizeof buf, "dense model: no experts (FFN TP %d)", s.parallel.tp);
    }
    form_label("Experts");
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(buf);
    ImGui::PopTextWrapPos();
    record_last_item(st, "derived.experts");
    section_errors(st, {"parallel"});
}

void workload_section(AppState& st) {
    if (!section("Workload")) return;
    if (serving_on(st.scenario)) {
        // One set of request lengths (issue 26): with serving on, the Serving section's ISL / OSL and the
        // deployment's running batch drive every number shown, the step cards included.
        field_slider_int(st, "workload.prefill_tokens", "Prefill chunk", 128, 131072, true);
        field_slider_double(st, "workload.prefix_cache_hit", "Prefix cache hit", 0.0, 1.0, "%.2f");
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("Prompt and output: the Serving section's ISL and OSL; batch: the deployment's running "
                            "batch. The step cards show those steps.");
        ImGui::PopTextWrapPos();
        record_last_item(st, "workload.serving_note");
        section_errors(st, {"workload"});
        return;
    }
    field_segmented(st, "workload.phase", "Phase");
    field_slider_int(st, "workload.batch", "Batch per DP", 1, 4096, true);
    field_slider_int(st, "workload.prefill_tokens", "Prefill chunk", 128, 131072, true);
    field_slider_int(st, "workload.prompt_len", "Prompt", 16, 1048576, true);
    field_slider_int(st, "workload.output_len", "Output", 1, 131072, true);
    field_slider_int(st, "workload.context_len", "Decode context", 128, 1048576, true, st.scenario.context_len());
    field_slider_double(st, "workload.prefix_cache_hit", "Prefix cache hit", 0.0, 1.0, "%.2f");
    // requests of mixed lengths (seed 000 §8.1): each request's attention at its own length
    field_lengths(st, "workload.prompt_lens", "Prompt lengths", "e.g. 1024, 7168 (prefill)");
    if (!st.scenario.workload.prompt_lens.empty() || !st.scenario.workload.prefill_bucket_lens.empty())
        field_lengths(st, "workload.prefill_bucket_lens", "Buckets", "e.g. 1024, 4096");
    field_lengths(st, "workload.context_lens", "Decode contexts", "e.g. 1024, 7168 (decode)");
    const moe::WorkloadConfig& w = st.scenario.workload;
    if (w.mixed_lengths()) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("%s%s%s", !w.prompt_lens.empty() ? "Prompt lengths set the prefill forward (Prompt and Prefill chunk unused). " : "",
                            !w.context_lens.empty() ? "Decode contexts set the batch and its contexts (Batch and Decode context unused). " : "",
                            "Clear a list to go back.");
        ImGui::PopTextWrapPos();
        record_last_item(st, "workload.lengths_note");
    }
    section_errors(st, {"workload"});
}

// A derived line of the form (label on the left, wrapped text), published as ui[name].
void derived_row(AppState& st, const char* label, const char* text, const char* name) {
    form_label(label);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    record_last_item(st, name);
}

int pool_gpus(const moe::PoolConfig& p) { return p.parallel.tp * p.parallel.dp * p.parallel.pp; }

// One disaggregated pool: its layout with the Parallelism section's − / + steppers, workers and batch.
void pool_controls(AppState& st, const char* pool, const char* title) {
    ImGui::Spacing();
    ImGui::PushFont(theme::fonts().bold);
    ImGui::TextUnformatted(title);
    ImGui::PopFont();
    const std::string p = std::string("serving.") + pool;
    field_pow2_stepper(st, (p + ".parallel.tp").c_str(), "TP (attention)");
    field_pow2_stepper(st, (p + ".parallel.dp").c_str(), "DP (attention)");
    field_pow2_stepper(st, (p + ".parallel.ep").c_str(), "EP (experts)");
    field_pow2_stepper(st, (p + ".parallel.pp").c_str(), "PP (stages)");
    field_int_stepper(st, (p + ".workers").c_str(), "Workers");
    if (std::string(pool) == "prefill") field_slider_int(st, (p + ".batch").c_str(), "Prompts / forward", 1, 256, true);
    else field_slider_int(st, (p + ".batch").c_str(), "Max batch / DP", 1, 4096, true);
}

void serving_section(AppState& st) {
    if (!section("Serving")) return;
    field_choice_combo(st, "serving.mode", "Mode");
    const moe::Scenario& s = st.scenario;
    if (s.serving.mode == moe::ServingMode::off) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("Off: step-level numbers only. Aggregated serves closed-loop clients on the layout above "
                            "(continuous batching, chunked prefill); disaggregated gives prefill and decode their own pools.");
        ImGui::PopTextWrapPos();
        section_errors(st, {"serving"});
        return;
    }
    field_choice_combo(st, "runtime.engine", "Engine");
    if (!s.serving.sessions.on() && !s.serving.trace.on()) field_slider_int(st, "serving.isl", "Input (ISL)", 16, 1048576, true);
    if (!s.serving.trace.on()) field_slider_int(st, "serving.osl", "Output (OSL)", 1, 131072, true);
    char buf[256];
    const int per_node = std::max(1, s.gpus_per_node());
    if (s.serving.mode == moe::ServingMode::aggregated) {
        field_slider_int(st, "serving.concurrency", "Concurrency", 1, 16384, true);
        field_input_number(st, "serving.requests_per_client", "Requests / client");
        field_input_number(st, "serving.length_spread", "Length spread");
        field_input_number(st, "serving.stream_interval", "Stream interval");
        // SGLang's --scheduler-recv-interval (the other engines take new requests at every step)
        if (s.runtime.engine == moe::EngineKind::sglang) field_input_number(st, "serving.scheduler_recv_interval", "Recv interval");
        const int world = s.world();
        const double per_rank = double(s.serving.concurrency) / std::max(1, s.parallel.dp);
        std::snprintf(buf, sizeof buf, "one replica of the layout above: %d GPU%s, %s request%s per DP rank, chunk %s", world,
                      world == 1 ? "" : "s", fmt::number(per_rank, 3).c_str(), per_rank == 1 ? "" : "s",
                      fmt::number(s.workload.prefill_tokens).c_str());
        derived_row(st, "Deployment", buf, "derived.serving_gpus");
        sessions_controls(st);
    } else {
        field_slider_int(st, "serving.concurrency", "Concurrency", 1, 65536, true);
        field_input_number(st, "serving.requests_per_client", "Requests / client");
        field_input_number(st, "serving.length_spread", "Length spread");
        field_input_number(st, "serving.stream_interval", "Stream interval");
        pool_controls(st, "prefill", "Prefill pool");
        pool_controls(st, "decode", "Decode pool");
        const int pg = pool_gpus(s.serving.prefill), dg = pool_gpus(s.serving.decode);
        const long total = long(s.serving.prefill.workers) * pg + long(s.serving.decode.workers) * dg;
        const long nodes = (total + per_node - 1) / per_node;
        std::snprintf(buf, sizeof buf, "%ld GPUs = prefill %d \u00d7 %d + decode %d \u00d7 %d, %ld node%s", total,
                      s.serving.prefill.workers, pg, s.serving.decode.workers, dg, nodes, nodes == 1 ? "" : "s");
        derived_row(st, "GPUs", buf, "derived.serving_gpus");
        const long slots = long(s.serving.decode_slots());
        std::snprintf(buf, sizeof buf, "%d clients, %ld decode slots = %d worker%s \u00d7 DP %d \u00d7 batch %d%s",
                      s.serving.concurrency, slots, s.serving.decode.workers, s.serving.decode.workers == 1 ? "" : "s",
                      s.serving.decode.parallel.dp, s.serving.decode.batch,
                      s.serving.concurrency > slots ? " (the rest wait for a slot)" : "");
        derived_row(st, "Slots", buf, "derived.serving_concurrency");
        // Fit the pools to N GPUs: workers of one layout, the prefill:decode split with the most tokens/s per GPU
        form_label("Fit to");
        {
            const float bw = ImGui::CalcTextSize("Fit the pools").x + ImGui::GetStyle().FramePadding.x * 2;
            ImGui::SetNextItemWidth(std::max(theme::px(50), ImGui::GetContentRegionAvail().x - bw - ImGui::GetStyle().ItemSpacing.x));
            const int shown_gpus = st.fit_pools_gpus > 0 ? st.fit_pools_gpus : int(std::min<long>(total, 65536));
            int g = shown_gpus;
            ImGui::InputInt("##fit_pools_gpus", &g, 0, 0, ImGuiInputTextFlags_AutoSelectAll);
            record_last_item(st, "serving.fit_pools.gpus");
            if (ImGui::IsItemDeactivatedAfterEdit() || ImGui::IsItemActive()) st.fit_pools_gpus = std::clamp(g, 1, 65536);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("GPUs for both pools together");
            ImGui::SameLine();
            if (ImGui::Button("Fit the pools") && fit_pools_to(st, shown_gpus)) st.fit_pools_gpus = 0;  // follows the total again
            record_last_item(st, "serving.fit_pools");
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("Workers of one layout (the decode pool's, or the smallest that holds the model), split "
                                  "between prefill and decode for the most output tokens/s per GPU with TTFT under 10 s.");
        }
        ImGui::PushTextWrapPos(0.0f);
        if (!st.fit_pools_error.empty()) ImGui::TextColored(theme::vec(theme::kBad), "%s", st.fit_pools_error.c_str());
        ImGui::TextDisabled("The pools started from the Parallelism layout; it is not used by them.");
        ImGui::PopTextWrapPos();
        sessions_controls(st);
    }
    section_errors(st, {"serving"});
}

void precision_section(AppState& st) {
    if (!section("Precision")) return;
    const moe::Estimate& e = st.estimate;
    const bool known = e.ok;
    field_dtype_combo(st, "precision.weights", "Weights", known ? moe::dtype_name(e.weights_dtype) : nullptr);
    field_dtype_combo(st, "precision.experts", "Routed experts", known ? moe::dtype_name(e.experts_dtype) : nullptr);
    field_dtype_combo(st, "precision.attention", "Attention");
    field_dtype_combo(st, "precision.shared_experts", "Shared / dense FFN");
    field_dtype_combo(st, "precision.embedding", "Embedding");
    field_dtype_combo(st, "precision.kv_cache", "KV cache", known ? moe::dtype_name(e.kv_dtype) : nullptr);
    field_dtype_combo(st, "precision.dispatch", "Dispatch");
    field_dtype_combo(st, "precision.combine", "Combine");
    field_choice_combo(st, "precision.fp4_on_hopper", "FP4 without FP4 cores");
    // seed 002 (issue 30): FP4 stored and FP8 computed on Blackwell; the MLA latent cache's FP8 layout
    field_choice_combo(st, "precision.fp4_compute", "FP4 compute");
    if (st.scenario.model.attn == moe::AttnKind::mla) field_choice_combo(st, "precision.mla_kv", "MLA FP8 cache");
    section_errors(st, {"precision"});
}

void runtime_section(AppState& st) {
    if (!section("Runtime")) return;
    const moe::Estimate& e = st.estimate;
    std::string resolved;
    if (e.ok) {
        const bool pf = e.prefill.computed, dc = e.decode.computed;
        if (pf && dc && e.prefill_backend != e.decode_backend)
            resolved = std::string(moe::a2a_backend_name(e.prefill_backend)) + " / " + moe::a2a_backend_name(e.decode_backend);
        else
            resolved = moe::a2a_backend_name(pf ? e.prefill_backend : e.decode_backend);
    }
    field_choice_combo(st, "runtime.a2a_backend", "All-to-all", resolved.c_str());
    field_checkbox(st, "runtime.two_batch_overlap", "Two-batch overlap");
    field_choice_combo(st, "runtime.overlap", "Overlap");
    field_input_number(st, "runtime.micro_batches", "Micro-batches", "auto");
    field_checkbox(st, "runtime.shared_expert_overlap", "Shared exp. overlap");  // the checkbox column leaves ~19 characters
    field_slider_int(st, "runtime.comm_sms", "Comm SMs", 0, std::max(1, st.scenario.gpu.sm_count), false);
    field_choice_combo(st, "runtime.expert_layout", "Expert layout");
    // seed 001 (issue 30): the routed experts' kernel and the fused MoE's chunk
    field_choice_combo(st, "runtime.moe_kernel", "Expert kernel");
    field_input_number(st, "runtime.moe_chunk_tokens", "MoE chunk tokens", "engine's");
    // DESIGN §10: experts beyond the HBM cache streamed from host memory / SSD
    field_choice_combo(st, "runtime.expert_offload.tier", "Expert offload");
    if (st.scenario.runtime.expert_offload.tier != moe::OffloadTier::none) {
        field_input_number(st, "runtime.expert_offload.cached_experts_per_layer", "Cached experts");
        field_checkbox(st, "runtime.expert_offload.prefetch", "Prefetch");
        field_slider_double(st, "runtime.expert_offload.skew", "Popularity skew", 0.0, 2.0, "%.2f");
        field_input_number(st, "runtime.expert_offload.window_batches", "Cache window", "oracle");
    }
    speculative_controls(st);
    field_input_number(st, "runtime.mem_fraction", "Memory fraction", "engine's");
    field_input_number(st, "runtime.reserve_GB", "Reserve (GB)", "calibrated");
    field_input_number(st, "runtime.prefill_overhead_ms", "Prefill overhead", "calibrated (ms)");
    field_input_number(st, "runtime.decode_overhead_ms", "Decode overhead", "calibrated (ms)");
    field_input_number(st, "runtime.kv_block_tokens", "KV block tokens", "engine's");
    section_errors(st, {"runtime"});
}

void routing_section(AppState& st) {
    if (!section("Routing")) return;
    field_slider_double(st, "routing.imbalance", "Imbalance", 1.0, 4.0, "%.2f");
    field_input_number(st, "routing.redundant_experts", "Redundant experts");
    field_choice_combo(st, "routing.expert_rows", "Rows per expert");
    section_errors(st, {"routing"});
}

}  // namespace

void draw_scenario_panel(AppState& st) {
    model_section(st);
    hardware_section(st);
    parallel_section(st);
    workload_section(st);
    serving_section(st);
    precision_section(st);
    runtime_section(st);
    routing_section(st);
    // errors that name no section (or a cross-field check of several)
    for (const moe::Issue& i : st.estimate.errors) {
        if (i.path.empty() || !(starts_with(i.path, "model") || starts_with(i.path, "hardware") ||
                                starts_with(i.path, "parallel") || starts_with(i.path, "workload") ||
                                starts_with(i.path, "precision") || starts_with(i.path, "runtime") ||
                                starts_with(i.path, "routing") || starts_with(i.path, "serving")))
            error_text(i.text());
    }
    ImGui::Spacing();
}

}  // namespace web
