// panels_toolbar.cpp — the bar across the top (title, example scenarios, sharing and comparison buttons) and the
// notice under it (a link or file that could not be read).
#include <imgui.h>

#include <cctype>
#include <string>

#include "panels.h"
#include "platform.h"
#include "theme.h"
#include "widgets.h"

namespace web {

namespace {

void toast(AppState& st, const std::string& text) {
    st.toast = text;
    st.toast_until = ImGui::GetTime() + 3.0;
}

bool tool_button(AppState& st, const char* label, const char* name, const char* help) {
    // a narrow window wraps the buttons onto another line instead of cutting the last ones at its edge
    if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(label).x + 2 * ImGui::GetStyle().FramePadding.x) ImGui::NewLine();
    const bool pressed = ImGui::Button(label);
    if (pressed) st.publish_pending = true;  // window.__moe.last_action follows every button
    record_last_item(st, std::string("button.") + name);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", help);
    ImGui::SameLine();
    return pressed;
}

std::string scenario_filename(const moe::Scenario& s) {
    std::string name = s.model_inline.is_object() ? "custom" : s.model_ref;
    name += "-" + (s.hardware_inline.is_object() ? std::string("custom-gpu") : s.hardware_ref);
    for (char& c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) c = '-';
    return name;
}

}  // namespace

