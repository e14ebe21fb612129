// panels_results.cpp — what the model says: headline numbers with a provenance badge (and, when serving is on, a
// row of deployment-level cards above them: TTFT and TPOT under load with their parts as a stacked bar, output
// tokens/s per GPU, per user, request latency, GPUs), then tabs: the overview charts (panels_charts.cpp), the
// Serving charts, the A/B comparison, every operator, and every output column with its exact value.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "format.h"
#include "panels.h"
#include "text_log.h"
#include "theme.h"
#include "widgets.h"

namespace web {

namespace {

double column_value(const moe::Estimate& e, const char* name) {
    const moe::Column* c = moe::find_column(name);
    return c && c->number ? c->number(e) : std::nan("");
}

// "1,149" + "ms", or "2.30" + "s" for long times.
void split_time(double ms, std::string& number, std::string& unit) {
    if (!std::isfinite(ms)) {
        number = "\u2014";
        unit = "";
    } else if (ms >= 10000) {
        number = fmt::number(ms / 1000, 3);
        unit = "s";
    } else {
        number = fmt::number(ms, ms >= 100 ? 4 : 3);
        unit = "ms";
    }
}

// A part of a card's number, drawn as a segment of a thin stacked bar along the card's bottom edge.
struct CardPart {
    const char* column;
    const char* label;
    ImU32 colour;
};

struct Card {
    const char* caption;
    std::string value, unit, sub;
    std::string band_p10, band_p90;  // the band's ends in the value's unit (issue 28)
    ImU32 sub_colour = theme::kTextDim;
    ImU32 value_colour = theme::kText;
    const char* help = nullptr;
    std::vector<CardPart> parts;
};

// Delta of B against A for a card's sub line: "A 1,020 ms · +12.6%" (green when better).
void compare_sub(Card& c, const AppState& st, const char* column, bool higher_is_better, const std::string& a_text,
                 const moe::Estimate* a_est = nullptr, const moe::Estimate* b_est = nullptr) {
    if (!st.a.active) return;
    const double a = column_value(a_est ? *a_est : st.a.estimate, column), b = column_value(b_est ? *b_est : st.estimate, column);
    if (!std::isfinite(a) || !std::isfinite(b) || a == 0) {
        c.sub = "A: " + a_text;
        c.sub_colour = theme::kPinned;
        return;
    }
    const double d = b / a - 1;
    c.sub = "A " + a_text + "  " + fmt::signed_percent(d);
    const bool better = higher_is_better ? d > 0.0005 : d < -0.0005;
    const bool worse = higher_is_better ? d < -0.0005 : d > 0.0005;
    c.sub_colour = better ? theme::kGood : worse ? theme::kBad : theme::kTextDim;
}

// A card: caption, number and unit, and a line under them, each kept inside the card (issue 26: nothing cut at
// 1280x720 or 800x600): a long caption or line is shortened with an ellipsis, a wide number and unit shrink.
void draw_card(ImDrawList* dl, ImVec2 p, ImVec2 size, const Card& c) {
    const theme::Fonts& f = theme::fonts();
    dl->AddRectFilled(p, ImVec2(p.x + size.x, p.y + size.y), theme::kPanel, theme::px(6));
    dl->AddRect(p, ImVec2(p.x + size.x, p.y + size.y), theme::kPanelBorder, theme::px(6));
    const float pad = theme::px(10);
    const float inner = size.x - 2 * pad;
    dl->PushClipRect(ImVec2(p.x + 1, p.y + 1), ImVec2(p.x + size.x - pad * 0.5f, p.y + size.y - 1), true);
    float y = p.y + theme::px(7);
    draw_text(dl, f.small, f.small->FontSize, ImVec2(p.x + pad, y), theme::kTextDim,
              elide_text(f.small, f.small->FontSize, c.caption, inner).c_str());
    y += f.small->FontSize + theme::px(3);
    // the number and its unit: the headline size, or smaller until both fit
    const float gap = theme::px(5);
    float hs = f.headline->FontSize, us = f.body->FontSize;
    const float vw0 = f.headline->CalcTextSizeA(hs, 1e9f, 0, c.value.c_str()).x;
    const float uw0 = f.body->CalcTextSizeA(us, 1e9f, 0, c.unit.c_str()).x;
    if (vw0 + gap + uw0 > inner && vw0 > 0) {  // the unit down to 75%, the number takes what is left (down to 55%)
        const float k = std::max(0.75f, inner / (vw0 + gap + uw0));
        us *= k;
        hs *= std::clamp((inner - gap - uw0 * k - theme::px(3)) / vw0, 0.55f, 1.0f);  // (3 px: glyph rounding)
    }
    const float vw = f.headline->CalcTextSizeA(hs, 1e9f, 0, c.value.c_str()).x;
    const float base = y + f.headline->FontSize;  // the number's baseline stays where it was
    draw_text(dl, f.headline, hs, ImVec2(p.x + pad, base - hs), c.value_colour, c.value.c_str());
    draw_text(dl, f.body, us, ImVec2(p.x + pad + vw + gap, base - us - theme::px(2)), theme::kTextDim,
              elide_text(f.body, us, c.unit, std::max(0.0f, inner - vw - gap)).c_str());
    y += f.headline->FontSize + theme::px(4);
    draw_text(dl, f.small, f.small->FontSize, ImVec2(p.x + pad, y), c.sub_colour, elide_text(f.small, f.small->FontSize, c.sub, inner).c_str());
    dl->PopClipRect();
}

// The six cards' positions: one row, or two rows of three in a narrow window.
struct CardGrid {
    ImVec2 p0;
    float w = 0, h = 0, gap = 0;
    int per_row = 6;
    ImVec2 at(int i) const { return ImVec2(p0.x + float(i % per_row) * (w + gap), p0.y + float(i / per_row) * (h + gap)); }
    float height() const { return per_row == 6 ? h : 2 * h + gap; }
};

CardGrid card_grid() {
    CardGrid g;
    g.gap = ImGui::GetStyle().ItemSpacing.x;
    const float W = ImGui::GetContentRegionAvail().x;
    g.h = theme::px(80);
    g.per_row = W / theme::px(1) < 820 ? 3 : 6;  // narrow windows: two rows of three
    g.w = (W - g.gap * float(g.per_row - 1)) / float(g.per_row);
    g.p0 = ImGui::GetCursorScreenPos();
    return g;
}

// A stacked bar of the card's parts (their shares of the sum) along the bottom of the card at p.
void draw_parts_bar(ImDrawList* dl, ImVec2 p, ImVec2 size, const Card& c, const moe::Estimate& e) {
    double total = 0;
    for (const CardPart& part : c.parts) total += std::max(0.0, column_value(e, part.column));
    if (!(total > 0)) return;
    const float x0 = p.x + theme::px(10), bw = size.x - theme::px(20), y = p.y + size.y - theme::px(9);
    float x = x0;
    for (const CardPart& part : c.parts) {
        const float ww = static_cast<float>(std::max(0.0, column_value(e, part.column)) / total) * bw;
        if (ww > 0) dl->AddRectFilled(ImVec2(x, y), ImVec2(x + ww, y + theme::px(4)), part.colour);
        x += ww;
    }
}

// Deployment-level cards (DESIGN §8.2), shown above the step-level ones when serving is on.
void draw_serving_cards(AppState& st) {
    const moe::Estimate& e = st.estimate;
    const moe::Scenario& s = st.scenario;
    const moe::ServingResult& r = e.serving;
    const bool ok = e.ok && r.computed;
    const bool disagg = s.serving.mode == moe::ServingMode::disaggregated;
    std::vector<Card> cards(6);
    const char* names[6] = {"card.serving.ttft", "card.serving.tpot", "card.serving.gpu", "card.serving.user",
                            "card.serving.latency", "card.serving.gpus"};
    std::string n, u;

    Card& ttft = cards[0];
    ttft.caption = "TTFT under load";
    ttft.help = "serving.ttft_ms";
    split_time(ok ? r.ttft_ms : std::nan(""), ttft.value, ttft.unit);
    ttft.parts = {{"serving.ttft_prefill_ms", "own prefill", theme::kCompute},
                  {"serving.ttft_queue_ms", "queue", theme::kQueue},
                  {"serving.ttft_first_wave_ms", "first wave", theme::lighten(theme::kQueue, 0.45f)},
                  {"serving.ttft_overhead_ms", "engine overhead", theme::kLatency}};
    if (disagg) ttft.parts.push_back({"serving.kv_transfer_ms", "KV transfer", theme::kComm});
    if (ok) {
        // the bar and the tooltip give every part; the line names what dominates besides the request's own prefill
        const double wait = r.ttft_queue_ms + r.ttft_first_wave_ms;
        if (wait >= r.kv_transfer_ms && wait > 0) ttft.sub = "incl. " + fmt::time_ms(wait) + " waiting";
        else if (r.kv_transfer_ms > 0) ttft.sub = "incl. " + fmt::time_ms(r.kv_transfer_ms) + " KV transfer";
        else ttft.sub = "own prefill " + fmt::time_ms(r.ttft_prefill_ms);
    }
    split_time(column_value(st.a.estimate, "serving.ttft_ms"), n, u);
    compare_sub(ttft, st, "serving.ttft_ms", false, n + " " + u);

    Card& tpot = cards[1];
    tpot.caption = "TPOT under load";
    tpot.help = "serving.tpot_ms";
    split_time(ok ? r.tpot_ms : std::nan(""), tpot.value, tpot.unit);
    tpot.parts = {{"serving.tpot_decode_ms", "decode step", theme::kTpot},
                  {"serving.tpot_prefill_ms", "interleaved prefill", theme::kCompute},
                  {"serving.tpot_preempt_ms", "preempted (memory)", theme::kMemory}};
    if (ok)
        tpot.sub = r.tpot_preempt_ms > 0   ? "incl. " + fmt::time_ms(r.tpot_preempt_ms) + " preempted"
                   : r.tpot_prefill_ms > 0 ? "incl. " + fmt::time_ms(r.tpot_prefill_ms) + " prefill"
                                           : "decode steps only";
    split_time(column_value(st.a.estimate, "serving.tpot_ms"), n, u);
    compare_sub(tpot, st, "serving.tpot_ms", false, n + " " + u);

    Card& gpu = cards[2];
    gpu.caption = "Serving throughput";
    gpu.help = "serving.output_tokens_per_s_per_gpu";
    gpu.value = ok ? fmt::number(r.output_tokens_per_s_per_gpu, 4) : "\u2014";
    gpu.unit = "tok/s/GPU";
    if (ok) gpu.sub = fmt::number(r.requests_per_s, 3) + " requests/s";
    compare_sub(gpu, st, "serving.output_tokens_per_s_per_gpu", true,
                fmt::number(column_value(st.a.estimate, "serving.output_tokens_per_s_per_gpu"), 4));

    Card& user = cards[3];
    user.caption = "Per user under load";
    user.help = "serving.tokens_per_s_per_user";
    user.value = ok ? fmt::number(r.tokens_per_s_per_user, 3) : "\u2014";
    user.unit = "tok/s";
    const int ranks = disagg ? s.serving.decode.workers * s.serving.decode.parallel.dp : s.parallel.dp;
    if (ok) user.sub = "running " + fmt::number(r.running_batch, 3) + " \u00d7 DP " + std::to_string(ranks);
    compare_sub(user, st, "serving.tokens_per_s_per_user", true, fmt::number(column_value(st.a.estimate, "serving.tokens_per_s_per_user"), 3));

    Card& lat = cards[4];
    lat.caption = "Request latency";
    lat.help = "serving.e2e_latency_ms";
    split_time(ok ? r.e2e_latency_ms : std::nan(""), lat.value, lat.unit);
    lat.sub = s.serving.trace.on()
                  ? "trace: " + fmt::number(std::round(s.serving.mean_isl())) + " in \u2192 " + fmt::number(std::round(s.serving.mean_osl())) +
                        " out (mean)"
              : s.serving.sessions.on()
                  ? fmt::number(std::round(s.serving.mean_isl())) + " in (mean turn) \u2192 " + fmt::number(s.serving.osl) + " out"
                  : fmt::number(s.serving.isl) + " in \u2192 " + fmt::number(s.serving.osl) + " out";
    split_time(column_value(st.a.estimate, "serving.e2e_latency_ms"), n, u);
    compare_sub(lat, st, "serving.e2e_latency_ms", false, n + " " + u);

    Card& dep = cards[5];
    dep.caption = disagg ? "GPUs \u00b7 disaggregated" : "GPUs \u00b7 aggregated";
    dep.help = "serving.gpus";
    dep.value = ok ? fmt::number(r.gpus) : "\u2014";
    dep.unit = ok && r.gpus == 1 ? "GPU" : "GPUs";
    if (ok) {
        dep.value_colour = r.fits ? theme::kText : theme::kBad;
        dep.sub = std::string(r.fits ? "\u2713 fits" : "\u2717 KV does not fit") + (*r.bound ? std::string(", ") + r.bound + "-bound" : "");
        dep.sub_colour = r.fits ? theme::kGood : theme::kBad;
    }

    // issue 28: the p10 .. p90 band from the engine's held-out residuals, in the card's own unit
    if (ok && r.has_band && !st.a.active) {
        auto time_in = [](double ms, const std::string& unit) {
            return unit == "s" ? fmt::number(ms / 1000, 3) : fmt::number(ms, 3);  // 3 digits: the line fits the card
        };
        // a band that reaches 10 s puts its card in seconds too: "p10 4.48 – p90 14.1" where milliseconds were cut
        for (auto [c, mean, hi] : {std::tuple{&ttft, r.ttft_ms, r.ttft_ms_p90}, std::tuple{&tpot, r.tpot_ms, r.tpot_ms_p90}})
            if (c->unit == "ms" && hi >= 10000) {
                c->value = fmt::number(mean / 1000, 3);
                c->unit = "s";
            }
        ttft.band_p10 = time_in(r.ttft_ms_p10, ttft.unit);
        ttft.band_p90 = time_in(r.ttft_ms_p90, ttft.unit);
        tpot.band_p10 = time_in(r.tpot_ms_p10, tpot.unit);
        tpot.band_p90 = time_in(r.tpot_ms_p90, tpot.unit);
        gpu.band_p10 = fmt::number(r.output_tokens_per_s_per_gpu_p10, 3);
        gpu.band_p90 = fmt::number(r.output_tokens_per_s_per_gpu_p90, 3);
        for (Card* c : {&ttft, &tpot, &gpu}) {
            c->sub = "p10 " + c->band_p10 + " \u2013 p90 " + c->band_p90;  // in the value's unit, shown above
            c->sub_colour = theme::kTextDim;
        }
    }
    if (!e.ok) {
        for (Card& c : cards) {
            c.sub = "invalid scenario";
            c.sub_colour = theme::kBad;
        }
    }
    const CardGrid g = card_grid();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (int i = 0; i < 6; ++i) {
        const Card& c = cards[size_t(i)];
        const ImVec2 p = g.at(i);
        draw_card(dl, p, ImVec2(g.w, g.h), c);
        if (ok) draw_parts_bar(dl, p, ImVec2(g.w, g.h), c, e);
        ImGui::SetCursorScreenPos(p);
        ImGui::InvisibleButton(names[i], ImVec2(g.w, g.h));
        record_last_item(st, names[i]);
        const std::size_t cut = c.value.find(' ');
        st.cards[names[i]] = {c.help, c.value.substr(0, cut), c.unit, c.unit == "s" ? 1000.0 : 1.0, c.sub, c.band_p10, c.band_p90};
        if (!ImGui::IsItemHovered()) continue;
        const moe::Column* col = moe::find_column(c.help);
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28);
        ImGui::Text("%s: %s %s", c.caption, c.value.c_str(), c.unit.c_str());
        if (!c.sub.empty()) ImGui::TextDisabled("%s", c.sub.c_str());
        ImGui::TextUnformatted(col ? col->help : "");
        ImGui::TextDisabled("%s = %s", c.help, col ? moe::format_value(*col, e).c_str() : "");
        if (!c.parts.empty()) {
            ImGui::Spacing();
            for (const CardPart& part : c.parts) {
                const moe::Column* pc = moe::find_column(part.column);
                ImGui::TextColored(theme::vec(part.colour), "\u25A0");
                ImGui::SameLine();
                ImGui::Text("%s %s", part.label, fmt::time_ms(column_value(e, part.column)).c_str());
                ImGui::SameLine();
                ImGui::TextDisabled("%s", part.column);
                if (pc && pc->help) {
                    ImGui::Indent(ImGui::GetFontSize() * 1.2f);
                    ImGui::TextDisabled("%s", pc->help);
                    ImGui::Unindent(ImGui::GetFontSize() * 1.2f);
                }
            }
        }
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
    ImGui::SetCursorScreenPos(ImVec2(g.p0.x, g.p0.y + g.height() + ImGui::GetStyle().ItemSpacing.y));
}

void draw_headline(AppState& st) {
    st.cards.clear();
    if (serving_on(st.scenario)) draw_serving_cards(st);
    // With serving on these are the serving workload's steps (ISL / OSL, the running batch, the decode pool's
    // layout), labelled as such; the fit verdict is the deployment's, on its GPUs card (one verdict per screen).
    const moe::Estimate& e = shown_estimate(st);
    const moe::Scenario& s = shown_scenario(st);
    const bool serving = st.steps.on;
    const bool disagg = serving && st.steps.disaggregated;
    const moe::Estimate& ea = st.a.steps.on ? st.a.steps.estimate : st.a.estimate;
    const moe::Estimate& pe = disagg ? st.steps.prefill : e;  // the prefill step: a prefill worker's when disaggregated
    const moe::Estimate& pea = st.a.steps.on && st.a.steps.disaggregated ? st.a.steps.prefill : ea;
    std::vector<Card> cards(6);
    std::string n, u;
    // requests of mixed lengths (workload.prompt_lens / context_lens): one forward holds every prompt, the batch is
    // the contexts' count
    const int batch = s.workload.context_lens.empty() ? s.workload.batch : int(s.workload.context_lens.size());

    Card& ttft = cards[0];
    ttft.caption = !serving ? "Time to first token" : disagg ? "Step TTFT, prefill worker" : "Step TTFT, one prompt";
    ttft.help = "prefill.ttft_ms";
    split_time(pe.prefill.computed ? pe.prefill.ttft_ms : std::nan(""), ttft.value, ttft.unit);
    if (pe.prefill.computed) {
        const int forwards = !s.workload.prompt_lens.empty() ? 1
                             : static_cast<int>(std::ceil(double(s.workload.prompt_len) / std::max(1, s.workload.prefill_tokens)));
        ttft.sub = std::to_string(forwards) + " \u00d7 " + fmt::time_ms(pe.prefill.step_ms) + (serving ? ", no queue" : " forward");
    } else {
        ttft.sub = "prefill not computed";
    }
    split_time(column_value(pea, "prefill.ttft_ms"), n, u);
    compare_sub(ttft, st, "prefill.ttft_ms", false, n + " " + u, &pea, &pe);

    Card& tpot = cards[1];
    char caption[64];
    std::snprintf(caption, sizeof caption, "Step TPOT, batch %d", batch);
    tpot.caption = serving ? caption : "Time per output token";
    tpot.help = "decode.tpot_ms";
    split_time(e.decode.computed ? e.decode.tpot_ms : std::nan(""), tpot.value, tpot.unit);
    if (e.decode.computed) {
        tpot.sub = "step " + fmt::time_ms(e.decode.step_ms);
        if (e.decode.tokens_per_step > batch + 1e-9)
            tpot.sub += std::string(s.runtime.speculative.method == moe::SpecMethod::mtp ? ", MTP \u00d7" : ", spec \u00d7") +
                        fmt::number(e.decode.tokens_per_step / batch, 3);
        if (serving) tpot.sub += ", no prefill";
    } else {
        tpot.sub = "decode not computed";
    }
    split_time(column_value(ea, "decode.tpot_ms"), n, u);
    compare_sub(tpot, st, "decode.tpot_ms", false, n + " " + u, &ea, &e);

    Card& gpu = cards[2];
    gpu.caption = serving ? "Step decode" : "Decode throughput";
    gpu.help = "decode.tokens_per_s_per_gpu";
    gpu.value = e.decode.computed ? fmt::number(e.decode.tokens_per_s_per_gpu, 4) : "\u2014";
    gpu.unit = "tok/s/GPU";
    gpu.sub = pe.prefill.computed ? "prefill " + fmt::si(pe.prefill.tokens_per_s_per_gpu) + " tok/s/GPU" : "";
    compare_sub(gpu, st, "decode.tokens_per_s_per_gpu", true, fmt::number(column_value(ea, "decode.tokens_per_s_per_gpu"), 4), &ea, &e);

    Card& user = cards[3];
    user.caption = serving ? "Step per user" : "Per user";
    user.help = "decode.tokens_per_s_per_user";
    user.value = e.decode.computed ? fmt::number(e.decode.tokens_per_s_per_user, 3) : "\u2014";
    user.unit = "tok/s";
    user.sub = "batch " + std::to_string(batch) + " \u00d7 DP " + std::to_string(s.parallel.dp);
    compare_sub(user, st, "decode.tokens_per_s_per_user", true, fmt::number(column_value(ea, "decode.tokens_per_s_per_user"), 3), &ea, &e);

    Card& mem = cards[4];
    mem.caption = !serving ? "Memory per GPU" : disagg ? "Memory, decode worker" : "Memory per GPU, step";
    mem.help = "memory.total_bytes";
    if (e.ok) {
        mem.value = fmt::number(e.memory.total_bytes / 1e9, 3);
        mem.unit = "/ " + fmt::number(e.memory.usable_bytes / 1e9, 3) + " GB";
        if (serving) {  // no second verdict: the deployment's is on its GPUs card
            mem.sub = "max batch " + fmt::number(e.memory.max_batch) + " per rank";
        } else {
            mem.value_colour = e.memory.fits ? theme::kText : theme::kBad;
            mem.sub = std::string(e.memory.fits ? "\u2713 fits" : "\u2717 too big") + ", max batch " + fmt::number(e.memory.max_batch);
            mem.sub_colour = e.memory.fits ? theme::kGood : theme::kBad;
        }
    } else {
        mem.value = "\u2014";
    }
    if (st.a.active && e.ok) compare_sub(mem, st, "memory.total_bytes", false, fmt::bytes(ea.memory.total_bytes), &ea, &e);

    Card& prov = cards[5];
    const moe::Phase ph = shown_phase(st);
    const moe::PhaseResult& pr = ph == moe::Phase::prefill ? e.prefill : e.decode;
    prov.caption = ph == moe::Phase::prefill ? "Kernel data (prefill)" : "Kernel data (decode)";
    prov.help = nullptr;
    if (pr.computed) {
        prov.value = fmt::percent(pr.share_measured + pr.share_interpolated);
        prov.unit = "measured";
        const bool more_transferred = pr.share_transferred >= pr.share_analytical;
        prov.sub = fmt::percent(more_transferred ? pr.share_transferred : pr.share_analytical) +
                   (more_transferred ? " transferred" : " analytical");
    } else {
        prov.value = "\u2014";
    }

    if (!e.ok) {
        for (Card& c : cards) {
            c.sub = "invalid scenario";
            c.sub_colour = theme::kBad;
        }
    }
    const float gap = ImGui::GetStyle().ItemSpacing.x;
    const float W = ImGui::GetContentRegionAvail().x;
    const float h = theme::px(80);
    const int per_row = W / theme::px(1) < 820 ? 3 : 6;  // narrow windows: two rows of three
    const float w = (W - gap * float(per_row - 1)) / float(per_row);
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (int i = 0; i < 6; ++i) {
        const ImVec2 p(p0.x + float(i % per_row) * (w + gap), p0.y + float(i / per_row) * (h + gap));
        draw_card(dl, p, ImVec2(w, h), cards[size_t(i)]);
        ImGui::SetCursorScreenPos(p);
        ImGui::InvisibleButton((std::string("##stepcard") + std::to_string(i)).c_str(), ImVec2(w, h));
        record_last_item(st, std::string("card.") + std::to_string(i));
        if (cards[size_t(i)].help) {
            const Card& c = cards[size_t(i)];
            const std::size_t cut = c.value.find(' ');
            const double scale = c.unit == "s" ? 1000.0 : std::string_view(c.help) == "memory.total_bytes" ? 1e9 : 1.0;
            st.cards["card." + std::to_string(i)] = {c.help, c.value.substr(0, cut), c.unit, scale, c.sub, "", ""};
        }
        if (ImGui::IsItemHovered()) {
            ImGui::BeginTooltip();
            ImGui::PushTextWrapPos(ImGui::GetFontSize() * 26);
            ImGui::Text("%s: %s %s", cards[size_t(i)].caption, cards[size_t(i)].value.c_str(), cards[size_t(i)].unit.c_str());
            if (!cards[size_t(i)].sub.empty()) ImGui::TextDisabled("%s", cards[size_t(i)].sub.c_str());
            if (cards[size_t(i)].help) {
                const moe::Column* c = moe::find_column(cards[size_t(i)].help);
                ImGui::TextUnformatted(c ? c->help : "");
                ImGui::TextDisabled("%s = %s", cards[size_t(i)].help, c ? moe::format_value(*c, e).c_str() : "");
            } else {
                ImGui::TextUnformatted("Where the kernel efficiencies of this phase come from, as shares of its compute time:");
                const double shares[4] = {pr.share_measured, pr.share_interpolated, pr.share_transferred, pr.share_analytical};
                const moe::Source src[4] = {moe::Source::measured, moe::Source::interpolated, moe::Source::transferred, moe::Source::analytical};
                const char* what[4] = {"a measured grid point of a bench_data table", "interpolated between measured points",
                                       "another GPU's or shape's table, rescaled by the roofline", "the analytical fallback (no table)"};
                for (int k = 0; k < 4; ++k) {
                    ImGui::TextColored(theme::vec(theme::source_colour(src[k])), "\u25CF");
                    ImGui::SameLine();
                    ImGui::Text("%s %s: %s", fmt::percent(shares[k]).c_str(), moe::source_name(src[k]), what[k]);
                }
            }
            ImGui::PopTextWrapPos();
            ImGui::EndTooltip();
        }
    }
    // provenance bar inside the last card
    if (pr.computed) {
        const ImVec2 p(p0.x + float(5 % per_row) * (w + gap) + theme::px(10), p0.y + float(5 / per_row) * (h + gap) + h - theme::px(9));
        const float bw = w - theme::px(20);
        const double shares[4] = {pr.share_measured, pr.share_interpolated, pr.share_transferred, pr.share_analytical};
        const moe::Source src[4] = {moe::Source::measured, moe::Source::interpolated, moe::Source::transferred, moe::Source::analytical};
        float x = p.x;
        double total = shares[0] + shares[1] + shares[2] + shares[3];
        if (total <= 0) total = 1;
        for (int k = 0; k < 4; ++k) {
            const float ww = static_cast<float>(shares[k] / total) * bw;
            if (ww > 0) dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + ww, p.y + theme::px(4)), theme::source_colour(src[k]));
            x += ww;
        }
    }
    const float rows_h = per_row == 6 ? h : 2 * h + gap;
    ImGui::SetCursorScreenPos(ImVec2(p0.x, p0.y + rows_h + ImGui::GetStyle().ItemSpacing.y));
}

