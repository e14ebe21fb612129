// panels_charts.cpp — the overview's charts. Each reads shown_estimate(st) (with serving on: the serving workload's
// steps) or the sweeps computed in recompute() and draws
// with plot.h; none calls the model.
//   layers:   per layer group, a stacked bar of its operators' exposed time coloured by what bounds them, then
//             the time hidden by overlap, hatched
//   memory:   one stacked bar of what a GPU holds against its capacity and the engine's usable share
//   roofline: every operator at (FLOP/byte, achieved TFLOPS) under the GPU's compute and bandwidth roofs
//   sweep:    any output column over batch / context / EP / prefill chunk, the current point marked
//   frontier: tokens/s per GPU against tokens/s per user over batch (the throughput-interactivity trade)
//   (the Serving tab's two charts: panels_serving.cpp)
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "format.h"
#include "panels.h"
#include "plot.h"
#include "text_log.h"
#include "theme.h"
#include "widgets.h"

namespace web {

namespace {

std::string tick_time_us(double v) { return fmt::si(v); }
std::string tick_plain(double v) { return fmt::si(v); }
std::string tick_gb(double v) { return fmt::si(v) + " GB"; }

const char* short_name(const char* name) {
    const char* dot = std::strrchr(name, '.');
    return dot ? dot + 1 : name;
}

const moe::PhaseResult& phase_result(const moe::Estimate& e, moe::Phase p) {
    return p == moe::Phase::prefill ? e.prefill : e.decode;
}


void op_tooltip(const moe::OpRecord& op, const moe::PhaseResult& pr, double step_ms) {
    ImGui::BeginTooltip();
    ImGui::PushFont(theme::fonts().bold);
    ImGui::TextUnformatted(op.name);
    ImGui::PopFont();
    ImGui::SameLine();
    ImGui::TextDisabled("%s", size_t(op.group) < pr.groups.size() ? pr.groups[size_t(op.group)].label.c_str() : "");
    ImGui::TextColored(theme::vec(theme::bound_colour(op.bound)), "%s-bound", moe::bound_name(op.bound));
    ImGui::Text("time %s per occurrence, %s exposed after overlap", fmt::time_us(op.time_us).c_str(),
                fmt::time_us(op.exposed_us).c_str());
    ImGui::Text("\u00d7 %s per step = %s of the step", fmt::number(op.count).c_str(),
                step_ms > 0 ? fmt::percent(op.exposed_us * op.count / (step_ms * 1000), 1).c_str() : "");
    if (op.flops > 0) ImGui::Text("%s GFLOP", fmt::number(op.flops / 1e9, 4).c_str());
    if (op.weight_bytes + op.activation_bytes > 0)
        ImGui::Text("HBM: %s weights + %s activations / KV", fmt::bytes(op.weight_bytes).c_str(), fmt::bytes(op.activation_bytes).c_str());
    if (op.comm_bytes > 0 && op.bound == moe::Bound::offload)
        ImGui::Text("streamed in: %s per GPU over the host link", fmt::bytes(op.comm_bytes).c_str());
    else if (op.comm_bytes > 0)
        ImGui::Text("sent: %s per GPU (%s)", fmt::bytes(op.comm_bytes).c_str(), moe::engine_name(op.engine));
    if (op.hops > 0) ImGui::Text("%s link-hops per token on the mesh", fmt::number(op.hops, 3).c_str());
    if (op.flops > 0) ImGui::Text("computes in %s", moe::dtype_name(op.compute_dtype));
    ImGui::Text("efficiency %.2f of the roofline,", op.efficiency);
    ImGui::SameLine();
    ImGui::TextColored(theme::vec(theme::source_colour(op.source)), "%s", moe::source_name(op.source));
    if (*op.table) ImGui::TextDisabled("%s", op.table);
    ImGui::EndTooltip();
}

}  // namespace

void empty_chart(const char* title, const char* why) {
    ImGui::PushFont(theme::fonts().bold);
    ImGui::TextUnformatted(title);
    ImGui::PopFont();
    ImGui::TextDisabled("%s", why);
}

// x axis of the Serving tab's charts.
const char* serving_axis_label(SweepAxis a) {
    return a == SweepAxis::decode_batch ? "decode batch per DP rank" : "concurrency (requests in flight)";
}


// ---- per-layer time -------------------------------------------------------------------------------------------
void draw_layer_chart(AppState& st, ImVec2 size) {
    if (!begin_card(st, "chart.layers", size)) {
        end_card();
        return;
    }
    const moe::Estimate& e = shown_estimate(st);
    const moe::Phase ph = shown_phase(st);
    const moe::PhaseResult& pr = phase_result(e, ph);
    if (!e.ok || !pr.computed || pr.groups.empty()) {
        empty_chart("Time per layer", "Nothing to show: the scenario is invalid.");
        end_card();
        return;
    }
    std::vector<std::string> rows;
    for (const moe::LayerGroup& g : pr.groups) rows.push_back(g.label.str() + (g.count > 1 ? "  \u00d7" + std::to_string(g.count) : ""));
    char title[160];
    std::snprintf(title, sizeof title, "Time per layer \u00b7 %s step %s", moe::phase_name(ph), fmt::time_ms(pr.step_ms).c_str());
    double xmax = 0;
    std::vector<double> row_end(pr.groups.size(), 0.0), row_exposed(pr.groups.size(), 0.0);
    for (const moe::OpRecord& op : e.ops) {
        if (op.phase != ph || size_t(op.group) >= row_end.size()) continue;
        row_end[size_t(op.group)] += std::max(op.time_us, op.exposed_us);
        row_exposed[size_t(op.group)] += op.exposed_us;
    }
    for (double v : row_end) xmax = std::max(xmax, v);
    // Room on the right of the longest bar for its "time (share)" label: the x range is stretched so the label
    // fits in the plot area whatever the card's width.
    float label_w = 0, cat_w = 0;
    for (std::size_t gi = 0; gi < pr.groups.size(); ++gi) {
        ImFont* sf = theme::fonts().small;
        const std::string l = fmt::time_us(pr.groups[gi].time_us) + "  (100%)";
        label_w = std::max(label_w, sf->CalcTextSizeA(sf->FontSize, 1e9f, 0, l.c_str()).x);
        cat_w = std::max(cat_w, ImGui::CalcTextSize(rows[gi].c_str()).x);
    }
    const float plot_w = std::max(theme::px(80), ImGui::GetContentRegionAvail().x - cat_w - theme::px(16));
    const double stretch = plot_w / std::max(theme::px(40), plot_w - label_w - theme::px(12));
    if (plot::begin_plot("##layers", ImVec2(-1, -1), title)) {
        plot::setup_axis(plot::Axis::x, "time per layer", plot::AxisFlags_ZeroMin, tick_time_us, "\u00b5s");
        plot::setup_axis(plot::Axis::y, nullptr, plot::AxisFlags_Categories);
        plot::setup_categories(rows);
        plot::setup_axis_limits(plot::Axis::x, 0, xmax * stretch + 1e-9);
        plot::legend_entry("compute", theme::kCompute);
        plot::legend_entry("memory", theme::kMemory);
        plot::legend_entry("comm", theme::kComm);
        plot::legend_entry("hidden by overlap", theme::kComm, plot::ItemFlags_Hatched);
        // expert streaming from the host tier: only when the scenario offloads experts
        if (std::any_of(e.ops.begin(), e.ops.end(), [&](const moe::OpRecord& o) { return o.phase == ph && o.bound == moe::Bound::offload; }))
            plot::legend_entry("expert streaming", theme::kOffload);
        std::vector<int> item_op;  // plot item id -> index into e.ops
        std::vector<double> cursor(pr.groups.size(), 0.0);
        const double half = 0.32;
        for (std::size_t i = 0; i < e.ops.size(); ++i) {
            const moe::OpRecord& op = e.ops[i];
            if (op.phase != ph || size_t(op.group) >= cursor.size() || op.exposed_us <= 0) continue;
            double& x = cursor[size_t(op.group)];
            const int id = plot::plot_rect(op.name, x, op.group - half, x + op.exposed_us, op.group + half,
                                           theme::bound_colour(op.bound), plot::ItemFlags_CustomTooltip | plot::ItemFlags_NoLegend,
                                           short_name(op.name));
            item_op.resize(size_t(id) + 1, -1);
            item_op[size_t(id)] = static_cast<int>(i);
            x += op.exposed_us;
        }
        for (std::size_t i = 0; i < e.ops.size(); ++i) {  // the hidden parts after the critical path
            const moe::OpRecord& op = e.ops[i];
            const double hidden = op.time_us - op.exposed_us;
            if (op.phase != ph || size_t(op.group) >= cursor.size() || hidden <= 1e-6) continue;
            double& x = cursor[size_t(op.group)];
            const int id = plot::plot_rect(op.name, x, op.group - half * 0.7, x + hidden, op.group + half * 0.7,
                                           theme::bound_colour(op.bound),
                                           plot::ItemFlags_CustomTooltip | plot::ItemFlags_NoLegend | plot::ItemFlags_Hatched);
            item_op.resize(size_t(id) + 1, -1);
            item_op[size_t(id)] = static_cast<int>(i);
            x += hidden;
        }
        for (std::size_t gi = 0; gi < pr.groups.size(); ++gi) {
            const moe::LayerGroup& g = pr.groups[gi];
            const double share = pr.step_ms > 0 ? g.time_us * g.count / (pr.step_ms * 1000) : 0;
            const std::string label = fmt::time_us(g.time_us) + "  (" + fmt::percent(share) + ")";
            plot::plot_text(cursor[gi], double(gi), label.c_str(), theme::kTextDim, ImVec2(6, 0), false);
        }
        const plot::Hover h = plot::end_plot();
        if (h.item >= 0 && size_t(h.item) < item_op.size() && item_op[size_t(h.item)] >= 0)
            op_tooltip(e.ops[size_t(item_op[size_t(h.item)])], pr, pr.step_ms);
    }
    end_card();
}

// ---- memory ---------------------------------------------------------------------------------------------------
void draw_memory_chart(AppState& st, ImVec2 size) {
    if (!begin_card(st, "chart.memory", size)) {
        end_card();
        return;
    }
    const moe::Estimate& e = shown_estimate(st);
    if (!e.ok) {
        empty_chart("Memory per GPU", "Nothing to show: the scenario is invalid.");
        end_card();
        return;
    }
    const moe::MemoryResult& m = e.memory;
    struct Part {
        const char* name;
        double bytes;
        ImU32 colour;
    };
    const double weight_parts = m.weights_attention_bytes + m.weights_experts_bytes + m.weights_shared_bytes +
                                m.weights_dense_ffn_bytes + m.weights_embedding_bytes + m.weights_mtp_bytes;
    const Part parts[] = {
        {"experts", m.weights_experts_bytes, theme::rgba(58, 110, 200)},
        {"attention", m.weights_attention_bytes, theme::rgba(92, 148, 236)},
        {"shared experts", m.weights_shared_bytes, theme::rgba(120, 170, 240)},
        {"dense FFN", m.weights_dense_ffn_bytes, theme::rgba(148, 186, 244)},
        {"embed + head", m.weights_embedding_bytes, theme::rgba(170, 200, 248)},
        {"MTP", m.weights_mtp_bytes, theme::rgba(190, 214, 250)},
        {"other weights", std::max(0.0, m.weights_bytes - weight_parts), theme::rgba(110, 130, 170)},
        {"KV cache", m.kv_cache_bytes, theme::kGood},
        {"activations", m.activation_bytes, theme::kMemory},
        {"workspace", m.workspace_bytes, theme::rgba(200, 130, 80)},
        {"comm buffers", m.comm_buffer_bytes, theme::kComm},
        {"reserved", m.reserved_bytes, theme::rgba(120, 124, 136)},
    };
    char title[160];
    std::snprintf(title, sizeof title, "Memory per GPU \u00b7 %s of %s usable", fmt::bytes(m.total_bytes).c_str(),
                  fmt::bytes(m.usable_bytes).c_str());
    // The bar gives up height (down to a thin bar) so that the legend and the fits line stay inside a short card
    // (1280x720, or two rows of headline cards when serving is on).
    int legend_parts = 0;
    for (const Part& p : parts) legend_parts += p.bytes > 0;
    const float legend_h = float((legend_parts + 1) / 2) * (theme::fonts().small->FontSize + 2 * ImGui::GetStyle().CellPadding.y) +
                           ImGui::GetStyle().ItemSpacing.y * 3 + theme::fonts().small->FontSize * 2.3f;
    const float bar_h = std::clamp(ImGui::GetContentRegionAvail().y - legend_h, theme::px(80), theme::px(100));
    const double xmax = std::max(m.capacity_bytes, m.total_bytes) / 1e9;
    if (plot::begin_plot("##memory", ImVec2(-1, bar_h), title)) {
        plot::setup_axis(plot::Axis::x, nullptr, plot::AxisFlags_None, tick_gb);
        plot::setup_axis(plot::Axis::y, nullptr, plot::AxisFlags_Categories);
        plot::setup_categories({""});
        plot::setup_axis_limits(plot::Axis::x, 0, xmax * 1.02);
        plot::setup_legend(plot::Legend::none);
        const double half = 0.24;
        double x = 0;
        std::vector<int> ids;
        for (const Part& p : parts) {
            const double gb = p.bytes / 1e9;
            ids.push_back(gb > 0 ? plot::plot_rect(p.name, x, -half, x + gb, half, p.colour, plot::ItemFlags_CustomTooltip) : -1);
            x += gb;
        }
        if (!m.fits)  // the part that does not fit, underlined in red
            plot::plot_rect("##short", m.usable_bytes / 1e9, half + 0.04, m.total_bytes / 1e9, half + 0.1, theme::kBad, plot::ItemFlags_NoHover);
        plot::plot_segment(m.usable_bytes / 1e9, -0.5, m.usable_bytes / 1e9, 0.5, theme::kText, 1.5f, plot::ItemFlags_Dashed | plot::ItemFlags_NoFit);
        plot::plot_segment(m.capacity_bytes / 1e9, -0.5, m.capacity_bytes / 1e9, 0.5, theme::kTextDim, 1.5f, plot::ItemFlags_NoFit);
        const std::string usable = "usable (" + fmt::percent(shown_scenario(st).runtime.memory_fraction()) + ")";
        plot::plot_text(m.usable_bytes / 1e9, -0.5, usable.c_str(), theme::kText, ImVec2(-4, 9), false, 1.0f);
        const plot::Hover h = plot::end_plot();
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] < 0 || ids[i] != h.item) continue;
            ImGui::BeginTooltip();
            ImGui::TextUnformatted(parts[i].name);
            ImGui::Text("%s per GPU, %s of usable", fmt::bytes(parts[i].bytes).c_str(),
                        fmt::percent(parts[i].bytes / std::max(1.0, m.usable_bytes), 1).c_str());
            ImGui::EndTooltip();
        }
    }
    // legend with values, in two columns
    ImGui::Spacing();
    // (a narrow card, under 330 px: the names only, their sizes on hover)
    const bool values = ImGui::GetContentRegionAvail().x >= theme::px(330);
    if (ImGui::BeginTable("mem_legend", 4, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_NoPadOuterX)) {
        ImGui::TableSetupColumn("a", ImGuiTableColumnFlags_WidthStretch, 1.4f);
        ImGui::TableSetupColumn("b", ImGuiTableColumnFlags_WidthStretch, values ? 0.8f : 0.001f);
        ImGui::TableSetupColumn("c", ImGuiTableColumnFlags_WidthStretch, 1.4f);
        ImGui::TableSetupColumn("d", ImGuiTableColumnFlags_WidthStretch, values ? 0.8f : 0.001f);
        std::vector<const Part*> shown;
        for (const Part& p : parts)
            if (p.bytes > 0) shown.push_back(&p);
        const std::size_t half = (shown.size() + 1) / 2;
        ImGui::PushFont(theme::fonts().small);
        for (std::size_t r = 0; r < half; ++r) {
            ImGui::TableNextRow();
            for (std::size_t c = 0; c < 2; ++c) {
                const std::size_t i = r + c * half;
                ImGui::TableNextColumn();
                if (i >= shown.size()) {
                    ImGui::TableNextColumn();
                    continue;
                }
                ImGui::TextColored(theme::vec(shown[i]->colour), "\u25A0");
                ImGui::SameLine(0, theme::px(4));
                // a narrow card shortens the names (the hover gives them whole), never cuts them
                ImFont* font = ImGui::GetFont();
                const std::string name = elide_text(font, ImGui::GetFontSize(), shown[i]->name, ImGui::GetContentRegionAvail().x - theme::px(2));
                ImGui::TextUnformatted(name.c_str());
                log_text_item(name.c_str());
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s: %s per GPU", shown[i]->name, fmt::bytes(shown[i]->bytes).c_str());
                ImGui::TableNextColumn();
                if (!values) continue;
                const std::string v = elide_text(font, ImGui::GetFontSize(), fmt::bytes(shown[i]->bytes), ImGui::GetContentRegionAvail().x - theme::px(2));
                ImGui::SetCursorPosX(ImGui::GetCursorPosX() + std::max(0.0f, ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(v.c_str()).x - theme::px(10)));
                ImGui::TextDisabled("%s", v.c_str());
                log_text_item(v.c_str());
            }
        }
        ImGui::PopFont();
        ImGui::EndTable();
    }
    // One line under the legend (shortened to the card's width, never wrapped below its edge): the verdict (none
    // with serving on: the deployment's is on its GPUs card), KV per token, the largest batch and context.
    ImGui::PushFont(theme::fonts().small);
    std::string verdict;
    ImU32 verdict_colour = theme::kGood;
    if (st.steps.on) {
        verdict = "decode step at the running batch";
        verdict_colour = theme::kTextDim;
    } else if (m.fits) {
        verdict = "fits";
    } else {
        verdict = "short by " + fmt::bytes(m.shortfall_bytes);
        verdict_colour = theme::kBad;
    }
    std::string rest = " \u00b7 KV " + fmt::bytes(m.kv_bytes_per_token) + "/token \u00b7 max batch " + fmt::number(m.max_batch);
    if (m.max_context > 0) rest += " \u00b7 max context " + fmt::number(m.max_context);
    const float room = ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(verdict.c_str()).x;
    while (!rest.empty() && ImGui::CalcTextSize(rest.c_str()).x > room) {  // drop the last item that does not fit
        const std::size_t cut = rest.rfind(" \u00b7 ");
        rest = cut == std::string::npos || cut == 0 ? std::string() : rest.substr(0, cut);
    }
    ImGui::TextColored(theme::vec(verdict_colour), "%s", verdict.c_str());
    log_text_item(verdict.c_str());
    if (!rest.empty()) {
        ImGui::SameLine(0, 0);
        ImGui::TextDisabled("%s", rest.c_str());
        log_text_item(rest.c_str());
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Largest decode batch per DP rank that fits at context %s; largest context that fits at batch %d.",
                          fmt::number(shown_scenario(st).context_len()).c_str(), shown_scenario(st).workload.batch);
    ImGui::PopFont();
    end_card();
}

