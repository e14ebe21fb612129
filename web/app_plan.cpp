// app_plan.cpp — the Plan tab's logic outside of drawing (DESIGN §9): the request built from the scenario and the
// settings, the settings in the URL, the search run in slices, a front row loaded, the plan's CSV (the bytes of
// `moe-roofline plan --format csv`) and the plan's part of the test hook.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

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
           a.disaggregated == b.disaggregated && a.mtp == b.mtp && a.formats == b.formats && a.overlap == b.overlap &&
           a.sla_p90 == b.sla_p90 && a.hardware == b.hardware && a.engines == b.engines;
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
    r.sla.at_p90 = p.sla_p90;
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
    if (p.sla_p90) t += "_p90";
    for (std::size_t i = 0; i < p.hardware.size(); ++i) t += (i == 0 ? "_hw" : "+") + p.hardware[i];
    for (std::size_t i = 0; i < p.engines.size(); ++i) t += (i == 0 ? "_en" : "+") + std::string(moe::serving_engine_name(p.engines[i]));
    return t;
}

bool plan_settings_from_text(std::string_view text, PlanSettings& out) {
    PlanSettings p;
    p.aggregated = p.disaggregated = p.mtp = p.formats = p.overlap = false;
    bool gpus = false;
    std::vector<std::string> names;
    // "a+b+c": every item non-empty and once
    auto split_list = [](std::string_view v, std::vector<std::string>& items) {
        items.clear();
        while (true) {
            const std::size_t cut = v.find('+');
            const std::string item(v.substr(0, cut));
            if (item.empty() || std::find(items.begin(), items.end(), item) != items.end() || items.size() >= 64) return false;
            items.push_back(item);
            if (cut == std::string_view::npos) return true;
            v.remove_prefix(cut + 1);
        }
    };
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
        else if (tok == "p90") p.sla_p90 = true;
        else if (tok.substr(0, 2) == "hw" && p.hardware.empty() && split_list(tok.substr(2), p.hardware)) {
            for (const std::string& id : p.hardware)
                if (id.size() > 64 || id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-") != std::string::npos) return false;
        } else if (tok.substr(0, 2) == "en" && p.engines.empty() && split_list(tok.substr(2), names)) {
            for (const std::string& n : names) {
                moe::ServingEngine e{};
                if (!moe::parse_serving_engine(n, e) || std::find(p.engines.begin(), p.engines.end(), e) != p.engines.end()) return false;
                p.engines.push_back(e);
            }
        }
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

std::vector<std::string> plan_hardware(const AppState& st) {
    if (!st.plan.settings.hardware.empty()) return st.plan.settings.hardware;
    return {st.scenario.hardware_inline.is_object() ? std::string() : st.scenario.hardware_ref};
}

std::vector<moe::ServingEngine> plan_engines(const AppState& st) {
    if (!st.plan.settings.engines.empty()) return st.plan.settings.engines;
    return {plan_engine(st.scenario)};
}

const moe::PlanSearch& plan_search_of(const PlanState& pl, const moe::PlanFront::Row& row) {
    return pl.searches[row.group < pl.searches.size() ? row.group : 0];
}

void start_plan(AppState& st) {
    PlanState& pl = st.plan;
    pl.run_requested = false;
    pl.error.clear();
    pl.searches.clear();
    pl.search_hardware.clear();
    pl.current = 0;
    pl.front.clear();
    pl.front_agg.clear();
    pl.front_disagg.clear();
    pl.cloud.clear();
    pl.front_joules.clear();
    std::fill(std::begin(pl.counts), std::end(pl.counts), 0);
    pl.points = pl.evaluated = 0;
    pl.selected = -1;
    pl.compute_ms = 0;
    pl.wall_ms = 0;
    pl.in_url = true;
    st.fragment_dirty = true;
    st.publish_pending = true;
    ++pl.runs;
    const double t = now_ms();
    pl.started_ms = t;
    // One search per (GPU, engine), hardware outer, as `moe-roofline plan --hardware --engine` runs them: the GPU
    // set as `--set hardware=ID` sets it (on the scenario's JSON), the engine as runtime.engine (its constants and
    // its commands); without lists, the scenario's own.
    const moe::Scenario base = plan_base(st.scenario, pl.settings);
    std::vector<std::string> hardware = pl.settings.hardware;
    if (hardware.empty()) hardware.push_back("");
    const std::vector<moe::ServingEngine>& engines = pl.settings.engines;
    const std::size_t n = hardware.size() * std::max<std::size_t>(1, engines.size());
    pl.searches.reserve(n);
    for (const std::string& hw : hardware) {
        moe::Scenario with_hw = base;
        if (!hw.empty()) {
            nlohmann::json j = moe::scenario_to_json(base, true);
            j["hardware"] = hw;
            moe::ParseResult r = moe::scenario_from_json(j, *st.catalog);
            if (!r.ok()) {
                pl.error = "hardware " + hw + ": ";
                for (std::size_t i = 0; i < r.errors.size(); ++i) pl.error += (i ? "; " : "") + r.errors[i].text();
                pl.searches.clear();
                pl.running = false;
                return;
            }
            with_hw = std::move(r.scenario);
        }
        const std::string hw_name = !hw.empty() ? hw : !with_hw.gpu.id.empty() ? with_hw.gpu.id : with_hw.gpu.name;
        for (std::size_t e = 0; e < std::max<std::size_t>(1, engines.size()); ++e) {
            moe::Scenario x = with_hw;
            if (!engines.empty()) x.runtime.engine = moe::engine_kind_of(engines[e]);
            const moe::PlanRequest req = plan_request(x, pl.settings);
            moe::Issues errs;
            // the front is re-ranked once over every search (finish_plan), as `plan` does
            if (!pl.searches.emplace_back().start(x, req, errs, *st.tables, /*refine_front=*/false)) {
                if (n > 1) pl.error = hw_name + ", " + moe::serving_engine_name(req.engine) + ": ";
                for (std::size_t i = 0; i < errs.size(); ++i) pl.error += (i ? "; " : "") + errs[i].text();
                pl.searches.clear();
                pl.search_hardware.clear();
                pl.running = false;
                return;
            }
            pl.search_hardware.push_back(hw_name);
            pl.points += pl.searches.back().points().size();
        }
    }
    pl.compute_ms = now_ms() - t;  // the enumeration (and the prefill layouts of disaggregated points)
    pl.running = true;
}

namespace {
// After the searches: plan's front over all of them (each search's points folded into one PlanFront, its rows
// re-ranked by the serving simulation: `moe-roofline plan`'s steps), each mode's own front (the chart's lines) and
// a thinned cloud of the other candidates.
void finish_plan(PlanState& pl, const moe::Tables& tables) {
    if (pl.searches.empty()) return;
    const moe::PlanRequest& req = pl.searches.front().request();
    moe::PlanFront front(req.sla, req.objective);
    for (std::uint32_t g = 0; g < pl.searches.size(); ++g) {
        const moe::PlanSearch& s = pl.searches[g];
        for (std::size_t i = 0; i < s.points().size(); ++i) front.add(i, s.points()[i], s.results()[i], g);
    }
    std::map<std::pair<std::uint32_t, std::uint64_t>, moe::PointResult> refined;
    if (pl.searches.front().base().serving.mode != moe::ServingMode::off)
        front.refine([&](const moe::PlanFront::Row& r) {
            const moe::PointResult x = moe::evaluate_point_simulated(pl.searches[r.group].scenario_of(r.index), tables);
            refined[{r.group, r.index}] = x;
            return x;
        });
    front.finish();
    pl.front = front.rows();
    for (int v = 0; v < 6; ++v) pl.counts[v] = front.count(moe::Verdict(v));
    // J per output token of the front rows only (the search leaves energy out: one or two more estimates a row),
    // the numbers `moe-roofline plan` prints for the same rows
    pl.front_joules.clear();
    for (const moe::PlanFront::Row& r : pl.front) {
        const moe::Estimate e = moe::evaluate(plan_search_of(pl, r).scenario_of(r.index), tables);
        pl.front_joules.push_back(!e.ok ? 0.0 : e.serving.computed ? e.serving.joules_per_token : e.decode.joules_per_token);
    }
    // every candidate (a re-ranked row by its simulated numbers), over all searches
    std::vector<double> gpu, user;
    std::vector<bool> agg, dis, cand;
    for (std::uint32_t g = 0; g < pl.searches.size(); ++g) {
        const moe::PlanSearch& s = pl.searches[g];
        for (std::size_t i = 0; i < s.points().size(); ++i) {
            const auto it = refined.find({g, i});
            const moe::PointResult& r = it != refined.end() ? it->second : s.results()[i];
            const bool c = moe::judge(r, req.sla) == moe::Verdict::candidate;
            gpu.push_back(r.output_tokens_per_s_per_gpu);
            user.push_back(r.tokens_per_s_per_user);
            cand.push_back(c);
            agg.push_back(c && s.points()[i].mode == moe::PlanMode::aggregated);
            dis.push_back(c && s.points()[i].mode == moe::PlanMode::disaggregated);
        }
    }
    auto dots = [&](const std::vector<std::size_t>& idx, bool disaggregated, std::vector<PlanState::Dot>& out) {
        out.clear();
        for (std::size_t k : idx) out.push_back({user[k], gpu[k], disaggregated});
    };
    dots(moe::pareto_front(gpu, user, agg), false, pl.front_agg);
    dots(moe::pareto_front(gpu, user, dis), true, pl.front_disagg);
    std::size_t candidates = 0;
    for (bool c : cand) candidates += c;
    constexpr std::size_t kCloud = 3000;
    const std::size_t stride = std::max<std::size_t>(1, (candidates + kCloud - 1) / kCloud);
    std::size_t k = 0;
    for (std::size_t i = 0; i < cand.size(); ++i)
        if (cand[i] && k++ % stride == 0) pl.cloud.push_back({user[i], gpu[i], dis[i]});
}
}  // namespace

bool step_plan(AppState& st, double budget_ms) {
    PlanState& pl = st.plan;
    if (!pl.running) return false;
    const double t0 = now_ms();
    while (pl.current < pl.searches.size() && now_ms() - t0 < budget_ms) {
        moe::PlanSearch& s = pl.searches[pl.current];
        if (s.done()) {
            ++pl.current;
            continue;
        }
        pl.evaluated += s.step(128, *st.tables);
    }
    const double t1 = now_ms();
    pl.compute_ms += t1 - t0;
    if (pl.current == pl.searches.size()) {
        finish_plan(pl, *st.tables);
        pl.running = false;
        pl.wall_ms = now_ms() - pl.started_ms;
        st.publish_pending = true;
    } else if (t1 - pl.last_publish_ms > 500) {
        pl.last_publish_ms = t1;
        st.publish_pending = true;  // the progress, for tests and the bench
    }
    return pl.running;
}

bool plan_done(const PlanState& pl) { return !pl.searches.empty() && !pl.running && pl.current == pl.searches.size(); }

void load_plan_row(AppState& st, int rank_index) {
    PlanState& pl = st.plan;
    if (pl.running || rank_index < 0 || std::size_t(rank_index) >= pl.front.size()) return;
    const moe::PlanFront::Row& row = pl.front[std::size_t(rank_index)];
    set_scenario(st, plan_search_of(pl, row).scenario_of(row.index));
    st.serving_was_on = true;  // the row serves: stay on the Plan tab (turning serving on by hand opens Serving)
    pl.selected = rank_index;
    st.last_action = "plan:load:" + std::to_string(rank_index + 1);
    st.publish_pending = true;
}


// The rows of `moe-roofline plan --format csv` for the same request, byte for byte: each row written from its own
// search's base, engine and GPU name.
std::string plan_front_csv(const AppState& st, std::string_view base_url) {
    const PlanState& pl = st.plan;
    std::string out = moe::plan_csv_header();
    if (!plan_done(pl)) return out;
    moe::Scenario scratch;
    std::uint32_t scratch_group = UINT32_MAX;
    for (std::size_t k = 0; k < pl.front.size(); ++k) {
        const moe::PlanFront::Row& row = pl.front[k];
        const moe::PlanSearch& s = plan_search_of(pl, row);
        if (row.group != scratch_group) scratch = s.base(), scratch_group = row.group;
        moe::PlanCsvContext c;
        c.base = &s.base();
        c.scratch = &scratch;
        c.sla = s.request().sla;
        c.engine = s.request().engine;
        c.base_url = std::string(base_url);
        c.hardware = pl.search_hardware[row.group < pl.search_hardware.size() ? row.group : 0];
        moe::append_plan_csv_row(out, c, row.point, row.result, int(k + 1), "front",
                                 k < pl.front_joules.size() ? pl.front_joules[k] : 0.0);
    }
    return out;
}

std::string plan_row_commands(const AppState& st, int rank_index) {
    const PlanState& pl = st.plan;
    if (!plan_done(pl) || rank_index < 0 || std::size_t(rank_index) >= pl.front.size()) return {};
    const moe::PlanFront::Row& row = pl.front[std::size_t(rank_index)];
    const moe::PlanSearch& s = plan_search_of(pl, row);
    const moe::PlanPoint& p = row.point;
    moe::Scenario scratch = s.base();
    moe::plan_row_scenario(s.base(), p, scratch);
    std::string out;
    if (p.mode == moe::PlanMode::disaggregated) out += moe::prefill_launch_command(scratch, p, s.request().engine) + "\n";
    out += moe::launch_command(scratch, p, s.request().engine);
    return out;
}

// window.__moe.plan: the settings, the request as the CLI takes it (base scenario, --space JSON, flags), the
// progress, the counts and every front row with its numbers.
nlohmann::json plan_hook_json(const AppState& st) {
    const PlanState& pl = st.plan;
    const PlanSettings& p = pl.settings;
    nlohmann::json j;
    nlohmann::json engine_names = nlohmann::json::array();
    for (moe::ServingEngine e : p.engines) engine_names.push_back(moe::serving_engine_name(e));
    j["settings"] = {{"gpus", p.gpus}, {"ttft_ms", p.ttft_ms}, {"tpot_ms", p.tpot_ms},
                     {"min_tokens_per_s_per_user", p.min_tokens_per_s_per_user}, {"aggregated", p.aggregated},
                     {"disaggregated", p.disaggregated}, {"mtp", p.mtp}, {"formats", p.formats}, {"overlap", p.overlap},
                     {"sla_at", p.sla_p90 ? "p90" : "mean"}, {"hardware", p.hardware}, {"engines", engine_names}};
    const bool started = !pl.searches.empty();
    j["state"] = !started ? (pl.error.empty() ? "idle" : "error") : pl.running ? "running" : "done";
    j["error"] = pl.error;
    j["runs"] = pl.runs;
    j["progress"] = !started ? 0.0 : pl.points == 0 ? 1.0 : double(pl.evaluated) / double(pl.points);
    j["points"] = pl.points;
    j["evaluated"] = pl.evaluated;
    j["compute_ms"] = pl.compute_ms;
    j["wall_ms"] = pl.wall_ms;
    j["selected"] = pl.selected;
    j["hovered"] = pl.hovered;
    j["table_scroll_x"] = pl.table_scroll_x / st.dpr;
    j["table_scroll_max_x"] = pl.table_scroll_max_x / st.dpr;
    if (!started) return j;
    const moe::PlanSearch& first = pl.searches.front();
    j["base"] = moe::scenario_to_json(first.base(), true);
    j["space"] = plan_space_json(first.base(), p);
    j["engine"] = moe::serving_engine_name(first.request().engine);
    // the searches' GPUs and engines, each once in the searches' order (plan --hardware / --engine)
    nlohmann::json hw = nlohmann::json::array(), en = nlohmann::json::array();
    for (std::size_t g = 0; g < pl.searches.size(); ++g) {
        if (std::find(hw.begin(), hw.end(), nlohmann::json(pl.search_hardware[g])) == hw.end()) hw.push_back(pl.search_hardware[g]);
        const nlohmann::json e = moe::serving_engine_name(pl.searches[g].request().engine);
        if (std::find(en.begin(), en.end(), e) == en.end()) en.push_back(e);
    }
    j["hardware"] = hw;
    j["engines"] = en;
    if (pl.running) return j;
    nlohmann::json counts = nlohmann::json::object();
    for (int v = 0; v < 6; ++v) counts[moe::verdict_name(moe::Verdict(v))] = pl.counts[v];
    j["counts"] = counts;
    const bool serving = first.base().serving.mode != moe::ServingMode::off;
    nlohmann::json front = nlohmann::json::array();
    for (std::size_t k = 0; k < pl.front.size(); ++k) {
        const moe::PlanFront::Row& row = pl.front[k];
        const moe::PlanPoint& pt = row.point;
        const moe::PointResult& r = row.result;
        nlohmann::json out = {{"rank", k + 1},
                              {"hardware", pl.search_hardware[row.group < pl.search_hardware.size() ? row.group : 0]},
                              {"engine", moe::serving_engine_name(plan_search_of(pl, row).request().engine)},
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
        // the band's high end, at the paths of `plan --format json` and `eval` (serving.ttft_ms_p90, ...)
        if (serving)
            out["serving"] = {{"ttft_ms_p90", r.ok && r.ttft_ms_p90 > 0 ? nlohmann::json(r.ttft_ms_p90) : nlohmann::json()},
                              {"tpot_ms_p90", r.ok && r.tpot_ms_p90 > 0 ? nlohmann::json(r.tpot_ms_p90) : nlohmann::json()}};
        if (pt.mode == moe::PlanMode::disaggregated)
            out["pools"] = {{"prefill_workers", pt.prefill_workers}, {"decode_workers", pt.decode_workers},
                            {"prefill", {{"tp", pt.prefill_tp}, {"dp", pt.prefill_dp}, {"ep", pt.prefill_ep}}}};
        front.push_back(std::move(out));
    }
    j["front"] = std::move(front);
    j["front_aggregated"] = pl.front_agg.size();
    j["front_disaggregated"] = pl.front_disagg.size();
    return j;
}

}  // namespace web
