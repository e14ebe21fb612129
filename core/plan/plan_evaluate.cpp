// plan_evaluate.cpp — the planner's evaluation: a point applied to the scenario, evaluated once (the one objective),
// ranges of points, and the incremental PlanSearch.
#include "core/plan/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <tuple>

#include "core/base/json_util.h"
#include "core/serving/serving.h"
#include "core/step/estimate.h"

namespace moe {
using nlohmann::json;
using namespace detail;

// ---- [SECTION] evaluation -----------------------------------------------------------------------------------
void apply_point(Scenario& s, const PlanPoint& p) {
    s.parallel.tp = p.tp;
    s.parallel.dp = p.dp;
    s.parallel.ep = p.ep;
    s.parallel.pp = p.pp;
    s.workload.phase = PhaseSel::both;
    s.workload.batch = p.batch;
    s.precision.weights = p.weights;
    s.precision.kv_cache = p.kv_cache;
    s.runtime.speculative.draft_tokens = p.mtp;
    s.runtime.two_batch_overlap = p.two_batch_overlap;
    s.runtime.a2a_backend = p.a2a;
    if (s.serving.mode == ServingMode::off) return;  // the step-level model: aggregated layouts only
    if (p.mode == PlanMode::aggregated) {
        // With the serving layer on (the base scenario's serving.mode): concurrency = batch * dp (DESIGN §8.3).
        s.serving.mode = ServingMode::aggregated;
        s.serving.concurrency = p.batch * p.dp;
        return;
    }
    s.serving.mode = ServingMode::disaggregated;
    ParallelConfig& pre = s.serving.prefill.parallel;
    pre.tp = p.prefill_tp, pre.dp = p.prefill_dp, pre.ep = p.prefill_ep, pre.pp = 1;
    s.serving.prefill.workers = p.prefill_workers;
    s.serving.prefill.batch = 1;
    ParallelConfig& dec = s.serving.decode.parallel;
    dec.tp = p.tp, dec.dp = p.dp, dec.ep = p.ep, dec.pp = p.pp;
    s.serving.decode.workers = p.decode_workers;
    s.serving.decode.batch = p.batch;
    // the plan's load: clients that fill the decode slots (the batch is both the limit and the load it plans for)
    s.serving.concurrency = p.clients();
}

namespace {

PointResult from_serving(const ServingResult& sr, bool step_fits) {
    PointResult r;
    r.ok = true;
    r.ttft_ms = sr.ttft_ms;
    r.ttft_queue_ms = sr.ttft_queue_ms + sr.ttft_first_wave_ms;
    r.tpot_ms = sr.tpot_ms;
    if (sr.has_band) {
        r.ttft_ms_p90 = sr.ttft_ms_p90;
        r.tpot_ms_p90 = sr.tpot_ms_p90;
    }
    r.output_tokens_per_s_per_gpu = sr.output_tokens_per_s_per_gpu;
    r.tokens_per_s_per_user = sr.tokens_per_s_per_user;
    r.fits = sr.fits && step_fits;
    r.gpus = int(sr.gpus);
    return r;
}

bool all_finite(const ServingResult& r) {
    for (double v : {r.ttft_ms, r.tpot_ms, r.e2e_latency_ms, r.output_tokens_per_s_per_gpu, r.tokens_per_s_per_user, r.requests_per_s})
        if (!std::isfinite(v)) return false;
    return true;
}

std::string joined(const Issues& errors) {
    std::string t;
    for (const Issue& i : errors) t += (t.empty() ? "" : "; ") + i.text();
    return t;
}

}  // namespace

namespace {
// The point's USD per million output tokens at the scenario's GPU-hour price (cost.gpu_hour_usd, else the preset's).
PointResult priced(const Scenario& s, PointResult r) {
    const double price = s.cost.gpu_hour_usd > 0 ? s.cost.gpu_hour_usd : s.gpu.gpu_hour_usd;
    if (r.ok && price > 0 && r.output_tokens_per_s_per_gpu > 0) r.usd_per_mtok = usd_per_mtok(price, r.output_tokens_per_s_per_gpu);
    return r;
}

PointResult evaluate_point_memo(const Scenario& s, const Tables& tables, ServingStepMemo* memo,
                                ServingMethod method = ServingMethod::closed_form) {
    // The serving layer's numbers when the scenario turns it on, else the step-level model's.
    PointResult r;
    r.gpus = s.world();
    // (a plan point keeps no warnings: none are built)
    Estimate e;
    if (s.serving.mode != ServingMode::off) evaluate_into(s, tables, active_engines(), memo, e, false, /*energy=*/false, method);
    else estimate_into(s, tables, e, false);
    if (!e.ok) {
        r.error = joined(e.errors);
        return r;
    }
    if (e.serving.computed)  // disaggregated: the top-level layout is the decode pool's, its own fit is not asked
        return from_serving(e.serving, s.serving.mode == ServingMode::disaggregated ? e.serving.prefill_fits : e.memory.fits);
    r.ok = true;
    r.ttft_ms = e.prefill.ttft_ms;
    r.tpot_ms = e.decode.tpot_ms;
    r.output_tokens_per_s_per_gpu = e.decode.tokens_per_s_per_gpu;
    r.tokens_per_s_per_user = e.decode.tokens_per_s_per_user;
    r.fits = e.memory.fits;
    return r;
}
}  // namespace

PointResult evaluate_point(const Scenario& s, const Tables& tables) { return priced(s, evaluate_point_memo(s, tables, nullptr)); }
PointResult evaluate_point_simulated(const Scenario& s, const Tables& tables) {
    return priced(s, evaluate_point_memo(s, tables, nullptr, ServingMethod::simulation));
}

namespace {

// Disaggregated points in a range share their pools' steps: the decode pool's for consecutive points (the prefill
// choice and worker counts are innermost), the prefill pool's for every point with the same prefill layout and
// options. The same functions on the same scenarios as serving_steps(), so the same numbers as evaluate().
class PoolCache {
public:
    PointResult evaluate(const Scenario& s, const PlanPoint& p, const Tables& tables) {
        const auto pkey = std::make_tuple(int(p.prefill_tp), int(p.prefill_dp), int(p.prefill_ep), options(p));
        auto it = prefill_.find(pkey);
        if (it == prefill_.end()) {
            ServingSteps st;
            st.ok = serving_prefill_pool(s, tables, st);
            it = prefill_.emplace(pkey, std::move(st)).first;
        }
        const ServingSteps& pre = it->second;
        PointResult r;
        if (!pre.ok) {
            r.error = joined(pre.errors);
            return r;
        }
        const auto dkey = std::make_tuple(p.tp, p.dp, p.ep, p.pp, p.batch, options(p));
        if (!have_decode_ || dkey != decode_key_) {
            decode_ = ServingSteps();
            decode_.ok = serving_decode_pool(s, tables, decode_);
            decode_key_ = dkey;
            have_decode_ = true;
        }
        if (!decode_.ok) {
            r.error = joined(decode_.errors);
            return r;
        }
        ServingSteps st = decode_;
        st.prefill_dp = pre.prefill_dp;
        st.prefill_gpus_per_worker = pre.prefill_gpus_per_worker;
        st.prefill_tokens = pre.prefill_tokens;
        st.prefill_ms = pre.prefill_ms;
        st.chunk_tokens = pre.chunk_tokens;
        st.prefill_fits = pre.prefill_fits;
        serving_link(s, st);
        const EngineConstants k = engine_constants(active_engines(), s);
        ServingResult sr = serving_model(s, st, k);
        serving_band(k, sr);
        if (!all_finite(sr)) {
            r.error = Issue{"serving", "the serving model produced a non-finite number for this input (please report it)"}.text();
            return r;
        }
        return from_serving(sr, sr.prefill_fits);
    }

private:
    static std::tuple<int, int, int, int, int, int, int> options(const PlanPoint& p) {
        return {int(p.mtp), p.weights.is_auto, int(p.weights.value), p.kv_cache.is_auto, int(p.kv_cache.value),
                int(p.two_batch_overlap), int(p.a2a)};
    }
    std::map<std::tuple<int, int, int, std::tuple<int, int, int, int, int, int, int>>, ServingSteps> prefill_;
    bool have_decode_ = false;
    std::tuple<int, int, int, int, int, std::tuple<int, int, int, int, int, int, int>> decode_key_;
    ServingSteps decode_;
};

}  // namespace

void evaluate_plan_range(const Scenario& base, const std::vector<PlanPoint>& points, std::size_t begin,
                         std::size_t end, const Tables& tables, PointResult* out) {
    Scenario s = base;  // one copy per range; each point only sets plain fields
    PoolCache pools;
    // Aggregated points with the serving layer: consecutive points that differ only in the batch (innermost in the
    // enumeration; it sets the concurrency) share the steps the concurrency does not change (ServingStepMemo).
    ServingStepMemo memo;
    const PlanPoint* memo_point = nullptr;
    auto same_but_batch = [](const PlanPoint& a, const PlanPoint& b) {
        return a.tp == b.tp && a.dp == b.dp && a.ep == b.ep && a.pp == b.pp && a.mtp == b.mtp &&
               a.weights.is_auto == b.weights.is_auto && a.weights.value == b.weights.value &&
               a.kv_cache.is_auto == b.kv_cache.is_auto && a.kv_cache.value == b.kv_cache.value &&
               a.two_batch_overlap == b.two_batch_overlap && a.a2a == b.a2a && a.mode == b.mode;
    };
    for (std::size_t i = begin; i < end && i < points.size(); ++i) {
        const PlanPoint& p = points[i];
        apply_point(s, p);
        if (s.serving.mode == ServingMode::disaggregated) {
            out[i - begin] = priced(s, pools.evaluate(s, p, tables));
            memo_point = nullptr;
        } else if (s.serving.mode == ServingMode::aggregated) {
            if (!memo_point || !same_but_batch(*memo_point, p)) memo = ServingStepMemo();
            memo_point = &p;
            out[i - begin] = priced(s, evaluate_point_memo(s, tables, &memo));
        } else {
            out[i - begin] = evaluate_point(s, tables);
        }
    }
}

// ---- PlanSearch
bool PlanSearch::start(const Scenario& base, const PlanRequest& req, Issues& errors, const Tables& tables, bool refine_front) {
    *this = PlanSearch();
    refine_front_ = refine_front;
    base_ = base;
    req_ = req;
    points_ = enumerate_plan(base_, req_, errors, tables);
    if (!errors.empty()) {
        points_.clear();
        return false;
    }
    results_.resize(points_.size());
    refined_.assign(points_.size(), false);
    started_ = true;
    if (points_.empty()) summary_ = summarize_plan(points_, results_, req_.sla, req_.objective);
    return true;
}

std::size_t PlanSearch::step(std::size_t max_points, const Tables& tables) {
    if (!started_ || done()) return 0;
    const std::size_t end = std::min(points_.size(), next_ + max_points);
    evaluate_plan_range(base_, points_, next_, end, tables, results_.data() + next_);
    const std::size_t n = end - next_;
    next_ = end;
    if (done()) {
        summary_ = summarize_plan(points_, results_, req_.sla, req_.objective);
        // re-rank the front by the serving simulation, as PlanFront::refine() does for the CLI: the screened front's
        // rows get the numbers `eval` gives, and the front is the undominated ones among them
        if (refine_front_ && base_.serving.mode != ServingMode::off) {
            for (std::size_t i : summary_.front) {
                refined_[i] = true;
                results_[i] = evaluate_point_simulated(scenario_of(i), tables);
            }
            summary_ = summarize_plan(points_, results_, req_.sla, req_.objective, &refined_);
        }
    }
    return n;
}

Scenario PlanSearch::scenario_of(std::size_t i) const {
    Scenario s = base_;
    if (i < points_.size()) apply_point(s, points_[i]);
    return s;
}


}  // namespace moe