// ---- roofline -------------------------------------------------------------------------------------------------
void draw_roofline_chart(AppState& st, ImVec2 size) {
    if (!begin_card(st, "chart.roofline", size)) {
        end_card();
        return;
    }
    const moe::Estimate& e = shown_estimate(st);
    const moe::Phase ph = shown_phase(st);
    const moe::PhaseResult& pr = phase_result(e, ph);
    if (!e.ok || !pr.computed) {
        empty_chart("Roofline", "Nothing to show: the scenario is invalid.");
        end_card();
        return;
    }
    const moe::GpuSpec& g = shown_scenario(st).gpu;
    std::vector<double> xs, ys;
    std::vector<float> radii;
    std::vector<ImU32> colours;
    std::vector<int> op_of_point;
    std::vector<double> weight;  // time share, for labels
    const double step_us = std::max(1e-9, pr.step_ms * 1000);
    for (std::size_t i = 0; i < e.ops.size(); ++i) {
        const moe::OpRecord& op = e.ops[i];
        const double bytes = op.weight_bytes + op.activation_bytes;
        if (op.phase != ph || op.flops <= 0 || bytes <= 0 || op.time_us <= 0) continue;
        xs.push_back(op.flops / bytes);
        ys.push_back(op.flops / (op.time_us * 1e-6) / 1e12);
        const double share = op.time_us * op.count / step_us;
        weight.push_back(share);
        radii.push_back(static_cast<float>(3.0 + 9.0 * std::sqrt(std::min(1.0, share))));
        colours.push_back(theme::bound_colour(op.bound));
        op_of_point.push_back(static_cast<int>(i));
    }
    const double bw_tb = g.hbm_bandwidth_GBps / 1000.0;  // TFLOPS per FLOP/byte
    // the compute roof of each format the plotted operators run in (each record says its compute dtype)
    struct Roof {
        moe::Dtype dtype;
        double tflops;
    };
    std::vector<Roof> roofs;
    for (int i : op_of_point) {
        const moe::Dtype d = e.ops[size_t(i)].compute_dtype;
        bool seen = false;
        for (const Roof& r : roofs) seen |= r.dtype == d || r.tflops == g.peak_tflops(d);
        if (!seen) roofs.push_back({d, g.peak_tflops(d)});
    }
    if (roofs.empty()) roofs.push_back({moe::Dtype::bf16, g.dense_tflops_bf16});
    double peak = 0;
    for (const Roof& r : roofs) peak = std::max(peak, r.tflops);
    double xmin = 1, xmax = 1000, ymin = 1, ymax = peak * 2.5;
    if (!xs.empty()) {
        xmin = *std::min_element(xs.begin(), xs.end()) / 3;
        xmax = *std::max_element(xs.begin(), xs.end()) * 3;
        ymin = *std::min_element(ys.begin(), ys.end()) / 3;
    }
    xmax = std::max(xmax, peak / bw_tb * 3);  // the ridge point is always in view
    xmin = std::max(xmin, 0.05);
    ymin = std::max(std::min(ymin, xmin * bw_tb), 1e-3);
    char title[120];
    std::snprintf(title, sizeof title, "Roofline \u00b7 %s", moe::phase_name(ph));
    if (plot::begin_plot("##roofline", ImVec2(-1, -1), title)) {
        plot::setup_axis(plot::Axis::x, "arithmetic intensity", plot::AxisFlags_Log, tick_plain, "FLOP/byte");
        plot::setup_axis(plot::Axis::y, "achieved", plot::AxisFlags_Log, tick_plain, "TFLOPS");
        plot::setup_axis_limits(plot::Axis::x, xmin, xmax);
        plot::setup_axis_limits(plot::Axis::y, ymin, ymax);
        plot::setup_legend(plot::Legend::inside_auto);
        // roofs: bandwidth up to the highest peak, then each dtype's flat compute roof from its ridge point
        plot::plot_segment(xmin, xmin * bw_tb, peak / bw_tb, peak, theme::kText, 1.6f);
        char buf[80];
        for (const Roof& r : roofs) {
            if (r.tflops <= 0) continue;
            plot::plot_segment(r.tflops / bw_tb, r.tflops, xmax, r.tflops, theme::with_alpha(theme::kText, 0.8f), 1.6f);
            std::string name = moe::dtype_name(r.dtype);
            for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
            std::snprintf(buf, sizeof buf, "%s %s", name.c_str(), fmt::number(r.tflops, 4).c_str());
            plot::plot_text(xmax, r.tflops, buf, theme::kTextDim, ImVec2(-4, -8), false, 1.0f);
        }
        std::snprintf(buf, sizeof buf, "HBM %s TB/s", fmt::number(bw_tb, 3).c_str());
        // up the slope, left of the line (the region above a roof holds no operator)
        const double xr = std::max(xmin * 1.2, peak / bw_tb / 4);
        plot::plot_text(xr, xr * bw_tb, buf, theme::kTextDim, ImVec2(-6, -8), false, 1.0f);
        plot::legend_entry("compute", theme::kCompute, plot::ItemFlags_None);
        plot::legend_entry("memory", theme::kMemory, plot::ItemFlags_None);
        const int pts = plot::plot_scatter("##ops", xs.data(), ys.data(), static_cast<int>(xs.size()), theme::kCompute, 4,
                                           plot::ItemFlags_CustomTooltip, radii.data(), colours.data());
        // label the operators that take the most time
        std::vector<std::size_t> order(xs.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weight[a] > weight[b]; });
        std::vector<std::string> labelled;
        for (std::size_t k = 0; k < order.size() && labelled.size() < 6; ++k) {
            const std::size_t i = order[k];
            const std::string name = short_name(e.ops[size_t(op_of_point[i])].name);
            if (std::find(labelled.begin(), labelled.end(), name) != labelled.end()) continue;  // once per operator
            labelled.push_back(name);
            plot::plot_text(xs[i], ys[i], name.c_str(), theme::kText, ImVec2(radii[i] + 3, -4));
        }
        const plot::Hover h = plot::end_plot();
        if (h.item == pts && h.index >= 0) op_tooltip(e.ops[size_t(op_of_point[size_t(h.index)])], pr, pr.step_ms);
    }
    end_card();
}

