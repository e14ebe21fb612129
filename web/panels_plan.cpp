// panels_plan.cpp — the Plan tab (DESIGN §9): the GPU budget, the SLA and the search space on the left; the Pareto
// front of output tokens/s per GPU against tokens/s per user as a chart (aggregated and disaggregated in two
// colours, the SLA drawn) and as a table on the right. A click on a point or a row loads that deployment into the
// calculator. The search itself runs in slices in the frame loop (step_plan): this file only draws what it found.
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "format.h"
#include "panels.h"
#include "platform.h"
#include "text_log.h"
#include "plot.h"
#include "theme.h"
#include "widgets.h"

namespace web {

namespace {

constexpr ImU32 kAggregated = theme::kAccent;
constexpr ImU32 kDisaggregated = theme::rgba(240, 150, 70);

ImU32 mode_colour(const moe::PlanPoint& p) {
    return p.mode == moe::PlanMode::disaggregated ? kDisaggregated : kAggregated;
}

std::string tick(double v) { return fmt::si(v); }

// "tp1 dp16 ep16" (pp only when > 1)
std::string layout_text(int tp, int dp, int ep, int pp) {
    char buf[64];
    if (pp > 1) std::snprintf(buf, sizeof buf, "tp%d dp%d ep%d pp%d", tp, dp, ep, pp);
    else std::snprintf(buf, sizeof buf, "tp%d dp%d ep%d", tp, dp, ep);
    return buf;
}

std::string dtype_text(const moe::DtypeSel& d, const char* auto_text) { return d.is_auto ? auto_text : moe::dtype_name(d.value); }

// "plan-deepseek-v3-h200-64gpus"
std::string plan_filename(const AppState& st) {
    std::string id = "plan";
    if (!st.plan.searches.empty()) {
        const moe::Scenario& b = st.plan.searches.front().base();
        id = b.model_ref + "-" + (st.plan.searches.size() > 1 && st.plan.settings.hardware.size() > 1 ? "mixed" : b.hardware_ref);
    }
    for (char& c : id)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '-';
    return "plan-" + id + "-" + std::to_string(st.plan.settings.gpus) + "gpus";
}

// Everything about front row k, as the hover over a table row or a chart point shows it.
void row_tooltip(const AppState& st, std::size_t k) {
    const moe::PlanFront::Row& row = st.plan.front[k];
    const moe::PlanSearch& s = plan_search_of(st.plan, row);
    const moe::PlanPoint& pt = row.point;
    const moe::PointResult& r = row.result;
    const bool dis = pt.mode == moe::PlanMode::disaggregated;
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
    ImGui::Text("#%zu %s, %d GPUs x %d replica%s, %s, %s", k + 1, dis ? "disaggregated" : "aggregated", pt.world(), pt.replicas,
                pt.replicas == 1 ? "" : "s", st.plan.search_hardware[row.group].c_str(), moe::serving_engine_name(s.request().engine));
    ImGui::Text("%s output tokens/s per GPU, %s tokens/s per user", fmt::number(r.output_tokens_per_s_per_gpu, 4).c_str(),
                fmt::number(r.tokens_per_s_per_user, 4).c_str());
    ImGui::Text("TTFT %s (%s waiting), TPOT %s", fmt::time_ms(r.ttft_ms).c_str(), fmt::time_ms(r.ttft_queue_ms).c_str(),
                fmt::time_ms(r.tpot_ms).c_str());
    if (r.ttft_ms_p90 > 0 || r.tpot_ms_p90 > 0)
        ImGui::Text("band's p90: TTFT %s, TPOT %s", fmt::time_ms(r.ttft_ms_p90).c_str(), fmt::time_ms(r.tpot_ms_p90).c_str());
    if (moe::plan_ttft_mostly_queueing(r)) ImGui::TextColored(theme::vec(theme::kWarn), "%s", moe::plan_queue_note(r).c_str());
    ImGui::Text("%s%s, batch %d per DP rank (%d in flight per worker), MTP %d, weights %s, KV %s, two-batch overlap %s",
                dis ? (std::to_string(pt.decode_workers) + " decode worker(s) of ").c_str() : "",
                layout_text(pt.tp, pt.dp, pt.ep, pt.pp).c_str(), pt.batch, pt.batch * pt.dp, int(pt.mtp),
                moe::plan_weights_text(s.base(), pt.weights).c_str(), moe::plan_kv_text(pt.kv_cache).c_str(),
                pt.two_batch_overlap ? "on" : "off");
    if (dis) ImGui::Text("%d prefill worker(s) of %s", int(pt.prefill_workers), layout_text(pt.prefill_tp, pt.prefill_dp, pt.prefill_ep, 1).c_str());
    ImGui::TextDisabled("click: load it into the calculator; its launch command is under the table");
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

// A typed number (0 = no limit); true when the user finished an edit.
bool limit_input(AppState& st, const char* id, const char* label, double& value, const char* help,
                 const char* unset = "none") {
    form_label(label);
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - theme::px(26));
    ImGui::InputDouble(id, &value, 0, 0, value > 0 ? "%g" : unset, ImGuiInputTextFlags_AutoSelectAll);
    record_last_item(st, std::string("plan.") + (id + 2));
    const bool done = ImGui::IsItemDeactivatedAfterEdit();
    if (done && !(value >= 0 && std::isfinite(value))) value = 0;
    help_marker(help);
    return done;
}

bool check(AppState& st, const char* label, const char* name, bool& value, const char* help) {
    const bool changed = ImGui::Checkbox(label, &value);
    record_last_item(st, name);
    help_marker(help);
    return changed;
}

// --sla-at mean|p90: which of the model's numbers the limits hold at (two radio buttons on one line)
bool sla_at_radios(AppState& st, PlanSettings& p) {
    bool changed = false;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("SLA at");
    for (const bool p90 : {false, true}) {
        ImGui::SameLine();
        if (ImGui::RadioButton(p90 ? "p90##plan_sla_at" : "mean##plan_sla_at", p.sla_p90 == p90) && p.sla_p90 != p90)
            p.sla_p90 = p90, changed = true;
        record_last_item(st, std::string("plan.sla_at=") + (p90 ? "p90" : "mean"));
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s", p90 ? "The limits hold at the high end of the band (serving.ttft_ms_p90, serving.tpot_ms_p90): as if "
                                          "the engine ran as slow as its 90th-percentile held-out miss (moe-roofline plan --sla-at p90; "
                                          "an engine without a band is checked at its mean)."
                                        : "The limits hold at the model's numbers (moe-roofline plan --sla-at mean).");
    }
    return changed;
}

// plan --hardware ID,...: GPU presets, each a search of its own; none chosen: the scenario's GPU (shown ticked). A
// click on a preset adds it, on a ticked one removes it.
bool hardware_multi_select(AppState& st, PlanSettings& p) {
    bool changed = false;
    const std::vector<std::string> chosen = plan_hardware(st);
    std::string preview;
    for (const std::string& id : chosen) preview += (preview.empty() ? "" : ", ") + (id.empty() ? std::string("custom GPU") : id);
    if (p.hardware.empty()) preview += " (scenario's)";
    preview = "GPUs: " + preview;
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - theme::px(26));
    const bool open = ImGui::BeginCombo("##plan_hardware", preview.c_str(), ImGuiComboFlags_HeightLarge);
    const ImVec2 fmin = ImGui::GetItemRectMin(), fmax = ImGui::GetItemRectMax();
    if (open) {
        for (const moe::CatalogEntry& e : st.catalog->hardware()) {
            const bool on = std::find(chosen.begin(), chosen.end(), e.id) != chosen.end();
            if (ImGui::Selectable(e.id.c_str(), on)) {  // one GPU ticked or unticked per opening
                // the catalog's order, each once; none left: back to the scenario's own
                std::vector<std::string> next;
                for (const moe::CatalogEntry& c : st.catalog->hardware()) {
                    const bool was = std::find(chosen.begin(), chosen.end(), c.id) != chosen.end();
                    if (c.id == e.id ? !was : was) next.push_back(c.id);
                }
                p.hardware = next;
                changed = true;
            }
            record_last_item(st, "plan.hardware=" + e.id);
        }
        ImGui::EndCombo();
    }
    record_rect(st, "plan.hardware", fmin, fmax);
    help_marker("The GPU types to compare (moe-roofline plan --hardware a,b): one search per GPU and engine, one front, "
                "each row naming its GPU. None chosen: the scenario's GPU.");
    return changed;
}

