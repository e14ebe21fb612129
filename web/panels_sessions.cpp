// panels_sessions.cpp — the scenario panel's controls of issue 29: speculative decoding (method, drafts, acceptance
// per position or a published curve) in Runtime, multi-turn sessions and the KV cache's tiers in Serving.
#include <imgui.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "format.h"
#include "panels.h"
#include "theme.h"
#include "widgets.h"

namespace web {

namespace {

// "0.9, 0.8, 0.7" for a list of rates
std::string rates_text(const nlohmann::json& v) {
    std::string out;
    if (!v.is_array()) return out;
    char tmp[32];
    for (const nlohmann::json& x : v) {
        std::snprintf(tmp, sizeof tmp, "%.6g", x.get<double>());
        out += (out.empty() ? "" : ", ") + std::string(tmp);
    }
    return out;
}

// "0.9, 0.8 0.7" -> [0.9, 0.8, 0.7]; null when a piece is not a number
nlohmann::json parse_rates(const std::string& text) {
    nlohmann::json list = nlohmann::json::array();
    const char* p = text.c_str();
    for (;;) {
        while (*p == ' ' || *p == ',' || *p == '\t') ++p;
        if (!*p) break;
        char* end = nullptr;
        const double v = std::strtod(p, &end);
        if (end == p) return nullptr;
        list.push_back(v);
        p = end;
    }
    return list;
}

// runtime.speculative.acceptance: a combo of "per position" and the published curves; per position, the rates typed.
void acceptance_control(AppState& st) {
    const char* path = "runtime.speculative.acceptance";
    const nlohmann::json v = moe::get_path(st.scenario, path);
    const bool named = v.is_string();
    form_label("Acceptance");
    const bool open = ImGui::BeginCombo("##runtime.speculative.acceptance", named ? v.get<std::string>().c_str() : "per position");
    const ImVec2 fmin = ImGui::GetItemRectMin(), fmax = ImGui::GetItemRectMax();
    if (open) {
        if (ImGui::Selectable("per position", !named) && named) {
            // the curve's conditional rates, to edit from
            nlohmann::json list = nlohmann::json::array();
            int n = 0;
            const moe::AcceptanceCurve* curves = moe::acceptance_curves(&n);
            const moe::SpeculativeConfig& sp = st.scenario.runtime.speculative;
            const int len = sp.acceptance.curve >= 0 && sp.acceptance.curve < n ? curves[sp.acceptance.curve].n : 1;
            for (int k = 0; k < len; ++k) list.push_back(std::round(sp.rate(k) * 1e4) / 1e4);
            edit_field(st, path, list);
        }
        record_last_item(st, std::string(path) + "=per position");
        int n = 0;
        const moe::AcceptanceCurve* curves = moe::acceptance_curves(&n);
        for (int k = 0; k < n; ++k) {
            const bool selected = named && v.get<std::string>() == curves[k].name;
            if (ImGui::Selectable(curves[k].name, selected) && !selected) edit_field(st, path, curves[k].name);
            record_last_item(st, std::string(path) + "=" + curves[k].name);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", curves[k].source);
        }
        ImGui::EndCombo();
    }
    record_rect(st, path, fmin, fmax);
    help_for_field(path);
    if (named) return;
    // the rates as text, applied when the field is left
    const std::string key = std::string(path) + ".rates";
    std::string& buf = st.edit_text[key];
    if (st.active_edit != key) buf = rates_text(v);
    buf.resize(256, '\0');
    form_label("Rates");
    ImGui::InputTextWithHint("##runtime.speculative.acceptance.rates", "0.9, 0.8, 0.7", buf.data(), buf.size(),
                             ImGuiInputTextFlags_AutoSelectAll);
    if (ImGui::IsItemActive()) st.active_edit = key;
    if (ImGui::IsItemDeactivated() && st.active_edit == key) st.active_edit.clear();
    record_last_item(st, key);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Conditional acceptance of draft positions 1, 2, ...; the last repeats.");
    if (ImGui::IsItemDeactivatedAfterEdit()) {
        const nlohmann::json list = parse_rates(buf.c_str());
        if (!list.is_null()) edit_field(st, path, list);
    }
}

}  // namespace

void speculative_controls(AppState& st) {
    field_choice_combo(st, "runtime.speculative.method", "Speculative");
    field_slider_int(st, "runtime.speculative.draft_tokens", "Draft tokens", 0, 8, false);
    const moe::SpeculativeConfig& sp = st.scenario.runtime.speculative;
    if (sp.draft_tokens <= 0) return;
    acceptance_control(st);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.3f tokens per verify step of %d", sp.tokens_per_step(), 1 + sp.draft_tokens);
    form_label("Accepted");
    ImGui::TextDisabled("%s", buf);
    record_last_item(st, "derived.speculative_tokens");
}

// workload.trace: a trace file dropped on the page (or opened) is the workload; here its summary and a way out
void trace_controls(AppState& st) {
    const moe::ServingConfig& sv = st.scenario.serving;
    form_label("Trace");
    if (!sv.trace.on()) {
        ImGui::TextDisabled("none: drop a .csv or .jsonl trace on the page");
        record_last_item(st, "derived.trace");
        help_marker("A request trace, as moe-roofline's workload.trace: CSV lines isl,osl,prefix_id,prefix_len (a header row "
                    "naming them, or these four in order) or JSONL objects {\"isl\", \"osl\", \"prefix_id\", \"prefix_len\"}. "
                    "The clients send its requests in order; requests with the same prefix_id share their first prefix_len "
                    "tokens' KV (the prefix cache and its tiers). Input, output and sessions are then unused.");
        return;
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s requests, mean %s in / %s out", fmt::number(double(sv.trace.size())).c_str(),
                  fmt::number(sv.mean_isl()).c_str(), fmt::number(sv.mean_osl()).c_str());
    ImGui::TextUnformatted(buf);
    record_last_item(st, "derived.trace");
    ImGui::SameLine();
    if (ImGui::SmallButton("Clear trace")) edit_field(st, "workload.trace", nlohmann::json::array());
    record_last_item(st, "button.clear_trace");
}

void sessions_controls(AppState& st) {
    ImGui::Spacing();
    trace_controls(st);
    if (st.scenario.serving.trace.on()) return;  // a trace says its own lengths and prefixes
    field_input_number(st, "workload.sessions.turns", "Session turns", "off");
    const moe::Scenario& s = st.scenario;
    if (!s.serving.sessions.on()) return;
    field_input_number(st, "workload.sessions.system_prompt_len", "System prompt");
    field_input_number(st, "workload.sessions.user_len", "User tokens / turn");
    field_input_number(st, "workload.sessions.think_time_s", "Think time (s)");
    field_input_number(st, "runtime.kv_offload.host_GB", "Host KV (GB/GPU)", "none");
    field_input_number(st, "runtime.kv_offload.ssd_GB", "SSD KV (GB/GPU)", "none");
    if (s.runtime.kv_offload.host_GB > 0)
        field_input_number(st, "runtime.kv_offload.host_bandwidth_GBps", "Host read GB/s", "hardware");
    if (s.runtime.kv_offload.ssd_GB > 0)
        field_input_number(st, "runtime.kv_offload.ssd_bandwidth_GBps", "SSD read GB/s", "hardware");
    char buf[256];
    form_label("Mean turn");
    std::snprintf(buf, sizeof buf, "prompt %s tokens (system + history + user), answer %s", fmt::number(s.serving.mean_isl()).c_str(),
                  fmt::number(s.serving.mean_osl()).c_str());
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(buf);
    const moe::ServingResult& r = st.estimate.serving;
    if (st.estimate.ok && r.computed) {
        // (disaggregated: the prefill pool's caches, each rank its own, requests routed to the rank holding their key)
        std::snprintf(buf, sizeof buf, "prompt tokens found: HBM %.1f%%, host %.1f%%, SSD %.1f%%; KV moved %s per output token",
                      100 * r.prefix_hit_rate_gpu, 100 * r.prefix_hit_rate_host, 100 * r.prefix_hit_rate_ssd,
                      fmt::bytes(r.kv_bytes_moved_per_token).c_str());
        ImGui::TextUnformatted(buf);
        record_last_item(st, "derived.kv_tiers");
    }
    ImGui::PopTextWrapPos();
}

}  // namespace web