// A model or deployment that does not fit: the smallest GPU count that holds it and a one-click "use N GPUs"
// (disaggregated: the Serving section's "fit the pools").
void draw_fit_line(AppState& st) {
    if (!st.fit_checked) return;
    const moe::Estimate& e = st.estimate;
    const moe::Scenario& s = st.scenario;
    std::string text = "\u2717 Does not fit on " + std::to_string(s.world()) + " " + s.gpu.name + (s.world() == 1 ? "" : "s");
    if (!serving_on(s) && e.memory.shortfall_bytes > 0) text += " (short by " + fmt::bytes(e.memory.shortfall_bytes) + " per GPU)";
    if (st.fit.ok) {
        const moe::ParallelConfig& p = st.fit.parallel;
        char buf[160];
        std::snprintf(buf, sizeof buf, ": the smallest count that holds it is %d GPUs (TP %d \u00d7 DP %d, EP %d).", st.fit.gpus, p.tp,
                      p.dp, p.ep);
        text += buf;
    } else {
        text += ": no layout of up to 1024 of these GPUs holds it.";
    }
    ImGui::AlignTextToFramePadding();
    ImGui::TextColored(theme::vec(theme::kBad), "%s", text.c_str());
    record_last_item(st, "fit.text");
    if (!st.fit.ok) return;
    ImGui::SameLine();
    const std::string label = "Use " + std::to_string(st.fit.gpus) + " GPUs";
    if (ImGui::Button(label.c_str())) use_fit_layout(st);
    record_last_item(st, "button.use_gpus");
}

