// widgets.cpp — scenario-bound ImGui widgets (see widgets.h).
#include "widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "format.h"
#include "theme.h"

namespace web {

namespace {

std::string current_text(const AppState& st, const char* path) {
    nlohmann::json v = moe::get_path(st.scenario, path);
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object()) return "(custom)";
    return v.dump();
}

float help_width() { return ImGui::CalcTextSize("(?)").x + ImGui::GetStyle().ItemSpacing.x; }

// Combo item rectangles are named "path=value" so tests can click an entry of an open combo.
void record_item(AppState& st, const char* path, const std::string& value) {
    record_last_item(st, std::string(path) + "=" + value);
}

// A typed number: the text is kept in st.edit_text while the field has focus; returns true with `out` when the
// user leaves the field (or presses Enter) after editing. An empty text gives NaN (the field's "auto").
bool typed_number(AppState& st, const std::string& key, double current, bool integer, const char* hint,
                  double& out) {
    std::string& buf = st.edit_text[key];
    if (st.active_edit != key) buf = number_text(current, integer);
    buf.resize(64, '\0');
    const std::string id = "##" + key;
    ImGui::InputTextWithHint(id.c_str(), hint ? hint : "", buf.data(), buf.size(),
                             ImGuiInputTextFlags_CharsScientific | ImGuiInputTextFlags_AutoSelectAll);
    if (ImGui::IsItemActive()) st.active_edit = key;
    if (ImGui::IsItemDeactivated() && st.active_edit == key) st.active_edit.clear();
    if (!ImGui::IsItemDeactivatedAfterEdit()) return false;
    const std::string text(buf.c_str());
    if (text.find_first_not_of(" \t") == std::string::npos) {
        out = std::nan("");
        return true;
    }
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !std::isfinite(v)) return false;
    out = v;
    return true;
}

}  // namespace

std::string number_text(double v, bool integer) {
    char tmp[64] = "";
    if (std::isfinite(v)) {
        if (integer) std::snprintf(tmp, sizeof tmp, "%.0f", v);
        else std::snprintf(tmp, sizeof tmp, "%.6g", v);
    }
    return tmp;
}

void record_rect(AppState& st, const std::string& name, ImVec2 min, ImVec2 max) {
    const double s = 1.0 / st.dpr;
    st.ui[name] = UiRect{min.x * s, min.y * s, (max.x - min.x) * s, (max.y - min.y) * s};
}

void record_last_item(AppState& st, const std::string& name) {
    record_rect(st, name, ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

void section_title(const char* text) {
    ImGui::PushFont(theme::fonts().bold);
    ImGui::TextUnformatted(text);
    ImGui::PopFont();
}

void help_marker(const char* text) {
    // Always at the right edge of the form, so every "(?)" lines up.
    ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - ImGui::CalcTextSize("(?)").x);
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 26.0f);
        ImGui::TextUnformatted(text);
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
}

void help_for_field(const char* path) {
    const moe::FieldDesc* f = moe::find_field(path);
    if (f && f->help && *f->help) help_marker(f->help);
}

float form_label_width() { return theme::px(122); }

void form_label(const char* label, bool highlight) {
    const float x0 = ImGui::GetCursorPosX();
    ImGui::AlignTextToFramePadding();
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(highlight ? theme::kAccent : theme::rgba(196, 201, 212)));
    ImGui::TextUnformatted(label);
    ImGui::PopStyleColor();
    ImGui::SameLine(x0 + form_label_width());
    ImGui::SetNextItemWidth(std::max(theme::px(60), ImGui::GetContentRegionAvail().x - help_width()));
}

