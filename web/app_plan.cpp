// app_plan.cpp — the Plan tab's logic outside of drawing (DESIGN §9): the request built from the scenario and the
// settings, the settings in the URL, the search run in slices, a front row loaded, the plan's CSV (the bytes of
// `moe-roofline plan --format csv`) and the plan's part of the test hook.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "app_state.h"

namespace web {

namespace {
double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The defaults of the fields the planner sets (plain values: no model or hardware needed).
moe::Scenario defaults_for_plan() {
    static const moe::Scenario d;
    return d;
}
}  // namespace

// ---- the Plan tab ---------------------------------------------------------------------------------------------
bool operator==(const PlanSettings& a, const PlanSettings& b) {
    return a.gpus == b.gpus && a.ttft_ms == b.ttft_ms && a.tpot_ms == b.tpot_ms &&
           a.min_tokens_per_s_per_user == b.min_tokens_per_s_per_user && a.aggregated == b.aggregated &&
           a.disaggregated == b.disaggregated && a.mtp == b.mtp && a.formats == b.formats && a.overlap == b.overlap;
}

moe::Scenario plan_base(const moe::Scenario& s, const PlanSettings& p) {
    moe::Scenario b = s;
    if (b.serving.mode == moe::ServingMode::off) {
        // The calculator's workload becomes the served requests.
        b.serving.isl = std::max(1, s.workload.prompt_len);
        b.serving.osl = std::max(1, s.workload.output_len);
    }
    b.serving.mode = moe::ServingMode::aggregated;
    // What the planner chooses starts from the defaults, whatever the calculator shows (a loaded row included).
    const moe::Scenario d = defaults_for_plan();
    b.serving.concurrency = d.serving.concurrency;
    b.serving.prefill = d.serving.prefill;
    b.serving.decode = d.serving.decode;
    b.parallel.tp = b.parallel.dp = b.parallel.ep = b.parallel.pp = 1;
    b.workload.batch = d.workload.batch;
    b.workload.phase = moe::PhaseSel::both;
    b.runtime.speculative.draft_tokens = 0;
    b.runtime.two_batch_overlap = false;
    b.runtime.a2a_backend = d.runtime.a2a_backend;
    if (p.formats) {
        b.precision.weights = moe::DtypeSel{};
        b.precision.kv_cache = moe::DtypeSel{};
    }
    return b;
}

moe::ServingEngine plan_engine(const moe::Scenario& s) { return moe::serving_engine_of(s.runtime.engine); }

nlohmann::json plan_space_json(const moe::Scenario& base, const PlanSettings& p) {
    nlohmann::json j = nlohmann::json::object();
    nlohmann::json modes = nlohmann::json::array();
    if (p.aggregated) modes.push_back("aggregated");
    if (p.disaggregated) modes.push_back("disaggregated");
    j["mode"] = modes;
    if (!p.mtp) j["mtp_draft_tokens"] = {0};
    if (!p.formats) {
        auto sel = [](const moe::DtypeSel& d) { return d.is_auto ? std::string("auto") : std::string(moe::dtype_name(d.value)); };
        j["weights"] = {sel(base.precision.weights)};
        j["kv_cache"] = {sel(base.precision.kv_cache)};
    }
    if (!p.overlap) j["two_batch_overlap"] = {false};
    return j;
}

moe::PlanRequest plan_request(const moe::Scenario& base, const PlanSettings& p) {
    moe::PlanRequest r;
    r.gpus = p.gpus;
    r.sla.ttft_ms = moe::plan_ttft_limit_ms(base, p.ttft_ms);  // none set: the serving default, as the CLI's plan
    r.sla.tpot_ms = p.tpot_ms;
    r.sla.min_tokens_per_s_per_user = p.min_tokens_per_s_per_user;
    r.engine = plan_engine(base);
    moe::Issues ignored;  // the settings only write keys the parser accepts
    moe::plan_space_from_json(plan_space_json(base, p), r.space, ignored);
    return r;
}

std::string plan_settings_text(const PlanSettings& p) {
    std::string t = "g" + std::to_string(p.gpus);
    auto num = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", v);
        return std::string(buf);
    };
    if (p.ttft_ms > 0) t += "_ttft" + num(p.ttft_ms);
    if (p.tpot_ms > 0) t += "_tpot" + num(p.tpot_ms);
    if (p.min_tokens_per_s_per_user > 0) t += "_u" + num(p.min_tokens_per_s_per_user);
    if (p.aggregated) t += "_agg";
    if (p.disaggregated) t += "_dis";
    if (p.mtp) t += "_mtp";
    if (p.formats) t += "_fmt";
    if (p.overlap) t += "_tbo";
    return t;
}