void draw_serving_tab(AppState& st) {
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const ImVec2 gap = ImGui::GetStyle().ItemSpacing;
    const float h = std::max(theme::px(300), avail.y);
    const float w1 = std::floor((avail.x - gap.x) * 0.55f);
    draw_serving_chart(st, ImVec2(w1, h));
    ImGui::SameLine();
    draw_serving_frontier_chart(st, ImVec2(avail.x - w1 - gap.x, h));
}

void draw_overview(AppState& st) {
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const ImVec2 gap = ImGui::GetStyle().ItemSpacing;
    // Row 1 keeps room for the memory legend; row 2 takes the rest (less when serving adds a row of cards).
    const float row1 = std::max(theme::px(236), avail.y * 0.40f);
    const float row2 = std::max(theme::px(220), avail.y - row1 - gap.y);
    const float w1 = std::floor(avail.x * 0.56f);
    draw_layer_chart(st, ImVec2(w1, row1));
    ImGui::SameLine();
    draw_memory_chart(st, ImVec2(avail.x - w1 - gap.x, row1));
    const float w3 = std::floor((avail.x - 2 * gap.x) / 3);
    draw_roofline_chart(st, ImVec2(w3, row2));
    ImGui::SameLine();
    draw_sweep_chart(st, ImVec2(w3, row2));
    ImGui::SameLine();
    draw_frontier_chart(st, ImVec2(avail.x - 2 * (w3 + gap.x), row2));
}

}  // namespace

