// plan_front.cpp — the planner's front: a point's verdict against the SLA and its reason, the Pareto front over tokens/s
// per GPU and per user, and the plan's summary.
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

// ---- [SECTION] front ----------------------------------------------------------------------------------------
const char* plan_objective_name(PlanObjective o) { return o == PlanObjective::cost ? "cost" : "throughput"; }

bool parse_plan_objective(std::string_view text, PlanObjective& out) {
    if (text == "throughput") out = PlanObjective::throughput;
    else if (text == "cost") out = PlanObjective::cost;
    else return false;
    return true;
}

double objective_value(const PointResult& r, PlanObjective objective) {
    if (objective == PlanObjective::throughput) return r.output_tokens_per_s_per_gpu;
    return r.usd_per_mtok > 0 ? 1e6 / r.usd_per_mtok : 0.0;
}

namespace {
// The numbers the SLA is checked against: the means, or with sla.at_p90 the band's high end of TTFT and TPOT.
struct SlaView {
    double ttft_ms, tpot_ms, per_user;
    const char* at;
};
SlaView sla_view(const PointResult& r, const Sla& sla) {
    if (!sla.at_p90) return {r.ttft_ms, r.tpot_ms, r.tokens_per_s_per_user, ""};
    const double tpot = r.tpot_ms_p90 > 0 ? r.tpot_ms_p90 : r.tpot_ms;
    return {r.ttft_ms_p90 > 0 ? r.ttft_ms_p90 : r.ttft_ms, tpot, tpot > 0 ? 1000.0 / tpot : r.tokens_per_s_per_user, " (p90)"};
}
}  // namespace

Verdict judge(const PointResult& r, const Sla& sla) {
    if (!r.ok) return Verdict::error;
    if (!r.fits) return Verdict::no_fit;
    const SlaView v = sla_view(r, sla);
    if (sla.ttft_ms > 0 && v.ttft_ms > sla.ttft_ms) return Verdict::ttft;
    if (sla.tpot_ms > 0 && v.tpot_ms > sla.tpot_ms) return Verdict::tpot;
    if (sla.min_tokens_per_s_per_user > 0 && v.per_user < sla.min_tokens_per_s_per_user) return Verdict::per_user;
    return Verdict::candidate;
}

std::string verdict_reason(const PointResult& r, const Sla& sla) {
    if (!r.ok) return r.error;
    std::string out;
    char buf[96];
    auto add = [&](const char* text) { out += (out.empty() ? "" : "; ") + std::string(text); };
    if (!r.fits) add("does not fit in memory");
    const SlaView v = sla_view(r, sla);
    if (sla.ttft_ms > 0 && v.ttft_ms > sla.ttft_ms) {
        std::snprintf(buf, sizeof buf, "ttft%s %.1f ms > %g", v.at, v.ttft_ms, sla.ttft_ms);
        add(buf);
    }
    if (sla.tpot_ms > 0 && v.tpot_ms > sla.tpot_ms) {
        std::snprintf(buf, sizeof buf, "tpot%s %.2f ms > %g", v.at, v.tpot_ms, sla.tpot_ms);
        add(buf);
    }
    if (sla.min_tokens_per_s_per_user > 0 && v.per_user < sla.min_tokens_per_s_per_user) {
        std::snprintf(buf, sizeof buf, "%.1f tokens/s per user%s < %g", v.per_user, v.at, sla.min_tokens_per_s_per_user);
        add(buf);
    }
    return out;
}

std::vector<std::size_t> pareto_front(const std::vector<double>& per_gpu, const std::vector<double>& per_user,
                                      const std::vector<bool>& candidate) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < per_gpu.size(); ++i)
        if (candidate[i]) order.push_back(i);
    // Best per GPU first; among equals, best per user first; then the lower index (the simpler point: the space
    // is enumerated with the plainer options first).
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (per_gpu[a] != per_gpu[b]) return per_gpu[a] > per_gpu[b];
        if (per_user[a] != per_user[b]) return per_user[a] > per_user[b];
        return a < b;
    });
    // A point is on the front when its per-user rate beats every point with at least its per-GPU rate.
    std::vector<std::size_t> front;
    bool any = false;
    double best_user = 0;
    for (std::size_t i : order) {
        if (!any || per_user[i] > best_user) {
            front.push_back(i);
            best_user = per_user[i];
            any = true;
        }
    }
    return front;
}

// ---- PlanFront
// The front is kept in its final order (per GPU descending, then per user descending, then index ascending), where
// the per-user rate strictly rises: a point is dominated exactly when the row just before its place has at least
// its per-user rate, and a new row dominates the run of rows right after it whose per-user rate it matches or beats.
// (D(a, b): a has >= per GPU and >= per user, and is better in one or has the lower index. Transitive, so keeping
// the undominated points of what came so far, in any order, ends with the undominated points of all of them.)
void PlanFront::insert(const Row& row) {
    const double g = objective_value(row.result, objective_), u = row.result.tokens_per_s_per_user;
    const auto before = [&](const Row& a) {  // does `a` come before `row` in the front's order?
        const double ag = objective_value(a.result, objective_), au = a.result.tokens_per_s_per_user;
        if (ag != g) return ag > g;
        if (au != u) return au > u;
        if (a.group != row.group) return a.group < row.group;
        return a.index < row.index;
    };
    const auto at = std::partition_point(rows_.begin(), rows_.end(), before);
    if (at != rows_.begin() && std::prev(at)->result.tokens_per_s_per_user >= u) return;  // dominated
    auto end = at;
    while (end != rows_.end() && end->result.tokens_per_s_per_user <= u) ++end;
    const std::ptrdiff_t place = at - rows_.begin();
    rows_.erase(at, end);
    rows_.insert(rows_.begin() + place, row);
    sorted_.clear();
}

Verdict PlanFront::add(std::uint64_t index, const PlanPoint& p, const PointResult& r, std::uint32_t group) {
    const Verdict v = judge(r, sla_);
    ++counts_[int(v)];
    ++points_;
    if (v == Verdict::candidate) insert({index, group, p, r});
    return v;
}

void PlanFront::merge(const PlanFront& other) {
    for (int v = 0; v < 6; ++v) counts_[v] += other.counts_[v];
    points_ += other.points_;
    for (const Row& row : other.rows_) insert(row);
}

void PlanFront::finish() {
    sorted_.clear();
    for (const Row& row : rows_) sorted_.push_back(row.index);
    std::sort(sorted_.begin(), sorted_.end());
}

bool PlanFront::on_front(std::uint64_t index) const { return std::binary_search(sorted_.begin(), sorted_.end(), index); }

PlanSummary summarize_plan(const std::vector<PlanPoint>& points, const std::vector<PointResult>& results, const Sla& sla,
                           PlanObjective objective, const std::vector<bool>* among) {
    PlanSummary sum;
    const std::size_t n = std::min(points.size(), results.size());
    sum.verdicts.resize(n);
    std::vector<double> gpu(n), user(n);
    std::vector<bool> cand(n);
    for (std::size_t i = 0; i < n; ++i) {
        sum.verdicts[i] = judge(results[i], sla);
        ++sum.counts[int(sum.verdicts[i])];
        cand[i] = sum.verdicts[i] == Verdict::candidate && (!among || (i < among->size() && (*among)[i]));
        gpu[i] = objective_value(results[i], objective);
        user[i] = results[i].tokens_per_s_per_user;
    }
    sum.front = pareto_front(gpu, user, cand);
    return sum;
}


}  // namespace moe