bool plan_settings_from_text(std::string_view text, PlanSettings& out) {
    PlanSettings p;
    p.aggregated = p.disaggregated = p.mtp = p.formats = p.overlap = false;
    bool gpus = false;
    auto number = [](std::string_view v, double lo, double hi, double& x) {
        if (v.empty() || v.size() > 20) return false;
        const std::string s(v);
        char* end = nullptr;
        x = std::strtod(s.c_str(), &end);
        return end == s.c_str() + s.size() && std::isfinite(x) && x >= lo && x <= hi;
    };
    while (!text.empty()) {
        const std::size_t cut = text.find('_');
        const std::string_view tok = text.substr(0, cut);
        double x = 0;
        if (tok == "agg") p.aggregated = true;
        else if (tok == "dis") p.disaggregated = true;
        else if (tok == "mtp") p.mtp = true;
        else if (tok == "fmt") p.formats = true;
        else if (tok == "tbo") p.overlap = true;
        else if (tok.substr(0, 4) == "ttft" && number(tok.substr(4), 0, 1e9, x)) p.ttft_ms = x;
        else if (tok.substr(0, 4) == "tpot" && number(tok.substr(4), 0, 1e9, x)) p.tpot_ms = x;
        else if (tok.substr(0, 1) == "u" && number(tok.substr(1), 0, 1e9, x)) p.min_tokens_per_s_per_user = x;
        else if (tok.substr(0, 1) == "g" && number(tok.substr(1), 1, 65536, x) && x == std::floor(x)) p.gpus = int(x), gpus = true;
        else return false;
        if (cut == std::string_view::npos) break;
        text.remove_prefix(cut + 1);
    }
    if (!gpus || (!p.aggregated && !p.disaggregated)) return false;
    out = p;
    return true;
}

void edit_plan_settings(AppState& st) {
    st.plan.in_url = true;
    st.fragment_dirty = true;
    st.publish_pending = true;
}

void start_plan(AppState& st) {
    PlanState& pl = st.plan;
    pl.run_requested = false;
    pl.error.clear();
    pl.front.clear();
    pl.front_agg.clear();
    pl.front_disagg.clear();
    pl.cloud.clear();
    pl.front_joules.clear();
    pl.selected = -1;
    pl.compute_ms = 0;
    pl.wall_ms = 0;
    pl.in_url = true;
    st.fragment_dirty = true;
    st.publish_pending = true;
    ++pl.runs;
    const moe::Scenario base = plan_base(st.scenario, pl.settings);
    const moe::PlanRequest req = plan_request(base, pl.settings);
    moe::Issues errs;
    const double t = now_ms();
    pl.started_ms = t;
    if (!pl.search.start(base, req, errs, *st.tables)) {
        for (const moe::Issue& i : errs) pl.error += (pl.error.empty() ? "" : "; ") + i.text();
        pl.running = false;
        return;
    }
    pl.compute_ms = now_ms() - t;  // the enumeration (and the prefill layouts of disaggregated points)
    pl.running = true;
}

