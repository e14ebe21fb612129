// panels_results.cpp — what the model says: headline numbers with a provenance badge (and, when serving is on, a
// row of deployment-level cards above them: TTFT and TPOT under load with their parts as a stacked bar, output
// tokens/s per GPU, per user, request latency, GPUs), then tabs: the overview charts (panels_charts.cpp), the
// Serving charts, the A/B comparison, every operator, and every output column with its exact value.
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
    ImU32 sub_colour = theme::kTextDim;
    ImU32 value_colour = theme::kText;
    const char* help = nullptr;
    std::vector<CardPart> parts;
};

// Delta of B against A for a card's sub line: "A 1,020 ms · +12.6%" (green when better).
void compare_sub(Card& c, const AppState& st, const char* column, bool higher_is_better, const std::string& a_text) {
    if (!st.a.active) return;
    const double a = column_value(st.a.estimate, column), b = column_value(st.estimate, column);
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

void draw_card(ImDrawList* dl, ImVec2 p, ImVec2 size, const Card& c) {
    const theme::Fonts& f = theme::fonts();
    dl->AddRectFilled(p, ImVec2(p.x + size.x, p.y + size.y), theme::kPanel, theme::px(6));
    dl->AddRect(p, ImVec2(p.x + size.x, p.y + size.y), theme::kPanelBorder, theme::px(6));
    const float pad = theme::px(10);
    dl->PushClipRect(ImVec2(p.x + 1, p.y + 1), ImVec2(p.x + size.x - pad * 0.5f, p.y + size.y - 1), true);
    float y = p.y + theme::px(7);
    dl->AddText(f.small, f.small->FontSize, ImVec2(p.x + pad, y), theme::kTextDim, c.caption);
    y += f.small->FontSize + theme::px(3);
    dl->AddText(f.headline, f.headline->FontSize, ImVec2(p.x + pad, y), c.value_colour, c.value.c_str());
    const float vw = f.headline->CalcTextSizeA(f.headline->FontSize, 1e9f, 0, c.value.c_str()).x;
    dl->AddText(f.body, f.body->FontSize, ImVec2(p.x + pad + vw + theme::px(5), y + f.headline->FontSize - f.body->FontSize - theme::px(2)),
                theme::kTextDim, c.unit.c_str());
    y += f.headline->FontSize + theme::px(4);
    const ImVec4 clip(p.x + pad, p.y, p.x + size.x - pad, p.y + size.y);
    dl->AddText(f.small, f.small->FontSize, ImVec2(p.x + pad, y), c.sub_colour, c.sub.c_str(), nullptr, 0, &clip);
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
    if (s.serving.stream_interval > 1) ttft.parts.push_back({"serving.ttft_stream_ms", "stream interval", theme::lighten(theme::kLatency, 0.45f)});
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
    lat.sub = fmt::number(s.serving.isl) + " in \u2192 " + fmt::number(s.serving.osl) + " out";
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
        st.cards[names[i]] = {c.help, c.value.substr(0, cut), c.unit, c.unit == "s" ? 1000.0 : 1.0};
        if (!ImGui::IsItemHovered()) continue;
        const moe::Column* col = moe::find_column(c.help);
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28);
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
    const moe::Estimate& e = st.estimate;
    const moe::Scenario& s = st.scenario;
    std::vector<Card> cards(6);
    std::string n, u;

    Card& ttft = cards[0];
    const bool serving = serving_on(s);
    ttft.caption = serving ? "Step TTFT (one request)" : "Time to first token";
    ttft.help = "prefill.ttft_ms";
    split_time(e.prefill.computed ? e.prefill.ttft_ms : std::nan(""), ttft.value, ttft.unit);
    if (e.prefill.computed) {
        const int forwards = static_cast<int>(std::ceil(double(s.workload.prompt_len) / std::max(1, s.workload.prefill_tokens)));
        ttft.sub = std::to_string(forwards) + " \u00d7 " + fmt::time_ms(e.prefill.step_ms) + " forward";
    } else {
        ttft.sub = "prefill not computed";
    }
    split_time(column_value(st.a.estimate, "prefill.ttft_ms"), n, u);
    compare_sub(ttft, st, "prefill.ttft_ms", false, n + " " + u);

    Card& tpot = cards[1];
    tpot.caption = serving ? "Step TPOT (batch above)" : "Time per output token";
    tpot.help = "decode.tpot_ms";
    split_time(e.decode.computed ? e.decode.tpot_ms : std::nan(""), tpot.value, tpot.unit);
    if (e.decode.computed) {
        tpot.sub = "step " + fmt::time_ms(e.decode.step_ms);
        if (e.decode.tokens_per_step > s.workload.batch + 1e-9)
            tpot.sub += ", MTP \u00d7" + fmt::number(e.decode.tokens_per_step / s.workload.batch, 3);
    } else {
        tpot.sub = "decode not computed";
    }
    split_time(column_value(st.a.estimate, "decode.tpot_ms"), n, u);
    compare_sub(tpot, st, "decode.tpot_ms", false, n + " " + u);

    Card& gpu = cards[2];
    gpu.caption = "Decode throughput";
    gpu.help = "decode.tokens_per_s_per_gpu";
    gpu.value = e.decode.computed ? fmt::number(e.decode.tokens_per_s_per_gpu, 4) : "\u2014";
    gpu.unit = "tok/s/GPU";
    gpu.sub = e.prefill.computed ? "prefill " + fmt::si(e.prefill.tokens_per_s_per_gpu) + " tok/s/GPU" : "";
    compare_sub(gpu, st, "decode.tokens_per_s_per_gpu", true, fmt::number(column_value(st.a.estimate, "decode.tokens_per_s_per_gpu"), 4));

    Card& user = cards[3];
    user.caption = "Per user";
    user.help = "decode.tokens_per_s_per_user";
    user.value = e.decode.computed ? fmt::number(e.decode.tokens_per_s_per_user, 3) : "\u2014";
    user.unit = "tok/s";
    user.sub = "batch " + std::to_string(s.workload.batch) + " \u00d7 DP " + std::to_string(s.parallel.dp);
    compare_sub(user, st, "decode.tokens_per_s_per_user", true, fmt::number(column_value(st.a.estimate, "decode.tokens_per_s_per_user"), 3));

    Card& mem = cards[4];
    mem.caption = "Memory per GPU";
    mem.help = "memory.total_bytes";
    if (e.ok) {
        mem.value = fmt::number(e.memory.total_bytes / 1e9, 3);
        mem.unit = "/ " + fmt::number(e.memory.usable_bytes / 1e9, 3) + " GB";
        mem.value_colour = e.memory.fits ? theme::kText : theme::kBad;
        mem.sub = std::string(e.memory.fits ? "\u2713 fits" : "\u2717 too big") + ", max batch " + fmt::number(e.memory.max_batch);
        mem.sub_colour = e.memory.fits ? theme::kGood : theme::kBad;
    } else {
        mem.value = "\u2014";
    }
    if (st.a.active && e.ok) compare_sub(mem, st, "memory.total_bytes", false, fmt::bytes(st.a.estimate.memory.total_bytes));

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
        ImGui::InvisibleButton(cards[size_t(i)].caption, ImVec2(w, h));
        record_last_item(st, std::string("card.") + std::to_string(i));
        if (ImGui::IsItemHovered()) {
            ImGui::BeginTooltip();
            ImGui::PushTextWrapPos(ImGui::GetFontSize() * 26);
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

// ---- the compare tab
struct KeyOutput {
    const char* column;
    const char* label;
    int better;  // +1 higher is better, -1 lower, 0 neutral
};
const KeyOutput kKeyOutputs[] = {
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
            const double a = column_value(st.a.estimate, k.column), b = column_value(st.estimate, k.column);
            if (!std::isfinite(a) && !std::isfinite(b)) continue;
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(k.label);
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
    for (const std::string& w : e.warnings) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextColored(theme::vec(theme::kWarn), "\u26A0 %s", w.c_str());
        ImGui::PopTextWrapPos();
    }

    // phase switch for the charts, right-aligned on the tab bar's line
    const ImVec2 tabs_pos = ImGui::GetCursorScreenPos();
    if (e.prefill.computed && e.decode.computed) {
        const char* labels[2] = {"prefill", "decode"};
        const float bw = theme::px(70);
        const float x = tabs_pos.x + ImGui::GetContentRegionAvail().x - 2 * bw - theme::px(2);
        ImGui::SetCursorScreenPos(ImVec2(x - ImGui::CalcTextSize("charts show").x - theme::px(8), tabs_pos.y));
        ImGui::AlignTextToFramePadding();
        ImGui::TextDisabled("charts show");
        const moe::Phase ph = shown_phase(st);
        for (int i = 0; i < 2; ++i) {
            ImGui::SetCursorScreenPos(ImVec2(x + float(i) * (bw + theme::px(2)), tabs_pos.y));
            const bool selected = (i == 0) == (ph == moe::Phase::prefill);
            if (selected) ImGui::PushStyleColor(ImGuiCol_Button, theme::vec(theme::with_alpha(theme::kAccent, 0.55f)));
            if (ImGui::Button(labels[i], ImVec2(bw, 0))) set_view_phase(st, i == 0 ? PhaseView::prefill : PhaseView::decode);
            if (selected) ImGui::PopStyleColor();
            record_last_item(st, std::string("view.phase=") + labels[i]);
        }
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