// plan --engine a,b: the engines whose constants and launch commands the plan compares; none: the scenario's
bool engine_checkboxes(AppState& st, PlanSettings& p) {
    bool changed = false;
    const std::vector<moe::ServingEngine> chosen = plan_engines(st);
    const moe::ServingEngine all[] = {moe::ServingEngine::sglang, moe::ServingEngine::vllm, moe::ServingEngine::trtllm};
    for (moe::ServingEngine e : all) {
        bool on = std::find(chosen.begin(), chosen.end(), e) != chosen.end();
        if (e != all[0]) ImGui::SameLine();
        const std::string label = std::string(moe::serving_engine_name(e)) + "##plan_engine";
        if (ImGui::Checkbox(label.c_str(), &on)) {
            std::vector<moe::ServingEngine> next;
            for (moe::ServingEngine x : all)
                if (x == e ? on : std::find(chosen.begin(), chosen.end(), x) != chosen.end()) next.push_back(x);
            p.engines = next;
            changed = true;
        }
        record_last_item(st, std::string("plan.engine.") + moe::serving_engine_name(e));
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("The engines to compare (moe-roofline plan --engine sglang,vllm): each one's serving constants and "
                              "launch commands. None ticked: the scenario's runtime.engine (ideal: SGLang's commands).");
    }
    return changed;
}