namespace {
// After the search: each mode's front (the chart's lines) and a thinned cloud of the other candidates.
void finish_plan(PlanState& pl, const moe::Tables& tables) {
    const moe::PlanSearch& s = pl.search;
    const moe::PlanSummary& sum = s.summary();
    pl.front = sum.front;
    // J per output token of the front rows only (the search leaves energy out: one or two more estimates a row),
    // the numbers `moe-roofline plan` prints for the same rows
    pl.front_joules.clear();
    for (std::size_t i : pl.front) {
        const moe::Estimate e = moe::evaluate(s.scenario_of(i), tables);
        pl.front_joules.push_back(!e.ok ? 0.0 : e.serving.computed ? e.serving.joules_per_token : e.decode.joules_per_token);
    }
    const std::size_t n = s.points().size();
    std::vector<double> gpu(n), user(n);
    std::vector<bool> agg(n), dis(n);
    std::size_t candidates = 0;
    for (std::size_t i = 0; i < n; ++i) {
        gpu[i] = s.results()[i].output_tokens_per_s_per_gpu;
        user[i] = s.results()[i].tokens_per_s_per_user;
        const bool c = sum.verdicts[i] == moe::Verdict::candidate;
        candidates += c;
        agg[i] = c && s.points()[i].mode == moe::PlanMode::aggregated;
        dis[i] = c && s.points()[i].mode == moe::PlanMode::disaggregated;
    }
    pl.front_agg = moe::pareto_front(gpu, user, agg);
    pl.front_disagg = moe::pareto_front(gpu, user, dis);
    constexpr std::size_t kCloud = 3000;
    const std::size_t stride = std::max<std::size_t>(1, (candidates + kCloud - 1) / kCloud);
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (sum.verdicts[i] == moe::Verdict::candidate && k++ % stride == 0) pl.cloud.push_back(i);
}
}  // namespace

bool step_plan(AppState& st, double budget_ms) {
    PlanState& pl = st.plan;
    if (!pl.running) return false;
    const double t0 = now_ms();
    while (!pl.search.done() && now_ms() - t0 < budget_ms) pl.search.step(128, *st.tables);
    const double t1 = now_ms();
    pl.compute_ms += t1 - t0;
    if (pl.search.done()) {
        pl.running = false;
        pl.wall_ms = t1 - pl.started_ms;
        finish_plan(pl, *st.tables);
        st.publish_pending = true;
    } else if (t1 - pl.last_publish_ms > 500) {
        pl.last_publish_ms = t1;
        st.publish_pending = true;  // the progress, for tests and the bench
    }
    return pl.running;
}

void load_plan_row(AppState& st, int rank_index) {
    PlanState& pl = st.plan;
    if (pl.running || rank_index < 0 || std::size_t(rank_index) >= pl.front.size()) return;
    set_scenario(st, pl.search.scenario_of(pl.front[std::size_t(rank_index)]));
    st.serving_was_on = true;  // the row serves: stay on the Plan tab (turning serving on by hand opens Serving)
    pl.selected = rank_index;
    st.last_action = "plan:load:" + std::to_string(rank_index + 1);
    st.publish_pending = true;
}


// window.__moe.plan: the settings, the request as the CLI takes it (base scenario, --space JSON, flags), the
// progress, the counts and every front row with its numbers.
std::string plan_front_csv(const AppState& st, std::string_view base_url) {
    const PlanState& pl = st.plan;
    const moe::PlanSearch& s = pl.search;
    std::string out = moe::plan_csv_header();
    if (!s.done()) return out;
    moe::Scenario scratch = s.base();
    moe::PlanCsvContext c;
    c.base = &s.base();
    c.scratch = &scratch;
    c.sla = s.request().sla;
    c.engine = s.request().engine;
    c.base_url = std::string(base_url);
    c.hardware = !s.base().gpu.id.empty() ? s.base().gpu.id : s.base().gpu.name;  // as `plan` names it
    for (std::size_t k = 0; k < pl.front.size(); ++k)
        moe::append_plan_csv_row(out, c, s.points()[pl.front[k]], s.results()[pl.front[k]], int(k + 1), "front",
                                 k < pl.front_joules.size() ? pl.front_joules[k] : 0.0);
    return out;
}

std::string plan_row_commands(const AppState& st, int rank_index) {
    const PlanState& pl = st.plan;
    const moe::PlanSearch& s = pl.search;
    if (!s.done() || rank_index < 0 || std::size_t(rank_index) >= pl.front.size()) return {};
    const moe::PlanPoint& p = s.points()[pl.front[std::size_t(rank_index)]];
    moe::Scenario scratch = s.base();
    moe::plan_row_scenario(s.base(), p, scratch);
    std::string out;
    if (p.mode == moe::PlanMode::disaggregated) out += moe::prefill_launch_command(scratch, p, s.request().engine) + "\n";
    out += moe::launch_command(scratch, p, s.request().engine);
    return out;
}