// ---- sweep ----------------------------------------------------------------------------------------------------
namespace {

// A column's values for display: bytes as GB, params as billions.
double display_scale(const moe::Column& c, std::string& unit) {
    unit = c.unit ? c.unit : "";
    if (unit == "bytes") {
        unit = "GB";
        return 1e-9;
    }
    if (unit == "params") {
        unit = "B params";
        return 1e-9;
    }
    return 1;
}



}  // namespace

double current_x(const AppState& st, SweepAxis a) {
    const moe::Scenario& s = shown_scenario(st);
    switch (a) {
        case SweepAxis::batch: return s.workload.batch;
        case SweepAxis::context: return s.context_len();
        case SweepAxis::ep: return s.parallel.ep;
        case SweepAxis::prefill_tokens: return s.workload.prefill_tokens;
        case SweepAxis::concurrency: return s.serving.concurrency;
        case SweepAxis::decode_batch: return s.serving.decode.batch;
        case SweepAxis::isl: return s.serving.isl;
        case SweepAxis::osl: return s.serving.osl;
    }
    return 0;
}

void draw_sweep_chart(AppState& st, ImVec2 size) {
    if (!begin_card(st, "chart.sweep", size)) {
        end_card();
        return;
    }
    // header: x and y pickers
    const float w = ImGui::GetContentRegionAvail().x;
    ImGui::PushFont(theme::fonts().bold);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Sweep");
    ImGui::PopFont();
    ImGui::SameLine();
    ImGui::PushFont(theme::fonts().small);
    const float combo_w = (w - ImGui::GetCursorPosX() - theme::px(10)) * 0.5f;
    const SweepAxis axis = chart_sweep_axis(st);
    const SweepAxisInfo& ax = sweep_axis_info(axis);
    // wide enough for the axis' name ("concurrency"), the y column takes the rest
    ImGui::SetNextItemWidth(std::max(combo_w * 0.8f, ImGui::CalcTextSize(ax.label).x + ImGui::GetFrameHeight() +
                                                         ImGui::GetStyle().FramePadding.x * 2));
    if (ImGui::BeginCombo("##sweep_x", ax.label)) {
        for (const SweepAxisInfo& a : sweep_axes()) {
            if (is_serving_axis(a.axis) && a.axis != axis && !serving_on(st.scenario)) continue;
            if (ImGui::Selectable(a.label, a.axis == axis)) set_sweep_axis(st, a.axis);
            record_last_item(st, std::string("sweep.x=") + a.key);
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", a.help);
        }
        ImGui::EndCombo();
    }
    record_last_item(st, "sweep.x");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("x axis: %s", ax.help);
    ImGui::SameLine(0, theme::px(4));
    const std::string ycol = sweep_y_column(st);
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
    if (ImGui::BeginCombo("##sweep_y", ycol.c_str(), ImGuiComboFlags_HeightLarge)) {
        for (const moe::Column* c : numeric_columns()) {
            if (ImGui::Selectable(c->name, ycol == c->name)) set_sweep_y(st, c->name);
            record_last_item(st, std::string("sweep.y=") + c->name);
            if (ImGui::IsItemHovered() && c->help) ImGui::SetTooltip("%s", c->help);
        }
        ImGui::EndCombo();
    }
    record_last_item(st, "sweep.y");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("y axis: any output column (the same names as moe-roofline eval)");
    ImGui::PopFont();

    if (!shown_estimate(st).ok) {
        ImGui::TextDisabled("Nothing to show: the scenario is invalid.");
        end_card();
        return;
    }
    const SweepData& d = st.sweep;
    const int yi = numeric_column_index(ycol);
    const moe::Column* col = yi >= 0 ? numeric_columns()[size_t(yi)] : nullptr;
    if (!col || d.size() == 0) {
        ImGui::TextDisabled("No sweep.");
        end_card();
        return;
    }
    std::string unit;
    const double scale = display_scale(*col, unit);
    auto series = [&](const SweepData& s, std::vector<double>& ys, std::vector<unsigned char>& dim) {
        ys.resize(s.size());
        dim.resize(s.size());
        for (std::size_t i = 0; i < s.size(); ++i) {
            ys[i] = s.ok[i] ? s.value(size_t(yi), i) * scale : std::nan("");
            dim[i] = s.ok[i] && !s.fits[i];
        }
    };
    std::vector<double> ys, ya;
    std::vector<unsigned char> dim, dima;
    series(d, ys, dim);
    const bool with_a = st.a.active && st.a.sweep.size() == d.size();
    if (with_a) series(st.a.sweep, ya, dima);
    std::size_t ok = 0;
    for (double v : ys) ok += std::isfinite(v);
    if (plot::begin_plot("##sweep", ImVec2(-1, -1))) {
        plot::setup_axis(plot::Axis::x, ax.label, plot::AxisFlags_Log, tick_plain, ax.unit);
        plot::setup_axis(plot::Axis::y, col->name, plot::AxisFlags_ZeroMin, tick_plain, unit.c_str());
        plot::setup_legend(plot::Legend::inside_auto);
        if (with_a) plot::plot_line("A", st.a.sweep.x.data(), ya.data(), static_cast<int>(ya.size()), theme::kPinned, 2,
                                    plot::ItemFlags_HoverX | plot::ItemFlags_Dashed, dima.data());
        plot::plot_line(with_a ? "B" : "##current", d.x.data(), ys.data(), static_cast<int>(ys.size()), theme::kAccent, 2.2f,
                        plot::ItemFlags_HoverX, dim.data());
        bool any_dim = false;
        for (unsigned char v : dim) any_dim |= v != 0;
        if (any_dim) plot::legend_entry("does not fit", theme::with_alpha(theme::kAccent, 0.35f));
        const moe::Estimate& e = shown_estimate(st);
        if (e.ok && axis == SweepAxis::batch && e.memory.max_batch >= 1)
            plot::plot_vline("max batch", e.memory.max_batch, theme::kGood);
        if (e.ok && axis == SweepAxis::context && e.memory.max_context >= 1)
            plot::plot_vline("max context", e.memory.max_context, theme::kGood);
        // the current point: the deployment's on a serving axis or column, the shown steps' otherwise
        const moe::Estimate& ce = is_serving_axis(axis) || std::string_view(col->name).rfind("serving.", 0) == 0 ? st.estimate : e;
        const double cy = col->number(ce) * scale;
        // (no curve on this axis, e.g. a list of lengths replaces it: no point to mark on it either)
        if (ok > 0 && ce.ok && std::isfinite(cy)) plot::plot_marker(current_x(st, axis), cy, theme::kText, 6);
        plot::end_plot();
    }
    if (ok == 0) {  // centred in the plot area
        const ImVec4 a = plot::plot_area();
        const char* msg = "no valid point on this axis";
        const ImVec2 sz = ImGui::GetFont()->CalcTextSizeA(ImGui::GetFontSize(), FLT_MAX, 0.0f, msg);
        draw_text(ImGui::GetWindowDrawList(), ImGui::GetFont(), ImGui::GetFontSize(),
                  ImVec2(a.x + std::max(theme::px(10), (a.z - a.x - sz.x) * 0.5f), a.y + std::max(theme::px(10), (a.w - a.y - sz.y) * 0.5f)),
                  theme::kTextDim, msg);
    }
    end_card();
}

