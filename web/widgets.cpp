// widgets.cpp — scenario-bound ImGui widgets (see widgets.h).
#include "widgets.h"

#include <imgui.h>

#include <cstdio>
#include <string>

namespace web {

RectRecorder::RectRecorder(AppState& st, const char* name) : st_(st), name_(name) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    x_ = p.x;
    y_ = p.y;
    w_ = ImGui::CalcItemWidth();
}

void RectRecorder::commit(float frame_width) {
    // GetItemRectMin/Max would include the label; the frame starts at the cursor, is CalcItemWidth() wide (a
    // checkbox: one frame height) and one frame high.
    const double s = 1.0 / st_.dpr;
    const float w = frame_width > 0 ? frame_width : w_;
    st_.ui[name_] = UiRect{x_ * s, y_ * s, w * s, ImGui::GetFrameHeight() * s};
}

void section_header(const char* text) {
    ImGui::Spacing();
    ImGui::TextDisabled("%s", text);
    ImGui::Separator();
}

void help_marker(const char* text) {
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
        ImGui::TextUnformatted(text);
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
}

void help_for_field(const char* path) {
    const moe::FieldDesc* f = moe::find_field(path);
    if (f && f->help && *f->help) help_marker(f->help);
}

static std::string current_text(const AppState& st, const char* path) {
    nlohmann::json v = moe::get_path(st.scenario, path);
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object()) return "(custom)";
    return v.dump();
}

bool field_preset_combo(AppState& st, const char* path, const char* label,
                        const std::vector<moe::CatalogEntry>& entries) {
    bool changed = false;
    const std::string cur = current_text(st, path);
    RectRecorder rect(st, path);
    if (ImGui::BeginCombo(label, cur.c_str())) {
        for (const moe::CatalogEntry& e : entries) {
            bool selected = e.id == cur;
            if (ImGui::Selectable(e.id.c_str(), selected) && !selected) changed |= edit_field(st, path, e.id);
            if (ImGui::IsItemHovered() && !e.description.empty()) ImGui::SetTooltip("%s", e.description.c_str());
            if (selected) ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
    rect.commit();
    help_for_field(path);
    return changed;
}

bool field_choice_combo(AppState& st, const char* path, const char* label) {
    const moe::FieldDesc* f = moe::find_field(path);
    if (!f || !f->choices) return false;
    bool changed = false;
    const std::string cur = current_text(st, path);
    RectRecorder rect(st, path);
    if (ImGui::BeginCombo(label, cur.c_str())) {
        for (const char* const* c = f->choices; *c; ++c) {
            bool selected = cur == *c;
            if (ImGui::Selectable(*c, selected) && !selected) changed |= edit_field(st, path, *c);
            if (selected) ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
    rect.commit();
    help_for_field(path);
    return changed;
}

bool field_pow2_combo(AppState& st, const char* path, const char* label, int max_value) {
    bool changed = false;
    nlohmann::json v = moe::get_path(st.scenario, path);
    const int cur = v.is_number() ? v.get<int>() : 0;
    char preview[32];
    std::snprintf(preview, sizeof preview, "%d", cur);
    RectRecorder rect(st, path);
    if (ImGui::BeginCombo(label, preview)) {
        for (int x = 1; x <= max_value; x *= 2) {
            char item[32];
            std::snprintf(item, sizeof item, "%d", x);
            bool selected = x == cur;
            if (ImGui::Selectable(item, selected) && !selected) changed |= edit_field(st, path, x);
            if (selected) ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
    rect.commit();
    help_for_field(path);
    return changed;
}

bool field_slider_int(AppState& st, const char* path, const char* label, int lo, int hi, bool log_scale,
                      int shown_value_when_auto) {
    nlohmann::json v = moe::get_path(st.scenario, path);
    int value = v.is_number() ? v.get<int>() : lo;
    const bool is_auto = value == 0 && shown_value_when_auto > 0;
    if (is_auto) value = shown_value_when_auto;
    RectRecorder rect(st, path);
    ImGuiSliderFlags flags = ImGuiSliderFlags_AlwaysClamp | (log_scale ? ImGuiSliderFlags_Logarithmic : 0);
    bool changed = ImGui::SliderInt(label, &value, lo, hi, is_auto ? "%d (auto)" : "%d", flags);
    rect.commit();
    help_for_field(path);
    return changed && edit_field(st, path, value);
}

bool field_checkbox(AppState& st, const char* path, const char* label) {
    nlohmann::json v = moe::get_path(st.scenario, path);
    bool value = v.is_boolean() && v.get<bool>();
    RectRecorder rect(st, path);
    bool changed = ImGui::Checkbox(label, &value);
    rect.commit(ImGui::GetFrameHeight());
    help_for_field(path);
    return changed && edit_field(st, path, value);
}

}  // namespace web