void draw_plan_controls(AppState& st) {
    PlanState& pl = st.plan;
    PlanSettings& p = pl.settings;
    const moe::Scenario& s = st.scenario;
    bool edited = false;

    section_title("Budget and SLA");
    form_label("GPUs");
    {
        const float bw = ImGui::GetFrameHeight();
        if (ImGui::Button("\u2212##plan_gpus", ImVec2(bw, 0)) && p.gpus > 1) p.gpus /= 2, edited = true;
        record_last_item(st, "plan.gpus.minus");
        ImGui::SameLine(0, theme::px(2));
        ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - bw - theme::px(4));
        int g = p.gpus;
        ImGui::InputInt("##gpus", &g, 0, 0, ImGuiInputTextFlags_AutoSelectAll);
        record_last_item(st, "plan.gpus");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("The GPU budget: every layout whose GPUs divide it, the rest of the budget running replicas of it.");
        if (ImGui::IsItemDeactivatedAfterEdit()) {
            p.gpus = std::clamp(g, 1, 65536);
            edited = true;
        } else if (ImGui::IsItemActive()) {
            p.gpus = std::clamp(g, 1, 65536);
        }
        ImGui::SameLine(0, theme::px(2));
        if (ImGui::Button("+##plan_gpus", ImVec2(bw, 0)) && p.gpus < 65536) p.gpus *= 2, edited = true;
        record_last_item(st, "plan.gpus.plus");
    }
    // The page's plan always runs the serving layer (plan_base: the Workload's lengths as the requests when serving
    // is off), so the serving default TTFT limit always applies, as `moe-roofline plan` applies it to that base.
    const bool serving_on = plan_base(s, p).serving.mode != moe::ServingMode::off;
    edited |= limit_input(st, "##ttft_ms", "TTFT \u2264 ms", p.ttft_ms,
                          serving_on ? "Time to first token under load (serving.ttft_ms); left empty: 10000 ms, the serving default "
                                       "(moe-roofline plan's too: a deployment whose first token takes longer is not an interactive service)."
                                     : "Time to first token under load (serving.ttft_ms); none: no limit.",
                          serving_on ? "10 s" : "none");
    edited |= limit_input(st, "##tpot_ms", "TPOT \u2264 ms", p.tpot_ms, "Time per output token under load (serving.tpot_ms); none: no limit.");
    edited |= limit_input(st, "##min_user", "tokens/s/user \u2265", p.min_tokens_per_s_per_user,
                          "Output tokens per second each user sees at least (serving.tokens_per_s_per_user); none: no limit.");
    edited |= sla_at_radios(st, p);

    ImGui::Spacing();
    section_title("Search space");
    edited |= hardware_multi_select(st, p);
    edited |= engine_checkboxes(st, p);
    edited |= check(st, "aggregated", "plan.aggregated", p.aggregated, "One layout serves prompts and decoding (continuous batching).");
    edited |= check(st, "disaggregated", "plan.disaggregated", p.disaggregated,
                    "Prefill workers and decode workers, each pool its own layout, prefill:decode worker ratios whose GPUs divide the budget.");
    if (!p.aggregated && !p.disaggregated) p.aggregated = true;
    edited |= check(st, "MTP draft tokens 0..3", "plan.mtp", p.mtp, "Multi-token prediction (models with MTP layers).");
    edited |= check(st, "weight and KV formats", "plan.formats", p.formats,
                    "The checkpoint's formats and the lower ones the GPU computes in (FP8, FP4), KV cache BF16 and FP8; off: the scenario's.");
    edited |= check(st, "two-batch overlap", "plan.overlap", p.overlap, "Two-batch overlap on and off (where experts are spread over GPUs).");
    if (edited) edit_plan_settings(st);

    ImGui::Spacing();
    ImGui::PushTextWrapPos(0.0f);
    const bool off = s.serving.mode == moe::ServingMode::off;
    // (the model is the calculator's; the GPUs and engines are the controls above)
    ImGui::TextDisabled("%d in / %d out tokens a request (%s)", off ? s.workload.prompt_len : s.serving.isl,
                        off ? s.workload.output_len : s.serving.osl, off ? "the Workload's prompt and output" : "Serving's ISL / OSL");
    ImGui::PopTextWrapPos();
    ImGui::Spacing();
    const bool running = pl.running;
    if (running) ImGui::BeginDisabled();
    if (ImGui::Button(!pl.searches.empty() ? "Run again" : "Run the plan", ImVec2(-1, theme::px(30)))) pl.run_requested = true;
    record_last_item(st, "plan.run");
    if (running) ImGui::EndDisabled();

    // progress and the counts
    if (!pl.searches.empty()) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s / %s points", fmt::number(double(pl.evaluated), 9).c_str(),
                      fmt::number(double(pl.points), 9).c_str());
        ImGui::ProgressBar(pl.points == 0 ? 1.0f : float(double(pl.evaluated) / double(pl.points)), ImVec2(-1, 0), buf);
        record_last_item(st, "plan.progress");
        if (!running) {
            const std::uint64_t* c = pl.counts;
            ImGui::PushTextWrapPos(0.0f);
            ImGui::TextDisabled("%s s (%s s computing). Front: %zu rows of %s candidates; %s do not fit, %s miss TTFT, "
                                "%s miss TPOT, %s below tokens/s per user, %s invalid.",
                                fmt::number(pl.wall_ms / 1000, 3).c_str(), fmt::number(pl.compute_ms / 1000, 3).c_str(),
                                pl.front.size(), fmt::number(double(c[int(moe::Verdict::candidate)]), 9).c_str(),
                                fmt::number(double(c[int(moe::Verdict::no_fit)]), 9).c_str(),
                                fmt::number(double(c[int(moe::Verdict::ttft)]), 9).c_str(),
                                fmt::number(double(c[int(moe::Verdict::tpot)]), 9).c_str(),
                                fmt::number(double(c[int(moe::Verdict::per_user)]), 9).c_str(),
                                fmt::number(double(c[int(moe::Verdict::error)]), 9).c_str());
            ImGui::PopTextWrapPos();
            if (!pl.front.empty()) {
                if (ImGui::Button("Export the front as CSV", ImVec2(-1, 0))) {
                    download(plan_filename(st) + ".csv", "text/csv", plan_front_csv(st, page_url_without_fragment()));
                    st.last_action = "plan:csv";
                }
                record_last_item(st, "plan.csv");
                if (ImGui::IsItemHovered())
                    ImGui::SetTooltip("The rows of moe-roofline plan --format csv for this search (base scenario, --space, SLA): "
                                      "numbers, launch commands, links.");
            }
        }
    }
    if (!pl.error.empty()) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextColored(theme::vec(theme::kBad), "%s", pl.error.c_str());
        ImGui::PopTextWrapPos();
    }
}