bool field_preset_combo(AppState& st, const char* path, const char* label,
                        const std::vector<moe::CatalogEntry>& entries) {
    bool changed = false;
    const std::string cur = current_text(st, path);
    form_label(label);
    const std::string id = std::string("##") + path;
    const bool open = ImGui::BeginCombo(id.c_str(), cur.c_str(), ImGuiComboFlags_HeightLarge);
    const ImVec2 fmin = ImGui::GetItemRectMin(), fmax = ImGui::GetItemRectMax();
    if (open) {
        for (const moe::CatalogEntry& e : entries) {
            const bool selected = e.id == cur;
            if (ImGui::Selectable(e.id.c_str(), selected) && !selected) changed |= edit_field(st, path, e.id);
            record_item(st, path, e.id);
            if (ImGui::IsItemHovered() && !e.description.empty()) {
                ImGui::BeginTooltip();
                ImGui::PushTextWrapPos(ImGui::GetFontSize() * 26.0f);
                ImGui::TextUnformatted(e.description.c_str());
                ImGui::PopTextWrapPos();
                ImGui::EndTooltip();
            }
            if (selected) ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
    record_rect(st, path, fmin, fmax);
    help_for_field(path);
    return changed;
}

bool field_choice_combo(AppState& st, const char* path, const char* label, const char* resolved) {
    const moe::FieldDesc* f = moe::find_field(path);
    if (!f || !f->choices) return false;
    bool changed = false;
    const std::string cur = current_text(st, path);
    std::string preview = cur;
    if (resolved && *resolved && cur == "auto") preview = std::string("auto \u2192 ") + resolved;
    form_label(label);
    const std::string id = std::string("##") + path;
    const bool open = ImGui::BeginCombo(id.c_str(), preview.c_str());
    const ImVec2 fmin = ImGui::GetItemRectMin(), fmax = ImGui::GetItemRectMax();
    if (open) {
        for (const char* const* c = f->choices; *c; ++c) {
            const bool selected = cur == *c;
            if (ImGui::Selectable(*c, selected) && !selected) changed |= edit_field(st, path, *c);
            record_item(st, path, *c);
            if (selected) ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
    record_rect(st, path, fmin, fmax);
    help_for_field(path);
    return changed;
}

bool field_dtype_combo(AppState& st, const char* path, const char* label, const char* resolved) {
    static const char* const kWeights[] = {"auto", "bf16", "fp16", "fp8", "mxfp4", "nvfp4", "int4", nullptr};
    static const char* const kKv[] = {"auto", "bf16", "fp16", "fp8", nullptr};
    static const char* const kWire[] = {"auto", "bf16", "fp8", nullptr};
    const std::string p = path;
    const char* const* choices = p == "precision.kv_cache" ? kKv
                                 : (p == "precision.dispatch" || p == "precision.combine") ? kWire
                                                                                            : kWeights;
    bool changed = false;
    const std::string cur = current_text(st, path);
    std::string preview = cur;
    if (resolved && *resolved && cur == "auto") preview = std::string("auto \u2192 ") + resolved;
    form_label(label);
    const std::string id = std::string("##") + path;
    const bool open = ImGui::BeginCombo(id.c_str(), preview.c_str());
    const ImVec2 fmin = ImGui::GetItemRectMin(), fmax = ImGui::GetItemRectMax();
    if (open) {
        for (const char* const* c = choices; *c; ++c) {
            const bool selected = cur == *c;
            if (ImGui::Selectable(*c, selected) && !selected) changed |= edit_field(st, path, *c);
            record_item(st, path, *c);
        }
        ImGui::EndCombo();
    }
    record_rect(st, path, fmin, fmax);
    help_for_field(path);
    return changed;
}

bool field_segmented(AppState& st, const char* path, const char* label) {
    const moe::FieldDesc* f = moe::find_field(path);
    if (!f || !f->choices) return false;
    int n = 0;
    while (f->choices[n]) ++n;
    const std::string cur = current_text(st, path);
    form_label(label);
    const float w = ImGui::CalcItemWidth();
    const float gap = theme::px(2);
    const float bw = (w - gap * float(n - 1)) / float(n);
    bool changed = false;
    const ImVec2 start = ImGui::GetCursorScreenPos();
    ImGui::PushID(path);
    for (int i = 0; i < n; ++i) {
        if (i) ImGui::SameLine(0, gap);
        const bool selected = cur == f->choices[i];
        if (selected) {
            ImGui::PushStyleColor(ImGuiCol_Button, theme::vec(theme::with_alpha(theme::kAccent, 0.55f)));
            ImGui::PushStyleColor(ImGuiCol_ButtonHovered, theme::vec(theme::with_alpha(theme::kAccent, 0.7f)));
        }
        if (ImGui::Button(f->choices[i], ImVec2(bw, 0)) && !selected) changed |= edit_field(st, path, f->choices[i]);
        if (selected) ImGui::PopStyleColor(2);
        record_item(st, path, f->choices[i]);
    }
    ImGui::PopID();
    record_rect(st, path, start, ImVec2(start.x + w, start.y + ImGui::GetFrameHeight()));
    help_for_field(path);
    return changed;
}

namespace {
bool int_stepper(AppState& st, const char* path, const char* label, bool doubling) {
    nlohmann::json v = moe::get_path(st.scenario, path);
    const int cur = v.is_number() ? v.get<int>() : 1;
    form_label(label);
    const float w = ImGui::CalcItemWidth();
    const float bw = ImGui::GetFrameHeight();
    const float gap = theme::px(2);
    bool changed = false;
    const ImVec2 start = ImGui::GetCursorScreenPos();
    ImGui::PushID(path);
    if (ImGui::Button("\u2212", ImVec2(bw, 0)) && cur > 1) changed |= edit_field(st, path, doubling ? cur / 2 : cur - 1);
    record_last_item(st, std::string(path) + ".minus");
    ImGui::SameLine(0, gap);
    ImGui::SetNextItemWidth(w - 2 * (bw + gap));
    double typed = 0;
    if (typed_number(st, path, cur, true, nullptr, typed) && std::isfinite(typed)) {
        changed |= edit_field(st, path, static_cast<long long>(std::llround(typed)));
    }
    record_last_item(st, std::string(path) + ".value");
    ImGui::SameLine(0, gap);
    if (ImGui::Button("+", ImVec2(bw, 0))) changed |= edit_field(st, path, doubling ? cur * 2 : cur + 1);
    record_last_item(st, std::string(path) + ".plus");
    ImGui::PopID();
    record_rect(st, path, start, ImVec2(start.x + w, start.y + ImGui::GetFrameHeight()));
    help_for_field(path);
    return changed;
}

}  // namespace

bool field_pow2_stepper(AppState& st, const char* path, const char* label) { return int_stepper(st, path, label, true); }
bool field_int_stepper(AppState& st, const char* path, const char* label) { return int_stepper(st, path, label, false); }

bool field_slider_int(AppState& st, const char* path, const char* label, int lo, int hi, bool log_scale,
                      int shown_value_when_auto) {
    nlohmann::json v = moe::get_path(st.scenario, path);
    int value = v.is_number() ? v.get<int>() : lo;
    const bool is_auto = value == 0 && shown_value_when_auto > 0;
    if (is_auto) value = shown_value_when_auto;
    form_label(label);
    const ImGuiSliderFlags flags = ImGuiSliderFlags_AlwaysClamp | (log_scale ? ImGuiSliderFlags_Logarithmic : 0);
    const std::string id = std::string("##") + path;
    const bool changed = ImGui::SliderInt(id.c_str(), &value, lo, hi, is_auto ? "%d (auto)" : "%d", flags);
    record_last_item(st, path);
    help_for_field(path);
    return changed && edit_field(st, path, value);
}

bool field_slider_double(AppState& st, const char* path, const char* label, double lo, double hi, const char* format) {
    nlohmann::json v = moe::get_path(st.scenario, path);
    float value = v.is_number() ? v.get<float>() : static_cast<float>(lo);
    form_label(label);
    const std::string id = std::string("##") + path;
    const bool changed = ImGui::SliderFloat(id.c_str(), &value, static_cast<float>(lo), static_cast<float>(hi), format,
                                            ImGuiSliderFlags_AlwaysClamp);
    record_last_item(st, path);
    help_for_field(path);
    if (!changed) return false;
    // Round to the shown precision (2 decimals) so the URL stays short and the value is what the label says.
    return edit_field(st, path, std::round(double(value) * 100) / 100);
}

bool field_input_number(AppState& st, const char* path, const char* label, const char* auto_text) {
    const moe::FieldDesc* f = moe::find_field(path);
    nlohmann::json v = moe::get_path(st.scenario, path);
    double cur = v.is_number() ? v.get<double>() : 0;
    const bool auto_value = auto_text && (cur < 0 || (cur == 0 && f && f->min == 0 && f->type == moe::FieldType::integer));
    if (auto_value) cur = std::nan("");
    form_label(label);
    double typed = 0;
    bool changed = false;
    if (typed_number(st, path, cur, f && f->type == moe::FieldType::integer, auto_text, typed)) {
        if (!std::isfinite(typed)) {
            // cleared: back to "auto" (-1 for calibrated defaults, 0 for zero-auto fields)
            if (auto_text && f) changed = edit_field(st, path, f->min < 0 ? -1 : 0);
        } else if (f && f->type == moe::FieldType::integer) {
            changed = edit_field(st, path, static_cast<long long>(std::llround(typed)));
        } else {
            changed = edit_field(st, path, typed);
        }
    }
    record_last_item(st, path);
    help_for_field(path);
    return changed;
}

bool field_checkbox(AppState& st, const char* path, const char* label) {
    nlohmann::json v = moe::get_path(st.scenario, path);
    bool value = v.is_boolean() && v.get<bool>();
    form_label(label);
    const std::string id = std::string("##") + path;
    const bool changed = ImGui::Checkbox(id.c_str(), &value);
    record_last_item(st, path);
    help_for_field(path);
    return changed && edit_field(st, path, value);
}

bool field_lengths(AppState& st, const char* path, const char* label, const char* hint) {
    const std::string key = path;
    std::string& buf = st.edit_text[key];
    if (st.active_edit != key) {  // the scenario's list, while not being typed in
        buf.clear();
        const nlohmann::json v = moe::get_path(st.scenario, path);
        if (v.is_array())
            for (const nlohmann::json& x : v) buf += (buf.empty() ? "" : ", ") + x.dump();
    }
    buf.resize(std::max<std::size_t>(buf.size() + 1, 4096), '\0');
    form_label(label);
    const std::string id = std::string("##") + path;
    ImGui::InputTextWithHint(id.c_str(), hint, buf.data(), buf.size(), ImGuiInputTextFlags_AutoSelectAll);
    if (ImGui::IsItemActive()) st.active_edit = key;
    const bool done = ImGui::IsItemDeactivatedAfterEdit();
    if (ImGui::IsItemDeactivated() && st.active_edit == key) st.active_edit.clear();
    record_last_item(st, path);
    help_for_field(path);
    if (!done) return false;
    // "1024, 7168" (commas, spaces or tabs between) -> [1024, 7168]; the core checks the values
    nlohmann::json list = nlohmann::json::array();
    const char* p = buf.c_str();
    for (int i = 0;; ++i) {
        while (*p == ' ' || *p == ',' || *p == '\t') ++p;
        if (!*p) break;
        char* end = nullptr;
        const double v = std::strtod(p, &end);
        if (end == p || !std::isfinite(v)) {
            st.edit_errors = {{key + "[" + std::to_string(i) + "]", "'" + std::string(p).substr(0, 16) + "' is not a token count"}};
            st.edit_error_path = key;
            return false;
        }
        if (v == std::floor(v) && std::fabs(v) < 1e15) list.push_back(static_cast<long long>(v));
        else list.push_back(v);
        p = end;
    }
    return edit_field(st, path, list);
}

}  // namespace web