nlohmann::json plan_hook_json(const AppState& st) {
    const PlanState& pl = st.plan;
    const moe::PlanSearch& s = pl.search;
    const PlanSettings& p = pl.settings;
    nlohmann::json j;
    j["settings"] = {{"gpus", p.gpus}, {"ttft_ms", p.ttft_ms}, {"tpot_ms", p.tpot_ms},
                     {"min_tokens_per_s_per_user", p.min_tokens_per_s_per_user}, {"aggregated", p.aggregated},
                     {"disaggregated", p.disaggregated}, {"mtp", p.mtp}, {"formats", p.formats}, {"overlap", p.overlap}};
    j["state"] = !s.started() ? (pl.error.empty() ? "idle" : "error") : pl.running ? "running" : "done";
    j["error"] = pl.error;
    j["runs"] = pl.runs;
    j["progress"] = s.progress();
    j["points"] = s.points().size();
    j["evaluated"] = s.evaluated();
    j["compute_ms"] = pl.compute_ms;
    j["wall_ms"] = pl.wall_ms;
    j["selected"] = pl.selected;
    j["hovered"] = pl.hovered;
    j["table_scroll_x"] = pl.table_scroll_x / st.dpr;
    j["table_scroll_max_x"] = pl.table_scroll_max_x / st.dpr;
    if (!s.started()) return j;
    j["base"] = moe::scenario_to_json(s.base(), true);
    j["space"] = plan_space_json(s.base(), p);
    j["engine"] = moe::serving_engine_name(s.request().engine);
    if (pl.running) return j;
    const moe::PlanSummary& sum = s.summary();
    nlohmann::json counts = nlohmann::json::object();
    for (int v = 0; v < 6; ++v) counts[moe::verdict_name(moe::Verdict(v))] = sum.counts[v];
    j["counts"] = counts;
    nlohmann::json front = nlohmann::json::array();
    for (std::size_t k = 0; k < pl.front.size(); ++k) {
        const moe::PlanPoint& pt = s.points()[pl.front[k]];
        const moe::PointResult& r = s.results()[pl.front[k]];
        nlohmann::json row = {{"rank", k + 1},
                              {"mode", pt.mode == moe::PlanMode::disaggregated ? "disaggregated" : "aggregated"},
                              {"output_tokens_per_s_per_gpu", r.output_tokens_per_s_per_gpu},
                              {"tokens_per_s_per_user", r.tokens_per_s_per_user},
                              {"usd_per_mtok_output", r.usd_per_mtok > 0 ? nlohmann::json(r.usd_per_mtok) : nlohmann::json()},
                              {"joules_per_token", k < pl.front_joules.size() && pl.front_joules[k] > 0 ? nlohmann::json(pl.front_joules[k]) : nlohmann::json()},
                              {"ttft_ms", r.ttft_ms},
                              {"tpot_ms", r.tpot_ms},
                              {"gpus", pt.world()},
                              {"replicas", pt.replicas},
                              {"parallel", {{"tp", pt.tp}, {"dp", pt.dp}, {"ep", pt.ep}, {"pp", pt.pp}}},
                              {"batch", pt.batch},
                              {"mtp_draft_tokens", pt.mtp},
                              {"ttft_queue_ms", r.ttft_queue_ms},
                              {"mostly_queueing", moe::plan_ttft_mostly_queueing(r)},
                              {"commands", plan_row_commands(st, int(k))}};
        if (pt.mode == moe::PlanMode::disaggregated)
            row["pools"] = {{"prefill_workers", pt.prefill_workers}, {"decode_workers", pt.decode_workers},
                            {"prefill", {{"tp", pt.prefill_tp}, {"dp", pt.prefill_dp}, {"ep", pt.prefill_ep}}}};
        front.push_back(std::move(row));
    }
    j["front"] = std::move(front);
    j["front_aggregated"] = pl.front_agg.size();
    j["front_disaggregated"] = pl.front_disagg.size();
    return j;
}

}  // namespace web
