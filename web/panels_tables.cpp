// panels_tables.cpp — the results' tabs that are tables: the A/B comparison (key outputs, the serving ones when
// serving is on, and what differs between the two scenarios), every operator, and every output column.
#include <imgui.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "format.h"
#include "panels.h"
#include "theme.h"
#include "widgets.h"

namespace web {

namespace {

double column_value(const moe::Estimate& e, const char* name) {
    const moe::Column* c = moe::find_column(name);
    return c && c->number ? c->number(e) : std::nan("");
}

// ---- the compare tab
struct KeyOutput {
    const char* column;
    const char* label;
    int better;  // +1 higher is better, -1 lower, 0 neutral
};
// The serving outputs first (shown when A or B serves: a row both leave empty is skipped), then the step model's.
const KeyOutput kKeyOutputs[] = {
    {"serving.ttft_ms", "TTFT under load (ms)", -1},
    {"serving.tpot_ms", "TPOT under load (ms)", -1},
    {"serving.output_tokens_per_s_per_gpu", "serving output tokens/s per GPU", +1},
    {"serving.tokens_per_s_per_user", "serving tokens/s per user", +1},
    {"serving.e2e_latency_ms", "request latency (ms)", -1},
    {"serving.requests_per_s", "requests/s", +1},
    {"serving.running_batch", "running batch per DP rank", 0},
    {"serving.usd_per_mtok_output", "$ per million output tokens", -1},
    {"serving.gpus", "GPUs of the deployment", 0},
    {"serving.fits", "deployment fits", +1},
    {"prefill.ttft_ms", "TTFT (ms)", -1},
    {"decode.tpot_ms", "TPOT (ms)", -1},
    {"decode.tokens_per_s_per_gpu", "decode tokens/s per GPU", +1},
    {"decode.tokens_per_s_per_user", "decode tokens/s per user", +1},
    {"prefill.tokens_per_s_per_gpu", "prefill tokens/s per GPU", +1},
    {"prefill.step_ms", "prefill step (ms)", -1},
    {"decode.step_ms", "decode step (ms)", -1},
    {"decode.exposed_comm_ms", "decode exposed comm (ms)", -1},
    {"prefill.exposed_comm_ms", "prefill exposed comm (ms)", -1},
    {"decode.tokens_per_s_cluster", "decode tokens/s, cluster", +1},
    {"memory.total_bytes", "memory per GPU (GB)", -1},
    {"memory.weights_bytes", "weights per GPU (GB)", 0},
    {"memory.kv_cache_bytes", "KV cache per GPU (GB)", 0},
    {"memory.max_batch", "max batch that fits", +1},
    {"memory.fits", "fits", +1},
    {"model.active_params", "active params (B)", 0},
};

std::string shown(const char* column, double v) {
    const moe::Column* c = moe::find_column(column);
    if (!std::isfinite(v)) return "\u2014";
    if (c && c->type == moe::ColumnType::boolean) return v != 0 ? "yes" : "no";
    const std::string unit = c && c->unit ? c->unit : "";
    if (unit == "bytes" || unit == "params") return fmt::number(v / 1e9, 4);
    return fmt::number(v, 4);
}

// "a.b.c": value pairs of two JSON objects that differ (flattened).
void diff_json(const nlohmann::json& a, const nlohmann::json& b, const std::string& prefix,
               std::vector<std::pair<std::string, std::string>>& out, std::vector<std::string>& av) {
    if (a.is_object() && b.is_object() && prefix != "model" && prefix != "hardware") {
        std::vector<std::string> keys;
        for (auto it = a.begin(); it != a.end(); ++it) keys.push_back(it.key());
        for (auto it = b.begin(); it != b.end(); ++it)
            if (!a.contains(it.key())) keys.push_back(it.key());
        for (const std::string& k : keys) {
            const nlohmann::json na = a.contains(k) ? a[k] : nlohmann::json();
            const nlohmann::json nb = b.contains(k) ? b[k] : nlohmann::json();
            diff_json(na, nb, prefix.empty() ? k : prefix + "." + k, out, av);
        }
        return;
    }
    if (a == b) return;
    auto text = [](const nlohmann::json& j) {
        if (j.is_null()) return std::string("default");
        if (j.is_object()) return std::string("(custom)");
        if (j.is_string()) return j.get<std::string>();
        return j.dump();
    };
    out.push_back({prefix, text(b)});
    av.push_back(text(a));
}

}  // namespace

void draw_compare_tab(AppState& st) {
    if (!st.a.active) {
        ImGui::Spacing();
        ImGui::PushTextWrapPos(ImGui::GetContentRegionAvail().x * 0.8f);
        ImGui::TextUnformatted("Pin the current scenario as A, then change anything: this tab lists what differs and "
                               "how every key output moves, the headline cards show the change against A, and the sweep "
                               "and throughput charts draw A's curves beside the current ones.");
        ImGui::PopTextWrapPos();
        ImGui::Spacing();
        if (ImGui::Button("Pin the current scenario as A")) pin_current(st);
        record_last_item(st, "button.pin_tab");
        return;
    }
    if (ImGui::Button("Swap A \u2194 current")) swap_pinned(st);
    record_last_item(st, "button.swap");
    ImGui::SameLine();
    if (ImGui::Button("Unpin A")) unpin(st);
    record_last_item(st, "button.unpin");
    ImGui::SameLine();
    ImGui::TextColored(theme::vec(theme::kPinned), "\u25CF A");
    ImGui::SameLine();
    ImGui::TextDisabled("pinned");
    ImGui::SameLine();
    ImGui::TextColored(theme::vec(theme::kAccent), "\u25CF B");
    ImGui::SameLine();
    ImGui::TextDisabled("current (the editor)");

    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float left_w = avail_w * 0.58f;
    ImGui::BeginChild("cmp_outputs", ImVec2(left_w, 0), false);
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
    if (ImGui::BeginTable("compare", 4, flags)) {
        ImGui::TableSetupColumn("output", ImGuiTableColumnFlags_WidthStretch, 2.2f);
        ImGui::TableSetupColumn("A", ImGuiTableColumnFlags_WidthStretch, 1.0f);
        ImGui::TableSetupColumn("B (current)", ImGuiTableColumnFlags_WidthStretch, 1.0f);
        ImGui::TableSetupColumn("change", ImGuiTableColumnFlags_WidthStretch, 0.8f);
        ImGui::TableHeadersRow();
        auto right_aligned = [](const std::string& text, ImU32 colour) {
            const float w = ImGui::CalcTextSize(text.c_str()).x;
            ImGui::SetCursorPosX(ImGui::GetCursorPosX() + std::max(0.0f, ImGui::GetContentRegionAvail().x - w));
            ImGui::TextColored(theme::vec(colour), "%s", text.c_str());
        };
        for (const KeyOutput& k : kKeyOutputs) {
            // serving columns: the deployments'; step columns: the steps the cards show (with serving on, the
            // serving workload's), so this table and the cards give the same numbers
            // (disaggregated: the prefill columns are a prefill worker's, as on the TTFT card); one fit verdict: the
            // deployment's row when either serves
            const std::string_view name(k.column);
            const bool dep = name.rfind("serving.", 0) == 0;
            if (name == "memory.fits" && (st.steps.on || st.a.steps.on)) continue;
            auto steps_of = [&](const StepsView& v, const moe::Estimate& own) -> const moe::Estimate& {
                if (dep || !v.on) return own;
                return v.disaggregated && name.rfind("prefill.", 0) == 0 ? v.prefill : v.estimate;
            };
            const moe::Estimate& ea = steps_of(st.a.steps, st.a.estimate);
            const moe::Estimate& eb = steps_of(st.steps, st.estimate);
            const double a = column_value(ea, k.column), b = column_value(eb, k.column);
            if (!std::isfinite(a) && !std::isfinite(b)) continue;
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(k.label);
            record_last_item(st, std::string("compare.row.") + k.column);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", k.column);
            ImGui::TableNextColumn();
            right_aligned(shown(k.column, a), theme::kText);
            ImGui::TableNextColumn();
            right_aligned(shown(k.column, b), theme::kText);
            ImGui::TableNextColumn();
            const moe::Column* c = moe::find_column(k.column);
            if (c && c->type == moe::ColumnType::boolean) {
                right_aligned(a == b ? "same" : "changed", a == b ? theme::kTextDim : (b != 0 ? theme::kGood : theme::kBad));
            } else if (std::isfinite(a) && std::isfinite(b) && a != 0) {
                const double d = b / a - 1;
                ImU32 col = theme::kTextDim;
                if (k.better != 0 && std::fabs(d) > 0.0005) col = (d > 0) == (k.better > 0) ? theme::kGood : theme::kBad;
                right_aligned(fmt::signed_percent(d), col);
            } else {
                right_aligned("\u2014", theme::kTextDim);
            }
        }
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted("GPUs");
        ImGui::TableNextColumn();
        right_aligned(std::to_string(st.a.scenario.world()), theme::kText);
        ImGui::TableNextColumn();
        right_aligned(std::to_string(st.scenario.world()), theme::kText);
        ImGui::EndTable();
    }
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("cmp_inputs", ImVec2(0, 0), false);
    section_title("What differs (A \u2192 B)");
    std::vector<std::pair<std::string, std::string>> diffs;
    std::vector<std::string> avals;
    // Full scenarios, so a field left at its default shows its value ("true -> false"), not "default".
    const nlohmann::json ja = moe::scenario_to_json(st.a.scenario, false), jb = moe::scenario_to_json(st.scenario, false);
    diff_json(ja, jb, "", diffs, avals);
    if (diffs.empty()) ImGui::TextDisabled("nothing: B is the same scenario as A");
    for (std::size_t i = 0; i < diffs.size(); ++i) {
        ImGui::TextUnformatted(diffs[i].first.c_str());
        ImGui::SameLine();
        ImGui::TextColored(theme::vec(theme::kPinned), "%s", avals[i].c_str());
        ImGui::SameLine();
        ImGui::TextDisabled("\u2192");
        ImGui::SameLine();
        ImGui::TextColored(theme::vec(theme::kAccent), "%s", diffs[i].second.c_str());
    }
    ImGui::EndChild();
}

// ---- operators tab
void draw_operators_tab(AppState& st) {
    const moe::Estimate& e = st.estimate;
    const moe::Phase ph = shown_phase(st);
    const moe::PhaseResult& pr = ph == moe::Phase::prefill ? e.prefill : e.decode;
    if (!e.ok || !pr.computed) {
        ImGui::TextDisabled("No operators: the scenario is invalid or the phase is not computed.");
        return;
    }
    ImGui::TextDisabled("%s step %s: every operator of every layer group, per occurrence (\u00d7 count per step). "
                        "Exposed = what adds to the step after overlap.",
                        moe::phase_name(ph), fmt::time_ms(pr.step_ms).c_str());
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Resizable;
    if (!ImGui::BeginTable("ops", 12, flags)) return;
    ImGui::TableSetupScrollFreeze(2, 1);
    const char* headers[] = {"group", "operator", "\u00d7", "time \u00b5s", "exposed \u00b5s", "share", "GFLOP",
                             "weights MB", "act. MB", "comm MB", "bound", "efficiency / source"};
    for (const char* h : headers) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    const double step_us = pr.step_ms * 1000;
    for (const moe::OpRecord& op : e.ops) {
        if (op.phase != ph) continue;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", size_t(op.group) < pr.groups.size() ? pr.groups[size_t(op.group)].label.c_str() : "");
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(op.name);
        auto num = [](const std::string& s) {
            const float w = ImGui::CalcTextSize(s.c_str()).x;
            ImGui::SetCursorPosX(ImGui::GetCursorPosX() + std::max(0.0f, ImGui::GetColumnWidth() - w - ImGui::GetStyle().CellPadding.x));
            ImGui::TextUnformatted(s.c_str());
        };
        ImGui::TableNextColumn();
        num(fmt::number(op.count));
        ImGui::TableNextColumn();
        num(fmt::number(op.time_us, 4));
        ImGui::TableNextColumn();
        num(fmt::number(op.exposed_us, 4));
        ImGui::TableNextColumn();
        num(step_us > 0 ? fmt::percent(op.exposed_us * op.count / step_us, 1) : "");
        ImGui::TableNextColumn();
        num(fmt::number(op.flops / 1e9, 4));
        ImGui::TableNextColumn();
        num(fmt::number(op.weight_bytes / 1e6, 4));
        ImGui::TableNextColumn();
        num(fmt::number(op.activation_bytes / 1e6, 4));
        ImGui::TableNextColumn();
        num(fmt::number(op.comm_bytes / 1e6, 4));
        ImGui::TableNextColumn();
        ImGui::TextColored(theme::vec(theme::bound_colour(op.bound)), "%s", moe::bound_name(op.bound));
        ImGui::TableNextColumn();
        ImGui::Text("%.2f", op.efficiency);
        ImGui::SameLine();
        ImGui::TextColored(theme::vec(theme::source_colour(op.source)), "%s", moe::source_name(op.source));
        if (*op.table) {
            ImGui::SameLine();
            ImGui::TextDisabled("%s", op.table);
        }
    }
    ImGui::EndTable();
}

// ---- all outputs tab
void draw_outputs_tab(AppState& st) {
    const moe::Estimate& e = st.estimate;
    const bool with_a = st.a.active;
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("columns", with_a ? 4 : 3, flags)) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("column (as in moe-roofline eval / sweep)", ImGuiTableColumnFlags_WidthStretch, 2.0f);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 1.2f);
    ImGui::TableSetupColumn("exact", ImGuiTableColumnFlags_WidthStretch, 1.5f);
    if (with_a) ImGui::TableSetupColumn("A (exact)", ImGuiTableColumnFlags_WidthStretch, 1.5f);
    ImGui::TableHeadersRow();
    for (const moe::Column& c : moe::output_columns()) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(c.name);
        if (ImGui::IsItemHovered() && c.help) ImGui::SetTooltip("%s", c.help);
        ImGui::TableNextColumn();
        std::string v;
        if (c.type == moe::ColumnType::text) v = c.text(e);
        else if (c.type == moe::ColumnType::boolean) v = std::isfinite(c.number(e)) ? (c.number(e) != 0 ? "yes" : "no") : "\u2014";
        else {
            const double x = c.number(e);
            const std::string unit = c.unit ? c.unit : "";
            if (unit == "bytes") v = fmt::bytes(x);
            else if (unit == "params") v = fmt::params(x);
            else v = fmt::number(x) + (unit.empty() || !std::isfinite(x) ? "" : " " + unit);
        }
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextUnformatted(v.c_str());
        ImGui::PopTextWrapPos();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", moe::format_value(c, e).c_str());
        if (with_a) {
            ImGui::TableNextColumn();
            ImGui::TextColored(theme::vec(theme::with_alpha(theme::kPinned, 0.85f)), "%s", moe::format_value(c, st.a.estimate).c_str());
        }
    }
    ImGui::EndTable();
}

}  // namespace web
