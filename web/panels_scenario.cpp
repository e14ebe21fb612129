// panels_scenario.cpp — the scenario editor: presets, parallel layout, workload and runtime choices.
#include <imgui.h>

#include "panels.h"
#include "platform.h"
#include "widgets.h"

namespace web {

void draw_notice(AppState& st) {
    if (st.notice.empty()) return;
    // Plain wrapped text (never markup): the details may quote the hostile link's own content.
    const ImVec4 colour(1.0f, 0.62f, 0.45f, 1.0f);
    ImGui::PushStyleColor(ImGuiCol_Text, colour);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(st.notice.c_str());
    for (size_t i = 0; i < st.notice_details.size() && i < 6; ++i) {
        ImGui::Bullet();
        ImGui::TextUnformatted(st.notice_details[i].c_str());
    }
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    if (ImGui::SmallButton("Dismiss")) {
        st.notice.clear();
        st.notice_details.clear();
        st.publish_pending = true;
    }
    ImGui::Separator();
}

void draw_scenario_panel(AppState& st) {
    const moe::Catalog& cat = *st.catalog;
    ImGui::PushItemWidth(-ImGui::GetFontSize() * 11.0f);  // room for the labels and "(?)" on the right

    section_header("Model and hardware");
    field_preset_combo(st, "model", "model", cat.models());
    field_preset_combo(st, "hardware", "hardware", cat.hardware());

    section_header("Parallel layout");
    field_pow2_combo(st, "parallel.tp", "tp (attention)", 64);
    field_pow2_combo(st, "parallel.dp", "dp (attention)", 256);
    field_pow2_combo(st, "parallel.ep", "ep (experts)", 256);
    ImGui::Text("world %d GPUs, experts TP %d", st.scenario.world(), st.scenario.moe_tp());

    section_header("Workload");
    field_choice_combo(st, "workload.phase", "phase");
    field_slider_int(st, "workload.batch", "batch / DP rank", 1, 4096, true);
    field_slider_int(st, "workload.prefill_tokens", "prefill chunk", 128, 65536, true);
    field_slider_int(st, "workload.context_len", "decode context", 128, 1048576, true, st.scenario.context_len());

    section_header("Runtime");
    field_choice_combo(st, "runtime.a2a_backend", "all-to-all");
    field_checkbox(st, "runtime.two_batch_overlap", "two-batch overlap");

    ImGui::PopItemWidth();
    for (const moe::Issue& e : st.edit_errors) ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", e.text().c_str());

    ImGui::Spacing();
    if (ImGui::Button("Copy link")) copy_to_clipboard(moe::scenario_url(st.scenario, page_url_without_fragment()));
    ImGui::SameLine();
    if (ImGui::Button("Download scenario")) {
        download("scenario.json", "application/json", moe::scenario_to_json(st.scenario, false).dump(2) + "\n");
    }
}

}  // namespace web