void draw_plan_chart(AppState& st, ImVec2 size) {
    PlanState& pl = st.plan;
    if (!begin_card(st, "chart.plan", size)) {
        end_card();
        return;
    }
    if (!plan_done(pl) || pl.front.empty()) {
        ImGui::PushFont(theme::fonts().bold);
        ImGui::TextUnformatted("Pareto front \u00b7 output tokens/s per GPU vs tokens/s per user");
        ImGui::PopFont();
        ImGui::TextDisabled("%s", pl.running ? "Searching\u2026" : !pl.searches.empty() ? "No deployment fits and meets the SLA." :
                                                                          "Set the budget and the SLA, then run the plan.");
        end_card();
        return;
    }
    auto xy = [&](const std::vector<PlanState::Dot>& dots, std::vector<double>& x, std::vector<double>& y) {
        x.resize(dots.size());
        y.resize(dots.size());
        for (std::size_t k = 0; k < dots.size(); ++k) {
            x[k] = dots[k].per_user;
            y[k] = dots[k].per_gpu;
        }
    };
    std::vector<double> cx, cy, ax, ay, dx, dy, fx(pl.front.size()), fy(pl.front.size());
    xy(pl.cloud, cx, cy);
    xy(pl.front_agg, ax, ay);
    xy(pl.front_disagg, dx, dy);
    for (std::size_t k = 0; k < pl.front.size(); ++k) {
        fx[k] = pl.front[k].result.tokens_per_s_per_user;
        fy[k] = pl.front[k].result.output_tokens_per_s_per_gpu;
    }
    std::vector<ImU32> cloud_colours(pl.cloud.size()), front_colours(pl.front.size());
    for (std::size_t k = 0; k < pl.cloud.size(); ++k)
        cloud_colours[k] = theme::with_alpha(pl.cloud[k].disaggregated ? kDisaggregated : kAggregated, 0.35f);
    for (std::size_t k = 0; k < pl.front.size(); ++k) front_colours[k] = mode_colour(pl.front[k].point);
    const PlanSettings& p = pl.settings;
    if (plot::begin_plot("##plan", ImVec2(-1, -1), "Pareto front \u00b7 output tokens/s per GPU vs tokens/s per user")) {
        plot::setup_axis(plot::Axis::x, "per user", plot::AxisFlags_ZeroMin, tick, "tokens/s");
        plot::setup_axis(plot::Axis::y, "output per GPU", plot::AxisFlags_ZeroMin, tick, "tokens/s");
        plot::setup_legend(plot::Legend::inside_ne);
        // The SLA: a TPOT limit is a floor on tokens/s per user (1000 / TPOT); the region left of it is shaded.
        double sla_x = 0;
        if (p.tpot_ms > 0) sla_x = 1000.0 / p.tpot_ms;
        sla_x = std::max(sla_x, p.min_tokens_per_s_per_user);
        if (ax.size() > 1) plot::plot_line("aggregated", ax.data(), ay.data(), int(ax.size()), theme::with_alpha(kAggregated, 0.7f), 1.5f, plot::ItemFlags_NoHover);
        else if (!ax.empty()) plot::legend_entry("aggregated", kAggregated);
        if (dx.size() > 1) plot::plot_line("disaggregated", dx.data(), dy.data(), int(dx.size()), theme::with_alpha(kDisaggregated, 0.7f), 1.5f, plot::ItemFlags_NoHover);
        else if (!dx.empty()) plot::legend_entry("disaggregated", kDisaggregated);
        if (sla_x > 0) {
            char label[64];
            if (p.tpot_ms > 0 && sla_x == 1000.0 / p.tpot_ms) std::snprintf(label, sizeof label, "SLA: TPOT \u2264 %g ms%s", p.tpot_ms, p.sla_p90 ? " (p90)" : "");
            else std::snprintf(label, sizeof label, "SLA: \u2265 %g tokens/s per user%s", p.min_tokens_per_s_per_user, p.sla_p90 ? " (p90)" : "");
            plot::plot_vline(label, sla_x, theme::kBad);
        }
        const int front = plot::plot_scatter("##front", fx.data(), fy.data(), int(fx.size()), kAggregated, 4.5f,
                                             plot::ItemFlags_CustomTooltip | plot::ItemFlags_NoLegend, nullptr, front_colours.data());
        if (pl.selected >= 0 && std::size_t(pl.selected) < fx.size())
            plot::plot_marker(fx[std::size_t(pl.selected)], fy[std::size_t(pl.selected)], theme::kText, 8);
        if (pl.hovered >= 0 && std::size_t(pl.hovered) < fx.size() && pl.hovered != pl.selected)  // a table row under the mouse
            plot::plot_marker(fx[std::size_t(pl.hovered)], fy[std::size_t(pl.hovered)], theme::kWarn, 7);
        if (const double ttft = moe::plan_ttft_limit_ms(plan_base(st.scenario, p), p.ttft_ms); ttft > 0) {
            char label[64];
            // (in seconds from 1 s: "TTFT \u2264 10 s (default)" keeps the legend inside a narrow chart)
            if (ttft >= 1000) std::snprintf(label, sizeof label, "and TTFT \u2264 %g s%s", ttft / 1000.0, p.ttft_ms > 0 ? "" : " (default)");
            else std::snprintf(label, sizeof label, "and TTFT \u2264 %g ms%s", ttft, p.ttft_ms > 0 ? "" : " (default)");
            plot::legend_entry(label, theme::kTextDim);
        }
        const plot::Hover h = plot::end_plot();
        {  // the other candidates as small squares (4 vertices each: scatter discs would overflow ImGui's 16-bit
           // indices at a few hundred points)
            const ImVec4 area = plot::plot_area();
            ImDrawList* dl = ImGui::GetWindowDrawList();
            dl->PushClipRect(ImVec2(area.x, area.y), ImVec2(area.z, area.w), true);
            const float r = theme::px(1.2f);
            for (std::size_t k = 0; k < cx.size(); ++k) {
                const ImVec2 c = plot::to_pixels(cx[k], cy[k]);
                dl->AddRectFilled(ImVec2(c.x - r, c.y - r), ImVec2(c.x + r, c.y + r), cloud_colours[k]);
            }
            dl->PopClipRect();
        }
        if (sla_x > 0) {  // shade what misses the per-user SLA
            const ImVec4 area = plot::plot_area();
            const float x1 = std::min(area.z, plot::to_pixels(sla_x, 0).x);
            if (x1 > area.x) ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(area.x, area.y), ImVec2(x1, area.w), theme::with_alpha(theme::kBad, 0.06f));
        }
        // the front's points for the browser tests (a click on one loads it)
        for (std::size_t k = 0; k < fx.size(); ++k) {
            const ImVec2 c = plot::to_pixels(fx[k], fy[k]);
            const float r = theme::px(3);
            record_rect(st, "plan.point." + std::to_string(k + 1), ImVec2(c.x - r, c.y - r), ImVec2(c.x + r, c.y + r));
        }
        if (h.item == front && h.index >= 0 && std::size_t(h.index) < pl.front.size()) {
            row_tooltip(st, std::size_t(h.index));
            if (ImGui::IsMouseClicked(0)) load_plan_row(st, h.index);
        }
    }
    end_card();
}