void draw_toolbar(AppState& st) {
    ImGui::PushFont(theme::fonts().bold);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("MoE Roofline");
    ImGui::PopFont();
    if (ImGui::GetContentRegionAvail().x > theme::px(1180)) {  // the subtitle only where there is room for it
        ImGui::SameLine();
        ImGui::AlignTextToFramePadding();
        ImGui::TextDisabled("time and memory of MoE inference");
    }
    ImGui::SameLine(0, theme::px(20));

    // example scenarios
    ImGui::SetNextItemWidth(theme::px(210));
    const bool open = ImGui::BeginCombo("##examples", "Example scenarios\u2026", ImGuiComboFlags_HeightLarge);
    record_rect(st, "examples", ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
    if (open) {
        for (const moe::CatalogEntry& e : st.catalog->scenarios()) {
            if (ImGui::Selectable(e.id.c_str())) {
                st.publish_pending = true;
                moe::ParseResult r = moe::scenario_from_json(e.json, *st.catalog);
                if (r.ok()) {
                    set_scenario(st, std::move(r.scenario));
                    st.last_action = "example:" + e.id;
                    toast(st, "Loaded " + e.id);
                }
            }
            record_last_item(st, "examples=" + e.id);
            if (ImGui::IsItemHovered() && !e.description.empty()) {
                ImGui::BeginTooltip();
                ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
                ImGui::TextUnformatted(e.description.c_str());
                ImGui::PopTextWrapPos();
                ImGui::EndTooltip();
            }
        }
        ImGui::EndCombo();
    }
    ImGui::SameLine(0, theme::px(14));

    if (tool_button(st, "Copy link", "copy_link", "Copy a link that opens exactly this page: scenario, chart choices and pinned A.")) {
        copy_to_clipboard(page_url_without_fragment() + "#" + build_fragment(st));
        st.last_action = "copy_link";
        toast(st, "Link copied");
    }
    if (tool_button(st, "Save JSON", "save_json", "Download the scenario as JSON (moe-roofline eval FILE gives the same numbers).")) {
        download(scenario_filename(st.scenario) + ".json", "application/json",
                 moe::scenario_to_json(st.scenario, true).dump(2) + "\n");
        st.last_action = "save_json";
    }
    if (tool_button(st, "Load JSON", "load_json", "Open a scenario JSON or a HuggingFace config.json (or drop one on the page).")) {
        open_file_picker();
        st.last_action = "load_json";
    }
    // issue 28: engine constants fitted to the user's own runs (moe-roofline calibrate -o FILE); Shipped goes back
    if (tool_button(st, "Load calibration", "load_calibration",
                    "Open an engines file from moe-roofline calibrate RUNS.csv -o FILE: every serving number, and its p10 .. p90 "
                    "band, then uses its engine constants (as --engines FILE). Dropping the file on the page works too.")) {
        open_file_picker();
        st.last_action = "load_calibration";
    }
    if (!st.calibration.empty() &&
        tool_button(st, "Shipped constants", "shipped_engines", ("Using " + st.calibration + ": back to the engine constants that ship (presets/engines.json).").c_str())) {
        moe::use_engines(nullptr);
        st.calibration.clear();
        engines_changed(st);
        st.last_action = "shipped_engines";
        toast(st, "Shipped engine constants");
    }
    if (tool_button(st, "Sweep CSV", "csv", "Download the sweep chart's points as CSV, with the same columns as moe-roofline sweep.")) {
        download(scenario_filename(st.scenario) + "-sweep-" + sweep_axis_info(chart_sweep_axis(st)).key + ".csv", "text/csv",
                 current_sweep_csv(st));
        st.last_action = "csv";
    }
    if (tool_button(st, "Reset", "reset", "Back to the default scenario and charts.")) {
        load_fragment(st, "");
        st.fragment_dirty = true;
        st.last_action = "reset";
        toast(st, "Reset to the defaults");
    }
    ImGui::SameLine(0, theme::px(14));
    if (!st.a.active) {
        if (tool_button(st, "Pin as A", "pin", "Keep this scenario as A, then edit: the charts and the Compare tab show A against the current one.")) {
            pin_current(st);
            st.last_action = "pin";
            st.requested_tab = 1;
        }
    } else {
        ImGui::PushStyleColor(ImGuiCol_Button, theme::vec(theme::with_alpha(theme::kPinned, 0.35f)));
        if (tool_button(st, "Unpin A", "pin", "Stop comparing with the pinned scenario A.")) {
            unpin(st);
            st.last_action = "unpin";
        }
        ImGui::PopStyleColor();
    }
    if (!st.toast.empty() && ImGui::GetTime() < st.toast_until) {
        ImGui::AlignTextToFramePadding();
        ImGui::TextColored(theme::vec(theme::kGood), "\u2713 %s", st.toast.c_str());
    } else {
        st.toast.clear();
        ImGui::NewLine();
    }
}

void draw_notice(AppState& st) {
    if (st.notice.empty()) return;
    // Plain wrapped text (never markup): the details may quote the hostile link's own content.
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    dl->ChannelsSplit(2);
    dl->ChannelsSetCurrent(1);
    ImGui::Indent(theme::px(8));
    ImGui::Dummy(ImVec2(0, theme::px(2)));
    ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::rgba(255, 196, 150)));
    ImGui::PushTextWrapPos(ImGui::GetContentRegionMax().x - theme::px(90));
    ImGui::TextUnformatted(("\u26A0 " + st.notice).c_str());
    for (std::size_t i = 0; i < st.notice_details.size() && i < 4; ++i) {
        ImGui::Bullet();
        ImGui::TextUnformatted(st.notice_details[i].c_str());
    }
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    ImGui::Dummy(ImVec2(0, theme::px(2)));
    ImGui::Unindent(theme::px(8));
    const ImVec2 p1(ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x, ImGui::GetCursorScreenPos().y);
    const ImVec2 after = ImGui::GetCursorScreenPos();
    ImGui::SetCursorScreenPos(ImVec2(p1.x - theme::px(80), p0.y + theme::px(4)));
    if (ImGui::SmallButton("Dismiss")) {
        st.notice.clear();
        st.notice_details.clear();
        st.publish_pending = true;
    }
    record_last_item(st, "button.dismiss");
    ImGui::SetCursorScreenPos(after);
    dl->ChannelsSetCurrent(0);
    dl->AddRectFilled(p0, p1, theme::rgba(70, 40, 30), theme::px(6));
    dl->AddRect(p0, p1, theme::with_alpha(theme::kWarn, 0.6f), theme::px(6));
    dl->ChannelsMerge();
    ImGui::Dummy(ImVec2(0, theme::px(2)));
}

}  // namespace web
