// app_serving.cpp — one set of request lengths and one verdict (issue 26): the steps the page shows beside a
// deployment (the serving workload's, not the Workload section's), serving modes switched with the lengths and the
// layout carried over, the disaggregated pools fitted to a GPU budget, and the smallest GPU count that holds a
// model that does not fit.
#include <algorithm>
#include <cmath>

#include "app_state.h"

namespace web {

moe::Scenario serving_step_scenario(const moe::Scenario& s, double running_batch) {
    moe::Scenario x = s;
    x.serving.mode = moe::ServingMode::off;
    x.workload.phase = moe::PhaseSel::both;
    // the mean request, as the serving layer hands it to the step model
    x.workload.prompt_len = std::max(1, int(std::lround(s.serving.mean_isl())));
    x.workload.output_len = std::max(1, int(std::lround(s.serving.mean_osl())));
    x.workload.context_len = 0;  // prompt + output / 2
    // one prompt alone: a forward takes at most the prompt (a step-level forward fills its chunk with prompts)
    x.workload.prefill_tokens = std::max(1, std::min(s.workload.prefill_tokens, x.workload.prompt_len));
    const bool disagg = s.serving.mode == moe::ServingMode::disaggregated;
    if (disagg) x.parallel = s.serving.decode.parallel;
    int batch = 0;
    if (running_batch > 0 && std::isfinite(running_batch)) batch = int(std::lround(running_batch));
    else if (disagg) batch = s.serving.decode.batch;
    else batch = (s.serving.concurrency + std::max(1, s.parallel.dp) - 1) / std::max(1, s.parallel.dp);
    x.workload.batch = std::max(1, batch);
    return x;
}

moe::Scenario serving_prefill_step_scenario(const moe::Scenario& s) {
    moe::Scenario x = serving_step_scenario(s, 1);
    x.parallel = s.serving.prefill.parallel;
    x.workload.phase = moe::PhaseSel::prefill;
    // a prefill worker's forward: serving.prefill.batch prompts per DP rank (as the serving layer runs it)
    x.workload.prefill_tokens = int(std::min(1e7, double(std::max(1, s.serving.prefill.batch)) * x.workload.prompt_len));
    return x;
}

void compute_steps(const moe::Scenario& s, const moe::Estimate& e, const moe::Tables& t, StepsView& v) {
    v.on = serving_on(s);
    v.disaggregated = s.serving.mode == moe::ServingMode::disaggregated;
    if (!v.on) {
        v.scenario = moe::Scenario();
        v.estimate = moe::Estimate();
        v.prefill = moe::Estimate();
        return;
    }
    v.scenario = serving_step_scenario(s, e.ok && e.serving.computed ? e.serving.running_batch : 0);
    v.estimate = moe::evaluate(v.scenario, t);
    if (v.disaggregated) v.prefill = moe::evaluate(serving_prefill_step_scenario(s), t);
    else v.prefill = moe::Estimate();
}

const moe::Scenario& shown_scenario(const AppState& st) { return st.steps.on ? st.steps.scenario : st.scenario; }
const moe::Estimate& shown_estimate(const AppState& st) { return st.steps.on ? st.steps.estimate : st.estimate; }

bool deployment_fits(const moe::Scenario& s, const moe::Estimate& e) {
    if (!e.ok) return false;
    return serving_on(s) ? e.serving.computed && e.serving.fits : e.memory.fits;
}

std::vector<std::string> shown_warnings(const AppState& st) {
    const moe::Estimate& e = st.estimate;
    if (!st.steps.on) return e.warnings;
    auto step_verdict = [](const std::string& w) { return w.rfind("does not fit:", 0) == 0; };
    std::vector<std::string> out;
    for (const std::string& w : e.warnings)
        if (!step_verdict(w)) out.push_back(w);
    for (const std::string& w : st.steps.estimate.warnings)
        if (!step_verdict(w) && std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    if (!deployment_fits(st.scenario, e) && e.ok && e.serving.computed &&
        std::none_of(out.begin(), out.end(), [](const std::string& w) { return w.rfind("serving", 0) == 0; }))
        out.push_back("serving: the deployment does not fit in memory");
    return out;
}

void update_fit(AppState& st) {
    st.fit = moe::FitLayout();
    st.fit_checked = false;
    const moe::Scenario& s = st.scenario;
    if (!st.estimate.ok || deployment_fits(s, st.estimate) || s.serving.mode == moe::ServingMode::disaggregated) return;
    st.fit_checked = true;
    st.fit = moe::smallest_fitting_layout(s, *st.tables);
}

void use_fit_layout(AppState& st) {
    if (!st.fit.ok) return;
    moe::Scenario s = st.scenario;
    s.parallel = st.fit.parallel;
    set_scenario(st, std::move(s));
    st.last_action = "use_gpus:" + std::to_string(st.fit.gpus);
}

namespace {

// Serving turns disaggregated: both pools start from the Parallelism layout. Split from its GPUs when two workers
// fit in them (fit_pools: the split with the most tokens/s per GPU under the TTFT default), else one prefill and one
// decode worker of that layout; the decode pool keeps the requests per DP rank.
void seed_pools(moe::Scenario& s, moe::ServingMode old, const moe::Tables& t) {
    moe::ServingConfig& sv = s.serving;
    const int dp = std::max(1, s.parallel.dp);
    sv.decode.batch = std::max(1, old == moe::ServingMode::aggregated ? sv.concurrency / dp : s.workload.batch);
    sv.decode.parallel = s.parallel;
    sv.prefill.parallel = s.parallel;
    sv.prefill.parallel.pp = 1;
    sv.prefill.workers = sv.decode.workers = 1;
    sv.prefill.batch = 1;
    sv.concurrency = std::max(1, dp * sv.decode.batch);  // the clients fill the decode slots (fit_pools: its split's)
    std::string why;
    moe::Scenario x = s;
    x.serving.mode = moe::ServingMode::disaggregated;
    if (s.world() >= 2 && moe::fit_pools(x, s.world(), t, why)) sv = x.serving;
}

}  // namespace

bool follow_serving_edit(const moe::Scenario& before, moe::Scenario& s, std::string_view path, const moe::Tables& t) {
    if (path == "serving.isl" && serving_on(s)) {
        s.workload.prompt_len = s.serving.isl;
        return true;
    }
    if (path == "serving.osl" && serving_on(s)) {
        s.workload.output_len = s.serving.osl;
        return true;
    }
    if (path != "serving.mode" || before.serving.mode == s.serving.mode) return false;
    const moe::ServingMode old = before.serving.mode, now = s.serving.mode;
    if (old == moe::ServingMode::off) {  // the Workload's lengths become the served requests
        s.serving.isl = std::max(1, s.workload.prompt_len);
        s.serving.osl = std::max(1, s.workload.output_len);
        // a step's lists of request lengths are step-level only (the simulation draws its own)
        s.workload.clear_lengths();
    } else if (now == moe::ServingMode::off) {  // and back: the served lengths stay the workload's
        s.workload.prompt_len = s.serving.isl;
        s.workload.output_len = s.serving.osl;
    }
    if (now == moe::ServingMode::disaggregated) seed_pools(s, old, t);
    if (old == moe::ServingMode::disaggregated && now == moe::ServingMode::aggregated) {
        // one layout again: the decode pool's, with the same clients (serving.concurrency)
        s.parallel = s.serving.decode.parallel;
    }
    return true;
}

bool fit_pools_to(AppState& st, int gpus) {
    moe::Scenario s = st.scenario;
    std::string why;
    if (!moe::fit_pools(s, gpus, *st.tables, why)) {
        st.fit_pools_error = "Cannot fit the pools to " + std::to_string(gpus) + " GPUs: " + why + ".";
        st.publish_pending = true;
        return false;
    }
    st.fit_pools_error.clear();
    set_scenario(st, std::move(s));
    st.last_action = "fit_pools:" + std::to_string(gpus);
    return true;
}

}  // namespace web