void draw_plan_table(AppState& st, float height) {
    PlanState& pl = st.plan;
    if (!plan_done(pl) || pl.front.empty()) return;
    // the GPU and engine columns when the plan searched more than one (plan --hardware / --engine lists)
    bool many_hw = false, many_engines = false;
    for (std::size_t g = 0; g < pl.searches.size(); ++g) {
        many_hw |= pl.search_hardware[g] != pl.search_hardware.front();
        many_engines |= pl.searches[g].request().engine != pl.searches.front().request().engine;
    }
    // Every column at its text's width; a narrow window scrolls the table sideways (none is cut).
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("plan_front", 13 + int(many_hw) + int(many_engines), flags, ImVec2(0, height))) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("#");
    if (many_hw) ImGui::TableSetupColumn("GPU");
    if (many_engines) ImGui::TableSetupColumn("engine");
    const char* headers[] = {"mode", "tok/s/GPU", "tok/s/user", "$/Mtok", "J/tok", "TTFT", "TPOT", "GPUs",
                             "layout (decode)", "batch", "mtp / weights / kv / tbo", "prefill pool"};
    for (const char* hd : headers) ImGui::TableSetupColumn(hd);
    ImGui::TableHeadersRow();
    int hovered = -1;
    for (std::size_t k = 0; k < pl.front.size(); ++k) {
        const moe::PlanFront::Row& row = pl.front[k];
        const moe::PlanSearch& s = plan_search_of(pl, row);
        const moe::ModelSpec& m = s.base().model;
        const moe::PlanPoint& p = row.point;
        const moe::PointResult& r = row.result;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        char id[32];
        std::snprintf(id, sizeof id, "%zu##plan_row", k + 1);
        if (ImGui::Selectable(id, pl.selected == int(k), ImGuiSelectableFlags_SpanAllColumns)) load_plan_row(st, int(k));
        record_last_item(st, "plan.row." + std::to_string(k + 1));
        if (ImGui::IsItemHovered()) {
            hovered = int(k);
            row_tooltip(st, k);
        }
        if (many_hw) {
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(pl.search_hardware[row.group].c_str());
            record_last_item(st, "plan.cell.hardware." + std::to_string(k + 1));
        }
        if (many_engines) {
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(moe::serving_engine_name(s.request().engine));
            record_last_item(st, "plan.cell.engine." + std::to_string(k + 1));
        }
        ImGui::TableNextColumn();
        const bool dis = p.mode == moe::PlanMode::disaggregated;
        ImGui::TextColored(theme::vec(mode_colour(p)), "%s", dis ? "disagg" : "agg");
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(fmt::number(r.output_tokens_per_s_per_gpu, 4).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(fmt::number(r.tokens_per_s_per_user, 4).c_str());
        ImGui::TableNextColumn();  // issue 28: USD per million output tokens at the GPU-hour price (none: a dash)
        if (r.usd_per_mtok > 0) ImGui::Text("$%s", fmt::number(r.usd_per_mtok, 3).c_str());
        else ImGui::TextDisabled("\u2014");
        ImGui::TableNextColumn();  // J per output token (finish_plan: the front rows' full evaluation)
        const double joules = k < pl.front_joules.size() ? pl.front_joules[k] : 0.0;
        if (joules > 0) ImGui::TextUnformatted(fmt::number(joules, 3).c_str());
        else ImGui::TextDisabled("\u2014");
        ImGui::TableNextColumn();
        if (moe::plan_ttft_mostly_queueing(r)) {  // issue 26: said on the row
            ImGui::TextColored(theme::vec(theme::kWarn), "%s queue", fmt::time_ms(r.ttft_ms).c_str());
            record_last_item(st, "plan.queueing." + std::to_string(k + 1));
        } else {
            ImGui::TextUnformatted(fmt::time_ms(r.ttft_ms).c_str());
        }
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(fmt::time_ms(r.tpot_ms).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%d x %d", p.world(), p.replicas);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted((dis ? std::to_string(p.decode_workers) + " x " : std::string()).append(layout_text(p.tp, p.dp, p.ep, p.pp)).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%d", p.batch);
        ImGui::TableNextColumn();
        const std::string auto_w = m.weight_dtype == m.expert_dtype ? moe::dtype_name(m.weight_dtype) : "ckpt";
        ImGui::Text("%d / %s / %s / %s", int(p.mtp), dtype_text(p.weights, auto_w.c_str()).c_str(), dtype_text(p.kv_cache, "auto").c_str(),
                    p.two_batch_overlap ? "on" : "off");
        ImGui::TableNextColumn();
        if (dis) ImGui::TextUnformatted((std::to_string(p.prefill_workers) + " x " + layout_text(p.prefill_tp, p.prefill_dp, p.prefill_ep, 1)).c_str());
        else ImGui::TextDisabled("\u2014");
        if (ImGui::TableGetColumnFlags() & ImGuiTableColumnFlags_IsVisible)  // (scrolled out of sight: not on screen)
            record_last_item(st, "plan.cell.prefill." + std::to_string(k + 1));
    }
    if (ImGui::GetScrollMaxX() != pl.table_scroll_max_x || ImGui::GetScrollX() != pl.table_scroll_x) {
        pl.table_scroll_max_x = ImGui::GetScrollMaxX();
        pl.table_scroll_x = ImGui::GetScrollX();
        st.publish_pending = true;
    }
    ImGui::EndTable();
    if (hovered != pl.hovered) {
        pl.hovered = hovered;
        st.publish_pending = true;
    }
}