// ---- throughput vs interactivity ---------------------------------------------------------------------------------
void draw_frontier_chart(AppState& st, ImVec2 size) {
    if (!begin_card(st, "chart.frontier", size)) {
        end_card();
        return;
    }
    const SweepData& d = st.frontier;
    const int ci = numeric_column_index("decode.tokens_per_s_per_user");
    const int cg = numeric_column_index("decode.tokens_per_s_per_gpu");
    const int ct = numeric_column_index("decode.tpot_ms");
    if (d.size() == 0 || ci < 0 || cg < 0 || !shown_estimate(st).ok) {
        empty_chart("Throughput vs interactivity", "Nothing to show: the scenario is invalid.");
        end_card();
        return;
    }
    auto series = [&](const SweepData& s, std::vector<double>& x, std::vector<double>& y, std::vector<unsigned char>& dim) {
        x.resize(s.size());
        y.resize(s.size());
        dim.resize(s.size());
        for (std::size_t i = 0; i < s.size(); ++i) {
            x[i] = s.ok[i] ? s.value(size_t(ci), i) : std::nan("");
            y[i] = s.ok[i] ? s.value(size_t(cg), i) : std::nan("");
            dim[i] = s.ok[i] && !s.fits[i];
        }
    };
    std::vector<double> x, y, xa, ya;
    std::vector<unsigned char> dim, dima;
    series(d, x, y, dim);
    const bool with_a = st.a.active && st.a.frontier.size() > 0;
    if (with_a) series(st.a.frontier, xa, ya, dima);
    if (plot::begin_plot("##frontier", ImVec2(-1, -1), "Throughput vs interactivity \u00b7 decode")) {
        plot::setup_axis(plot::Axis::x, "per user", plot::AxisFlags_ZeroMin, tick_plain, "tokens/s");
        plot::setup_axis(plot::Axis::y, "per GPU", plot::AxisFlags_ZeroMin, tick_plain, "tokens/s");
        plot::setup_legend(plot::Legend::inside_auto);
        if (with_a) plot::plot_line("A", xa.data(), ya.data(), static_cast<int>(xa.size()), theme::kPinned, 2,
                                    plot::ItemFlags_Dashed | plot::ItemFlags_CustomTooltip, dima.data());
        const int line = plot::plot_line(with_a ? "B" : "##batch", x.data(), y.data(), static_cast<int>(x.size()), theme::kAccent, 2.2f,
                                         plot::ItemFlags_CustomTooltip, dim.data());
        // batch labels at powers of four
        for (std::size_t i = 0; i < d.size(); ++i) {
            const int b = static_cast<int>(d.x[i]);
            if (!d.ok[i] || (b & (b - 1)) != 0 || (b != 1 && (__builtin_ctz(static_cast<unsigned>(b)) % 2) != 0)) continue;
            char buf[32];
            std::snprintf(buf, sizeof buf, "b=%d", b);
            plot::plot_text(x[i], y[i], buf, theme::kTextDim, ImVec2(5, -7));
        }
        const moe::Estimate& e = shown_estimate(st);
        if (e.ok && e.decode.computed)
            plot::plot_marker(e.decode.tokens_per_s_per_user, e.decode.tokens_per_s_per_gpu, theme::kText, 6);
        bool any_dim = false;
        for (unsigned char v : dim) any_dim |= v != 0;
        if (any_dim) plot::legend_entry("does not fit", theme::with_alpha(theme::kAccent, 0.35f));
        const plot::Hover h = plot::end_plot();
        if (h.item >= 0 && h.index >= 0) {
            const SweepData& s = (with_a && h.item != line) ? st.a.frontier : d;
            const std::size_t i = size_t(h.index);
            if (i < s.size() && s.ok[i]) {
                ImGui::BeginTooltip();
                ImGui::Text("batch %d per DP rank%s", static_cast<int>(s.x[i]), (with_a && h.item != line) ? " (A)" : "");
                ImGui::Text("%s tokens/s per user, %s tokens/s per GPU", fmt::number(s.value(size_t(ci), i), 4).c_str(),
                            fmt::number(s.value(size_t(cg), i), 4).c_str());
                if (ct >= 0) ImGui::Text("TPOT %s", fmt::time_ms(s.value(size_t(ct), i)).c_str());
                ImGui::TextColored(theme::vec(s.fits[i] ? theme::kGood : theme::kBad), "%s", s.fits[i] ? "fits in memory" : "does not fit in memory");
                ImGui::EndTooltip();
            }
        }
    }
    end_card();
}

}  // namespace web