bool begin_card(AppState& st, const char* name, ImVec2 size) {
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(theme::px(10), theme::px(8)));
    const bool visible = ImGui::BeginChild(name, size, true, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    const ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
    record_rect(st, name, p, ImVec2(p.x + s.x, p.y + s.y));
    return visible;
}

void end_card() {
    ImGui::EndChild();
    ImGui::PopStyleVar();
}

void draw_results_panel(AppState& st) {
    const moe::Estimate& e = st.estimate;
    draw_headline(st);
    if (!e.ok) {
        ImGui::PushStyleColor(ImGuiCol_Text, theme::vec(theme::kBad));
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextUnformatted("This scenario cannot be evaluated (the link keeps the last valid one):");
        for (const moe::Issue& i : e.errors) ImGui::BulletText("%s", i.text().c_str());
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
    }
    draw_fit_line(st);
    for (const std::string& w : shown_warnings(st)) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextColored(theme::vec(theme::kWarn), "\u26A0 %s", w.c_str());
        ImGui::PopTextWrapPos();
    }

    // phase switch for the charts, right-aligned on the tab bar's line; a window too narrow for both puts it on a line
    // of its own above the tabs (issue 26: the switch covered the last tabs at 800 px)
    ImVec2 tabs_pos = ImGui::GetCursorScreenPos();
    const moe::Estimate& se = shown_estimate(st);
    if (se.prefill.computed && se.decode.computed) {
        const char* labels[2] = {"prefill", "decode"};
        const float bw = theme::px(70);
        const ImGuiStyle& style = ImGui::GetStyle();
        float tabs_w = 0;
        for (const char* n : {"Overview", "Serving", "Plan", "Compare A/B", "Operators", "All outputs"}) {
            if (std::string_view(n) == "Serving" && !serving_on(st.scenario)) continue;
            tabs_w += ImGui::CalcTextSize(n).x + 2 * style.FramePadding.x + style.ItemInnerSpacing.x;
        }
        const float label_w = ImGui::CalcTextSize("charts show").x + theme::px(8);
        const float avail_w = ImGui::GetContentRegionAvail().x;
        const bool own_line = tabs_w + theme::px(12) + label_w + 2 * bw + theme::px(2) > avail_w;
        const float x = tabs_pos.x + avail_w - 2 * bw - theme::px(2);
        ImGui::SetCursorScreenPos(ImVec2(x - label_w, tabs_pos.y));
        ImGui::AlignTextToFramePadding();
        ImGui::TextDisabled("charts show");
        log_text_item("charts show");
        const moe::Phase ph = shown_phase(st);
        for (int i = 0; i < 2; ++i) {
            ImGui::SetCursorScreenPos(ImVec2(x + float(i) * (bw + theme::px(2)), tabs_pos.y));
            const bool selected = (i == 0) == (ph == moe::Phase::prefill);
            if (selected) ImGui::PushStyleColor(ImGuiCol_Button, theme::vec(theme::with_alpha(theme::kAccent, 0.55f)));
            if (ImGui::Button(labels[i], ImVec2(bw, 0))) set_view_phase(st, i == 0 ? PhaseView::prefill : PhaseView::decode);
            if (selected) ImGui::PopStyleColor();
            record_last_item(st, std::string("view.phase=") + labels[i]);
        }
        if (own_line) tabs_pos.y += ImGui::GetFrameHeight() + style.ItemSpacing.y;
        ImGui::SetCursorScreenPos(tabs_pos);
    }

    if (ImGui::BeginTabBar("results_tabs")) {
        // The Serving tab (index 4, after Overview on screen) exists while serving is on; Plan (5) always.
        const char* names[6] = {"Overview", "Compare A/B", "Operators", "All outputs", "Serving", "Plan"};
        const bool serving = serving_on(st.scenario);
        const int order[6] = {0, 4, 5, 1, 2, 3};
        for (int k = 0; k < 6; ++k) {
            const int i = order[k];
            if (i == 4 && !serving) continue;
            const ImGuiTabItemFlags f = st.requested_tab == i ? ImGuiTabItemFlags_SetSelected : 0;
            const bool open = ImGui::BeginTabItem(names[i], nullptr, f);
            record_last_item(st, std::string("tab.") + std::to_string(i));
            if (!open) continue;
            if (st.results_tab != i) {
                st.results_tab = i;
                st.publish_pending = true;
            }
            switch (i) {
                case 0: draw_overview(st); break;
                case 1: draw_compare_tab(st); break;
                case 2: draw_operators_tab(st); break;
                case 3: draw_outputs_tab(st); break;
                case 4: draw_serving_tab(st); break;
                case 5: draw_plan_tab(st); break;
            }
            ImGui::EndTabItem();
        }
        st.requested_tab = -1;
        ImGui::EndTabBar();
    }
}

}  // namespace web