// The launch command(s) of the selected row (else row 1), selectable text and a Copy button.
void draw_plan_command(AppState& st, float height) {
    PlanState& pl = st.plan;
    if (!plan_done(pl) || pl.front.empty()) return;
    const int k = pl.selected >= 0 ? pl.selected : 0;
    const std::string cmd = plan_row_commands(st, k);
    ImGui::BeginChild("plan_command", ImVec2(0, height), true);
    {
        const ImVec2 p = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
        record_rect(st, "plan.command", p, ImVec2(p.x + sz.x, p.y + sz.y));
    }
    // the title, shortened to the room the Copy button leaves (it never runs under the button)
    const float copy_w = ImGui::CalcTextSize("Copy").x + ImGui::GetStyle().FramePadding.x * 2;
    const float x0 = ImGui::GetCursorPosX();
    const float room = ImGui::GetContentRegionAvail().x - copy_w - ImGui::GetStyle().ItemSpacing.x;
    char title[160];
    std::snprintf(title, sizeof title, "Launch command of row #%d (%s)%s", k + 1,
                  moe::serving_engine_name(plan_search_of(pl, pl.front[std::size_t(k)]).request().engine),
                  pl.selected >= 0 ? "" : " \u00b7 click a row for its own");
    const std::string shown_title = elide_text(ImGui::GetFont(), ImGui::GetFontSize(), title, room);
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("%s", shown_title.c_str());
    log_text_item(shown_title.c_str());
    ImGui::SameLine(x0 + room + ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::Button("Copy")) {
        copy_to_clipboard(cmd);
        st.last_action = "plan:copy:" + std::to_string(k + 1);
        st.toast = "Launch command copied";
        st.toast_until = ImGui::GetTime() + 2.0;
        st.publish_pending = true;
    }
    record_last_item(st, "plan.copy");
    log_text_item("Copy");
    ImGui::PushFont(theme::fonts().small);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(cmd.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
    ImGui::EndChild();
}

}  // namespace

