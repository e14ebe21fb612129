// panels_serving.cpp — the Serving tab's charts: TTFT and TPOT against the deployment's concurrency (aggregated) or
// decode batch (disaggregated) on one log time axis, and its output tokens/s per GPU against tokens/s per user;
// points where a request's KV does not fit dashed. They read st.serving (the serving sweep of recompute()).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
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
std::string tick_plain(double v) { return fmt::si(v); }
std::string tick_ms(double v) { return fmt::si(v); }
}  // namespace

// ---- serving: TTFT and TPOT against concurrency ---------------------------------------------------------------
void draw_serving_chart(AppState& st, ImVec2 size) {
    if (!begin_card(st, "chart.serving", size)) {
        end_card();
        return;
    }
    const SweepData& d = st.serving;
    const int c_ttft = numeric_column_index("serving.ttft_ms");
    const int c_tpot = numeric_column_index("serving.tpot_ms");
    const moe::Estimate& e = st.estimate;
    if (d.size() == 0 || c_ttft < 0 || c_tpot < 0 || !e.ok) {
        empty_chart("TTFT and TPOT under load", e.ok ? "Serving is off." : "Nothing to show: the scenario is invalid.");
        end_card();
        return;
    }
    const SweepAxis axis = serving_axis(st.scenario);
    auto series = [&](const SweepData& s, int col, std::vector<double>& y, std::vector<unsigned char>& dim) {
        y.resize(s.size());
        dim.resize(s.size());
        for (std::size_t i = 0; i < s.size(); ++i) {
            const double v = s.ok[i] ? s.value(size_t(col), i) : std::nan("");
            y[i] = v > 0 ? v : std::nan("");  // a log axis: TPOT is 0 when osl = 1
            dim[i] = s.ok[i] && !s.fits[i];
        }
    };
    std::vector<double> ttft, tpot, ttft_a, tpot_a;
    std::vector<unsigned char> dim, dim2, dima, dima2;
    series(d, c_ttft, ttft, dim);
    series(d, c_tpot, tpot, dim2);
    // issue 28: the p10 .. p90 band of each (empty without the engine's quantiles: the ideal engine)
    std::vector<double> band[4];
    std::vector<unsigned char> unused;
    const char* band_columns[4] = {"serving.ttft_ms_p10", "serving.ttft_ms_p90", "serving.tpot_ms_p10", "serving.tpot_ms_p90"};
    bool has_band = e.serving.has_band;
    for (int b = 0; b < 4 && has_band; ++b) {
        const int c = numeric_column_index(band_columns[b]);
        if (c < 0) has_band = false;
        else series(d, c, band[b], unused);
    }
    const bool with_a = st.a.active && st.a.serving.size() == d.size();
    if (with_a) {
        series(st.a.serving, c_ttft, ttft_a, dima);
        series(st.a.serving, c_tpot, tpot_a, dima2);
    }
    std::string title = st.scenario.serving.mode == moe::ServingMode::disaggregated
                            ? "TTFT and TPOT under load \u00b7 disaggregated"
                            : "TTFT and TPOT under load \u00b7 aggregated";
    // how far this engine's TTFT / TPOT typically are from measured runs (presets/engines.json)
    const moe::EngineConstants k = moe::engine_constants(moe::active_engines(), st.scenario);
    if (k.ttft_typical_error > 0 || k.tpot_typical_error > 0) {
        char note[128];
        std::snprintf(note, sizeof note, " \u00b7 typical error \u00b1%.0f%% / \u00b1%.0f%%", 100 * k.ttft_typical_error,
                      100 * k.tpot_typical_error);
        title += note;
    }
    if (plot::begin_plot("##serving", ImVec2(-1, -1), title.c_str())) {
        plot::setup_axis(plot::Axis::x, serving_axis_label(axis), plot::AxisFlags_Log, tick_plain);
        plot::setup_axis(plot::Axis::y, "time", plot::AxisFlags_Log, tick_ms, "ms");
        // whole decades, so that both series sit between labelled ticks (TPOT is often below the first TTFT decade)
        double lo = HUGE_VAL, hi = 0;
        for (const std::vector<double>* v : {&ttft, &tpot, &ttft_a, &tpot_a, &band[0], &band[1], &band[2], &band[3]})
            for (double y : *v)
                if (std::isfinite(y) && y > 0) lo = std::min(lo, y), hi = std::max(hi, y);
        if (hi > 0) plot::setup_axis_limits(plot::Axis::y, std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi))));
        plot::setup_legend(plot::Legend::inside_auto);
        const int n = static_cast<int>(d.size());
        if (with_a) {
            plot::plot_line("A TTFT", d.x.data(), ttft_a.data(), n, theme::kPinned, 1.8f, plot::ItemFlags_Dashed | plot::ItemFlags_CustomTooltip, dima.data());
            plot::plot_line("A TPOT", d.x.data(), tpot_a.data(), n, theme::lighten(theme::kPinned, 0.35f), 1.8f,
                            plot::ItemFlags_Dashed | plot::ItemFlags_CustomTooltip, dima2.data());
        }
        if (has_band) {
            plot::plot_band(d.x.data(), band[0].data(), band[1].data(), n, theme::with_alpha(theme::kTtft, 0.16f));
            plot::plot_band(d.x.data(), band[2].data(), band[3].data(), n, theme::with_alpha(theme::kTpot, 0.16f));
            plot::legend_entry("p10 .. p90", theme::with_alpha(theme::kText, 0.25f));
        }
        const int l_ttft = plot::plot_line("TTFT", d.x.data(), ttft.data(), n, theme::kTtft, 2.2f, plot::ItemFlags_CustomTooltip, dim.data());
        const int l_tpot = plot::plot_line("TPOT", d.x.data(), tpot.data(), n, theme::kTpot, 2.2f, plot::ItemFlags_CustomTooltip, dim2.data());
        bool any_dim = false;
        for (unsigned char v : dim) any_dim |= v != 0;
        if (any_dim) plot::legend_entry("KV does not fit", theme::with_alpha(theme::kText, 0.35f), plot::ItemFlags_Dashed);
        const double cx = current_x(st, axis);
        if (e.serving.computed) {
            if (e.serving.ttft_ms > 0) {
                plot::plot_marker(cx, e.serving.ttft_ms, theme::kText, 6);
                plot::plot_text(cx, e.serving.ttft_ms, fmt::time_ms(e.serving.ttft_ms).c_str(), theme::kTtft, ImVec2(-9, -7), true, 1.0f);
            }
            if (e.serving.tpot_ms > 0) {
                plot::plot_marker(cx, e.serving.tpot_ms, theme::kText, 6);
                plot::plot_text(cx, e.serving.tpot_ms, fmt::time_ms(e.serving.tpot_ms).c_str(), theme::kTpot, ImVec2(-9, -7), true, 1.0f);
            }
        }
        const plot::Hover h = plot::end_plot();
        if (h.item >= 0 && h.index >= 0) {
            const bool is_b = h.item == l_ttft || h.item == l_tpot;
            const SweepData& s = is_b ? d : st.a.serving;
            const std::size_t i = size_t(h.index);
            if (i < s.size() && s.ok[i]) {
                auto v = [&](const char* col) { return s.value(size_t(numeric_column_index(col)), i); };
                ImGui::BeginTooltip();
                ImGui::Text("%s %d%s", axis == SweepAxis::decode_batch ? "decode batch" : "concurrency", static_cast<int>(s.x[i]),
                            is_b ? "" : " (A)");
                ImGui::TextColored(theme::vec(theme::kTtft), "TTFT %s", fmt::time_ms(v("serving.ttft_ms")).c_str());
                ImGui::SameLine();
                ImGui::TextDisabled("prefill %s, queue %s, first wave %s, overhead %s, KV %s",
                                    fmt::time_ms(v("serving.ttft_prefill_ms")).c_str(), fmt::time_ms(v("serving.ttft_queue_ms")).c_str(),
                                    fmt::time_ms(v("serving.ttft_first_wave_ms")).c_str(),
                                    fmt::time_ms(v("serving.ttft_overhead_ms")).c_str(), fmt::time_ms(v("serving.kv_transfer_ms")).c_str());
                ImGui::TextColored(theme::vec(theme::kTpot), "TPOT %s", fmt::time_ms(v("serving.tpot_ms")).c_str());
                ImGui::SameLine();
                ImGui::TextDisabled("decode step %s, interleaved prefill %s", fmt::time_ms(v("serving.tpot_decode_ms")).c_str(),
                                    fmt::time_ms(v("serving.tpot_prefill_ms")).c_str());
                if (v("serving.tpot_preempt_ms") > 0)
                    ImGui::TextDisabled("preempted for KV room %s", fmt::time_ms(v("serving.tpot_preempt_ms")).c_str());
                ImGui::Text("%s tokens/s per GPU, running batch %s per DP rank", fmt::number(v("serving.output_tokens_per_s_per_gpu"), 4).c_str(),
                            fmt::number(v("serving.running_batch"), 3).c_str());
                ImGui::TextColored(theme::vec(s.fits[i] ? theme::kGood : theme::kBad), "%s",
                                   s.fits[i] ? "a request's KV cache fits" : "a request's KV cache does not fit");
                ImGui::EndTooltip();
            }
        }
    }
    end_card();
}

