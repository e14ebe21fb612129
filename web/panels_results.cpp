// panels_results.cpp — what the model says: headline numbers, problems, and every output column.
#include <imgui.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "panels.h"
#include "widgets.h"

namespace web {

// A column's value for people: units scaled (bytes -> GB, params -> B), about 4 significant digits, no exponent.
struct Shown {
    std::string number;
    std::string unit;
};

static std::string human_number(double v) {
    char buf[64];
    const double a = std::fabs(v);
    if (a >= 1e4 || v == std::floor(v)) std::snprintf(buf, sizeof buf, "%.0f", v);
    else if (a >= 100) std::snprintf(buf, sizeof buf, "%.1f", v);
    else std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

static Shown display_value(const moe::Column& c, const moe::Estimate& e) {
    if (c.type == moe::ColumnType::text) return {c.text ? c.text(e) : std::string(), ""};
    const double v = c.number ? c.number(e) : 0.0;
    if (c.type == moe::ColumnType::boolean) return {v != 0 ? "yes" : "no", ""};
    const std::string unit = c.unit ? c.unit : "";
    if (unit == "bytes") return {human_number(v / 1e9), "GB"};
    if (unit == "params") return {human_number(v / 1e9), "B params"};
    return {human_number(v), unit};
}

static void headline(const AppState& st, const char* column, const char* title) {
    const moe::Column* c = moe::find_column(column);
    if (!c) return;
    ImGui::TableNextColumn();
    const Shown v = display_value(*c, st.estimate);
    if (v.unit.empty()) ImGui::TextDisabled("%s", title);
    else ImGui::TextDisabled("%s (%s)", title, v.unit.c_str());
    ImGui::SetWindowFontScale(1.5f);
    ImGui::TextUnformatted(v.number.c_str());
    ImGui::SetWindowFontScale(1.0f);
    if (ImGui::IsItemHovered() && c->help) ImGui::SetTooltip("%s\n(%s)", c->help, c->name);
}

void draw_results_panel(AppState& st) {
    const moe::Estimate& e = st.estimate;
    const moe::Scenario& s = st.scenario;
    ImGui::Text("%s on %d x %s", s.model_ref.c_str(), s.world(),
                s.gpu.name.empty() ? s.hardware_ref.c_str() : s.gpu.name.c_str());

    if (!e.ok) {
        ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "This scenario cannot be evaluated:");
        for (const moe::Issue& i : e.errors) ImGui::BulletText("%s", i.text().c_str());
    }
    for (const std::string& w : e.warnings) ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "%s", w.c_str());

    if (ImGui::BeginTable("headline", 4, ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchSame)) {
        headline(st, "prefill.ttft_ms", "TTFT");
        headline(st, "decode.tpot_ms", "TPOT");
        headline(st, "decode.tokens_per_s_per_gpu", "decode per GPU");
        headline(st, "decode.tokens_per_s_per_user", "per user");
        headline(st, "prefill.tokens_per_s_per_gpu", "prefill per GPU");
        headline(st, "memory.total_bytes", "memory per GPU");
        headline(st, "memory.capacity_bytes", "HBM per GPU");
        headline(st, "memory.max_batch", "max batch");
        ImGui::EndTable();
    }

    section_header("All outputs");
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_SizingStretchProp;
    if (ImGui::BeginTable("columns", 3, flags)) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn("column", ImGuiTableColumnFlags_WidthStretch, 2.0f);
        ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 1.5f);
        ImGui::TableSetupColumn("exact", ImGuiTableColumnFlags_WidthStretch, 1.5f);
        ImGui::TableHeadersRow();
        for (const moe::Column& c : moe::output_columns()) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(c.name);
            if (ImGui::IsItemHovered() && c.help) ImGui::SetTooltip("%s", c.help);
            ImGui::TableNextColumn();
            const Shown shown = display_value(c, e);
            ImGui::Text("%s %s", shown.number.c_str(), shown.unit.c_str());
            ImGui::TableNextColumn();
            const std::string exact = moe::format_value(c, e);
            ImGui::TextDisabled("%s", exact.c_str());
        }
        ImGui::EndTable();
    }
}

}  // namespace web