void draw_plan_tab(AppState& st) {
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const ImVec2 gap = ImGui::GetStyle().ItemSpacing;
    const float left = std::clamp(avail.x * 0.26f, theme::px(230), theme::px(300));
    const float h = std::max(theme::px(300), avail.y);
    ImGui::BeginChild("plan_controls", ImVec2(left, h), true);
    {
        const ImVec2 p = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
        record_rect(st, "panel.plan", p, ImVec2(p.x + sz.x, p.y + sz.y));
    }
    draw_plan_controls(st);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginGroup();
    const float w = avail.x - left - gap.x;
    const bool table = plan_done(st.plan) && !st.plan.front.empty();
    const float chart_h = table ? std::max(theme::px(260), h * 0.58f) : h;
    draw_plan_chart(st, ImVec2(w, chart_h));
    if (table) {
        const float command_h = theme::px(96);
        const float table_h = std::max(theme::px(60), h - chart_h - command_h - 2 * gap.y);
        ImGui::BeginChild("plan_table", ImVec2(w, table_h), false);
        {
            const ImVec2 p = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
            record_rect(st, "table.plan", p, ImVec2(p.x + sz.x, p.y + sz.y));
        }
        draw_plan_table(st, table_h);
        ImGui::EndChild();
        ImGui::BeginChild("plan_command_box", ImVec2(w, command_h), false);
        draw_plan_command(st, command_h);
        ImGui::EndChild();
    }
    ImGui::EndGroup();
}

}  // namespace web