// ---- serving: the deployment's throughput against interactivity over concurrency -----------------------------
void draw_serving_frontier_chart(AppState& st, ImVec2 size) {
    if (!begin_card(st, "chart.serving_frontier", size)) {
        end_card();
        return;
    }
    const SweepData& d = st.serving;
    const int cu = numeric_column_index("serving.tokens_per_s_per_user");
    const int cg = numeric_column_index("serving.output_tokens_per_s_per_gpu");
    const moe::Estimate& e = st.estimate;
    if (d.size() == 0 || cu < 0 || cg < 0 || !e.ok) {
        empty_chart("Throughput vs interactivity \u00b7 deployment", e.ok ? "Serving is off." : "Nothing to show: the scenario is invalid.");
        end_card();
        return;
    }
    const SweepAxis axis = serving_axis(st.scenario);
    auto series = [&](const SweepData& s, std::vector<double>& x, std::vector<double>& y, std::vector<unsigned char>& dim) {
        x.resize(s.size());
        y.resize(s.size());
        dim.resize(s.size());
        for (std::size_t i = 0; i < s.size(); ++i) {
            x[i] = s.ok[i] ? s.value(size_t(cu), i) : std::nan("");
            y[i] = s.ok[i] ? s.value(size_t(cg), i) : std::nan("");
            dim[i] = s.ok[i] && !s.fits[i];
        }
    };
    std::vector<double> x, y, xa, ya;
    std::vector<unsigned char> dim, dima;
    series(d, x, y, dim);
    const bool with_a = st.a.active && st.a.serving.size() == d.size();
    if (with_a) series(st.a.serving, xa, ya, dima);
    if (plot::begin_plot("##serving_frontier", ImVec2(-1, -1), "Throughput vs interactivity \u00b7 deployment")) {
        plot::setup_axis(plot::Axis::x, "per user", plot::AxisFlags_ZeroMin, tick_plain, "tokens/s");
        plot::setup_axis(plot::Axis::y, "output per GPU", plot::AxisFlags_ZeroMin, tick_plain, "tokens/s");
        plot::setup_legend(plot::Legend::inside_auto);
        if (with_a) plot::plot_line("A", xa.data(), ya.data(), static_cast<int>(xa.size()), theme::kPinned, 2,
                                    plot::ItemFlags_Dashed | plot::ItemFlags_CustomTooltip, dima.data());
        const int line = plot::plot_line(with_a ? "B" : "##serving", x.data(), y.data(), static_cast<int>(x.size()), theme::kAccent, 2.2f,
                                         plot::ItemFlags_CustomTooltip, dim.data());
        // concurrency labels at powers of four
        const char* tag = axis == SweepAxis::decode_batch ? "b" : "c";
        for (std::size_t i = 0; i < d.size(); ++i) {
            const int c = static_cast<int>(d.x[i]);
            if (!d.ok[i] || (c & (c - 1)) != 0 || (c != 1 && (__builtin_ctz(static_cast<unsigned>(c)) % 2) != 0)) continue;
            char buf[32];
            std::snprintf(buf, sizeof buf, "%s=%d", tag, c);
            plot::plot_text(x[i], y[i], buf, theme::kTextDim, ImVec2(5, -7));
        }
        if (e.serving.computed) plot::plot_marker(e.serving.tokens_per_s_per_user, e.serving.output_tokens_per_s_per_gpu, theme::kText, 6);
        bool any_dim = false;
        for (unsigned char v : dim) any_dim |= v != 0;
        if (any_dim) plot::legend_entry("KV does not fit", theme::with_alpha(theme::kAccent, 0.35f));
        const plot::Hover h = plot::end_plot();
        if (h.item >= 0 && h.index >= 0) {
            const SweepData& s = (with_a && h.item != line) ? st.a.serving : d;
            const std::size_t i = size_t(h.index);
            if (i < s.size() && s.ok[i]) {
                ImGui::BeginTooltip();
                ImGui::Text("%s %d%s", axis == SweepAxis::decode_batch ? "decode batch" : "concurrency", static_cast<int>(s.x[i]),
                            (with_a && h.item != line) ? " (A)" : "");
                ImGui::Text("%s tokens/s per user, %s output tokens/s per GPU", fmt::number(s.value(size_t(cu), i), 4).c_str(),
                            fmt::number(s.value(size_t(cg), i), 4).c_str());
                ImGui::Text("TTFT %s, TPOT %s", fmt::time_ms(s.value(size_t(numeric_column_index("serving.ttft_ms")), i)).c_str(),
                            fmt::time_ms(s.value(size_t(numeric_column_index("serving.tpot_ms")), i)).c_str());
                ImGui::EndTooltip();
            }
        }
    }
    end_card();
}

}  // namespace web
