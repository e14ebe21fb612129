// plan.h — the planner (DESIGN §9): the best deployments of one model on a GPU budget under an SLA.
//
// Room: core/plan/ — the planner: the space of layouts, formats and batches, its evaluation, the SLA verdicts,
// the Pareto front and the engines' launch commands. The top layer: may include every other folder.
//
//   moe::PlanRequest req;  req.gpus = 64;  req.sla.tpot_ms = 30;             // + a --space file, if any:
//   moe::Issues errs;  moe::plan_space_from_json(space_json, req.space, errs);
//   std::vector<moe::PlanPoint> pts = moe::enumerate_plan(base, req, errs);   // deterministic order
//   std::vector<moe::PointResult> res(pts.size());
//   moe::evaluate_plan_range(base, pts, 0, pts.size(), moe::builtin_tables(), res.data());  // any slices, any threads
//   moe::PlanSummary sum = moe::summarize_plan(pts, res, req.sla);          // front (best first) + counts by reason
//   moe::Scenario s = base;  moe::apply_point(s, pts[sum.front[0]]);         // the row's scenario: link, eval
//   std::string cmd = moe::launch_command(s, pts[sum.front[0]], moe::ServingEngine::sglang);
//
// Without holding the points (the CLI: memory independent of the space's size): PlanEnumerator walks the same
// points in the same order, and PlanFront keeps the counts and the front while results stream by:
//   moe::PlanEnumerator space;  if (!space.start(base, req, errs)) ...;   // refuses more than req.max_points
//   moe::PlanFront front(req.sla);  std::uint64_t i = 0;
//   space.for_each([&](const moe::PlanPoint& p) { front.add(i++, p, evaluate(p)); return true; });
//   front.rows() ...                                                        // == summarize_plan()'s front
//
// The objective comes from one function, evaluate_point(): the serving layer's TTFT, TPOT and tokens/s when the
// base scenario turns it on (evaluate()), else the step-level model's (estimate(): prefill TTFT, decode TPOT and
// tokens/s, memory fit). Pure, no I/O, no threads: the CLI splits evaluate_plan_range() across cores, the page across frames.
//
// The space: layouts (tp, dp, ep, pp) whose world tp*dp*pp divides the GPU budget (the rest of the budget runs
// replicas of it), tp dividing the attention heads, ep dividing tp*dp and the routed experts, experts' TP
// (tp*dp/ep) dividing their intermediate size; then weight and KV formats the model and GPU allow, MTP draft tokens
// 0..3 when the model has MTP layers, two-batch overlap and the all-to-all backend (only where ep > 1: they change
// nothing otherwise), and the decode batch per attention-DP rank, innermost.
//
// Serving modes (the serving layer, DESIGN §8; only when the base scenario's serving.mode is not off):
// aggregated (one layout serves prompts and decoding; concurrency = batch * dp) and disaggregated (a prefill pool
// and a decode pool, each its own layout: the decode layout is the point's tp/dp/ep/pp, the prefill layout one of a
// few per prefill-worker size, chosen once per plan by their prompts per second per GPU; prefill:decode worker
// counts whose GPUs divide the budget). Without the serving layer the step-level model ranks aggregated layouts.
//
// PlanSearch runs the same search in slices (the page: a few thousand points per frame, with a progress bar):
//   moe::PlanSearch search;  search.start(base, req, errs);
//   while (!search.done()) search.step(2000, tables);      // progress() in [0, 1]
//   search.summary().front ...                              // the same numbers as evaluate_plan_range
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/scenario/scenario.h"
#include "core/data/tables.h"
#include "core/base/types.h"

namespace moe {

// Inference engines a plan row can be launched with (the scenario's runtime.engine, less `ideal`).
enum class ServingEngine : std::uint8_t { sglang, vllm, trtllm };
const char* serving_engine_name(ServingEngine e);
bool parse_serving_engine(std::string_view text, ServingEngine& out);
// The scenario's engine (runtime.engine) whose launch commands a plan prints (ideal: SGLang's), and back.
ServingEngine serving_engine_of(EngineKind k);
EngineKind engine_kind_of(ServingEngine e);

enum class PlanMode : std::uint8_t { aggregated, disaggregated };

// What the front ranks by (issue 28): output tokens/s per GPU (throughput), or output tokens per USD, i.e. the
// lowest serving.usd_per_mtok_output first (cost: the GPU-hour price over the tokens; it differs from throughput
// only between GPUs of different prices, `plan --hardware a,b,c`). The other axis is tokens/s per user either way.
enum class PlanObjective : std::uint8_t { throughput, cost };
const char* plan_objective_name(PlanObjective o);
bool parse_plan_objective(std::string_view text, PlanObjective& out);

// One point of the search space. Small and trivially copyable: PlanSearch (the page) holds one per point, the
// CLI a batch of them.
struct PlanPoint {
    int tp = 1, dp = 1, ep = 1, pp = 1;
    int batch = 1;                 // decode sequences per attention-DP rank (serving: concurrency = batch * dp)
    int replicas = 1;              // copies of this layout in the budget (gpus / world)
    std::uint8_t mtp = 0;          // MTP draft tokens
    DtypeSel weights, kv_cache;    // weights: auto = the checkpoint's formats
    bool two_batch_overlap = false;
    A2ABackend a2a = A2ABackend::auto_;
    PlanMode mode = PlanMode::aggregated;
    // disaggregated: tp/dp/ep/pp are one decode worker's layout, `batch` its requests per DP rank; the prefill
    // workers' layout (pipeline 1, one prompt per forward per DP rank) and the two pools' worker counts:
    std::int16_t prefill_tp = 1, prefill_dp = 1, prefill_ep = 1;
    std::int16_t prefill_workers = 0, decode_workers = 0;
    int decode_world() const { return tp * dp * pp; }
    // the clients the point is planned for (serving.concurrency): batch per DP rank on every decode rank
    int clients() const { return batch * dp * (mode == PlanMode::disaggregated ? decode_workers : 1); }
    int prefill_world() const { return prefill_tp * prefill_dp; }
    // GPUs of one replica (aggregated: the layout; disaggregated: both pools)
    int world() const {
        return mode == PlanMode::disaggregated ? prefill_workers * prefill_world() + decode_workers * decode_world()
                                               : tp * dp * pp;
    }
};

// The search space; an empty list means "every value that makes sense" (see the file comment). JSON keys are
// the field names; `plan_space_to_json` writes the resolved space back.
struct PlanSpace {
    std::vector<int> tp, dp, ep, pp;          // pp default: 1
    std::vector<int> batch;                   // default: 1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512
    std::vector<int> mtp_draft_tokens;        // default: 0..3 with MTP layers, else 0
    std::vector<DtypeSel> weights;            // default: the checkpoint's, plus lower formats the GPU computes in
    std::vector<DtypeSel> kv_cache;           // default: bf16, and fp8 when the GPU has FP8
    std::vector<int> two_batch_overlap;       // 0/1; default: off, on
    std::vector<A2ABackend> a2a_backend;      // default per engine: sglang auto + allgather; vllm deepep_low_latency + allgather; trtllm auto
    std::vector<PlanMode> mode;               // default: aggregated, and disaggregated with the serving layer on
    std::vector<int> prefill_workers;         // disaggregated: default 1..8
    std::vector<int> decode_workers;          // disaggregated: default 1..8
    int min_gpus_per_replica = 1;             // replicas smaller than this are skipped
    int max_gpus_per_replica = 0;             // 0: the whole budget
};

// Reads a --space object ({"tp":[1,2,4,8], "batch":[16,32], "weights":["fp8"], ...}); unknown keys and bad values
// are issues naming "space.KEY". Keys not given keep `space`'s value.
bool plan_space_from_json(const nlohmann::json& j, PlanSpace& space, Issues& errors);
nlohmann::json plan_space_to_json(const PlanSpace& space);

struct Sla {
    double ttft_ms = 0;                       // 0: no limit
    double tpot_ms = 0;
    double min_tokens_per_s_per_user = 0;
    // --sla-at p90 (issue 28): the TTFT and TPOT limits (and tokens/s per user, 1000 / TPOT) hold at the band's p90,
    // not at the mean (a point without a band: its mean)
    bool at_p90 = false;
};

// The largest space a plan searches (about 2 to 5 minutes of one core at 1-3 us per point); a larger one is refused
// with its size and how to narrow it.
inline constexpr std::uint64_t kMaxPlanPoints = 100'000'000;

// The TTFT limit a serving plan gets when the user sets none (issue 26): 10 s. A deployment whose first token takes
// longer is not an interactive service: such rows were the plans' "best" ones (batch 512 per rank, thousands of
// clients queueing for a prefill pool, 54-237 s to the first token) and nothing said so. It applies only with the
// serving layer on (a step-level TTFT is one prompt's own forwards, no queue); the CLI's --ttft-ms sets another
// limit and --ttft-ms none lifts it (docs/cli.md).
constexpr double kDefaultServingTtftMs = 10000;
// The TTFT limit of a plan on `base` when the user asked for `given_ms` (0: none given): it, or the serving default.
inline double plan_ttft_limit_ms(const Scenario& base, double given_ms) {
    return given_ms > 0 ? given_ms : base.serving.mode != ServingMode::off ? kDefaultServingTtftMs : 0;
}

struct PlanRequest {
    int gpus = 8;
    Sla sla;
    PlanSpace space;
    ServingEngine engine = ServingEngine::sglang;
    PlanObjective objective = PlanObjective::throughput;
    std::uint64_t max_points = kMaxPlanPoints;  // a larger space is an issue naming "space"
};

// The space with its defaults filled in for this model, GPU and budget; every list without repeats (the first of
// equal values kept, in order: a repeated value would only repeat points).
PlanSpace resolve_space(const Scenario& base, const PlanRequest& req);
// Every point of the resolved space, in a fixed order: replica size ascending, then pp, tp, ep, weights, KV, MTP,
// two-batch overlap, backend, and batch innermost. Layouts the model or engine cannot run are left out (the engine's
// limits: vLLM's EP is all of tp*dp or none; TensorRT-LLM's attention DP has attention TP 1). Issues: bad budget.
// Disaggregated points need the prefill layouts chosen first: a few estimate() calls per candidate layout, on
// `tables`. Issues: bad budget, disaggregated without the serving layer.
std::vector<PlanPoint> enumerate_plan(const Scenario& base, const PlanRequest& req, Issues& errors,
                                      const Tables& tables = builtin_tables());

// The space as a walk: resolved and sized once (disaggregated points' prefill layouts chosen here), then its
// points in enumerate_plan()'s order without storing them. size() multiplies instead of listing, so a huge space
// is refused at once: start() fails with an issue naming "space" when it has more than req.max_points points.
class PlanEnumerator {
public:
    // Issues: bad budget, disaggregated without the serving layer, a space over req.max_points.
    bool start(const Scenario& base, const PlanRequest& req, Issues& errors, const Tables& tables = builtin_tables());
    bool started() const { return started_; }
    const PlanSpace& space() const { return space_; }      // resolved
    std::uint64_t size() const { return aggregated_ + disaggregated_; }  // also after a refusal for the size
    std::uint64_t aggregated_points() const { return aggregated_; }
    std::uint64_t disaggregated_points() const { return disaggregated_; }
    // Calls each(point) for every point in order, until it returns false; false when stopped early.
    bool for_each(const std::function<bool(const PlanPoint&)>& each) const;

    struct PrefillLayout {                   // a prefill worker's layout (pipeline 1)
        int tp = 1, dp = 1, ep = 1;
        int world() const { return tp * dp; }
    };

private:
    template <class F> void each_layout(int world, F&& f) const;
    template <class F> void each_option(PlanPoint p, F&& f) const;
    std::uint64_t worker_pairs(int prefill_world, int decode_world) const;
    const std::vector<int>& divisors_of(int n) const;

    bool started_ = false;
    Scenario base_;
    PlanRequest req_;
    PlanSpace space_;
    std::vector<std::vector<PrefillLayout>> prefill_;  // per (weights, KV) pair
    std::vector<std::pair<int, std::vector<int>>> divisors_;  // every divisor of the budget, with its own divisors
    mutable std::vector<std::pair<std::pair<int, int>, std::uint64_t>> pairs_;  // worker_pairs() memo (sizing only)
    std::uint64_t aggregated_ = 0, disaggregated_ = 0, layouts_ = 0;  // layouts: aggregated + decode pools'
};

// Sets the point's fields on a scenario (in place: no copies of the model). Phase "both" (TTFT and TPOT). With the
// serving layer on, serving.mode follows the point (aggregated: concurrency = batch * dp; disaggregated: the pools).
void apply_point(Scenario& s, const PlanPoint& p);

// The planner's objective for one scenario.
struct PointResult {
    double ttft_ms = 0;
    double ttft_queue_ms = 0;                 // of ttft_ms: waiting for prefill capacity and behind the first wave
    double tpot_ms = 0;
    double ttft_ms_p90 = 0, tpot_ms_p90 = 0;  // the band's high end (0: no band; the SLA at p90 then takes the mean)
    double output_tokens_per_s_per_gpu = 0;
    double tokens_per_s_per_user = 0;
    double usd_per_mtok = 0;                  // USD per million output tokens at the scenario's GPU-hour price (0: none)
    bool fits = false;                        // disaggregated: the decode pool's KV and the prefill worker's forward
    int gpus = 0;                             // GPUs of one replica
    bool ok = false;                          // false: `error` says why (invalid scenario)
    std::string error;
};
// The screening pass: the serving layer's closed form (fast; serving.h, ServingMethod).
PointResult evaluate_point(const Scenario& s, const Tables& tables);
// The same point by the serving simulation (what `eval` gives): the front's rows are re-ranked by it (refine()).
PointResult evaluate_point_simulated(const Scenario& s, const Tables& tables);
// The value the front maximises for `objective`: output tokens/s per GPU, or output tokens per USD (1e6 /
// usd_per_mtok; 0 without a price).
double objective_value(const PointResult& r, PlanObjective objective);

// evaluate_point() for points [begin, end) on `base` with each point applied; out[i - begin] for point i.
void evaluate_plan_range(const Scenario& base, const std::vector<PlanPoint>& points, std::size_t begin,
                         std::size_t end, const Tables& tables, PointResult* out);

// Why a point is not a candidate (the first reason that applies, in this order).
enum class Verdict : std::uint8_t { candidate, error, no_fit, ttft, tpot, per_user };
const char* verdict_name(Verdict v);
Verdict judge(const PointResult& r, const Sla& sla);
// "ttft 812.3 ms > 500; tpot 35.1 ms > 30" — every SLA term missed (or the error / the memory shortfall).
std::string verdict_reason(const PointResult& r, const Sla& sla);

// The Pareto front of (output tokens/s per GPU, tokens/s per user), both maximised, over the points whose
// `candidate` flag is set: indices, best tokens/s per GPU first. No point of the front is dominated by any
// candidate; of exactly equal points only the first (lowest index) is kept. O(n log n), deterministic.
std::vector<std::size_t> pareto_front(const std::vector<double>& per_gpu, const std::vector<double>& per_user,
                                      const std::vector<bool>& candidate);

// The plan's counts and Pareto front while results stream by, keeping only the front's points: memory O(front),
// not O(points). Points may come in any order and from any number of PlanFronts (merge()); the front is the one
// summarize_plan() finds over the same points (not dominated by any candidate; of equal points the lowest index).
class PlanFront {
public:
    explicit PlanFront(const Sla& sla = Sla(), PlanObjective objective = PlanObjective::throughput)
        : sla_(sla), objective_(objective) {}
    struct Row {
        std::uint64_t index = 0;             // the point's place in the space's order
        std::uint32_t group = 0;             // which search it came from (plan --hardware / --engine lists: one per
                                             // GPU and engine); ties go to the lower (group, index)
        PlanPoint point;
        PointResult result;
    };
    Verdict add(std::uint64_t index, const PlanPoint& p, const PointResult& r, std::uint32_t group = 0);  // counts it; returns its verdict
    void merge(const PlanFront& other);
    const std::vector<Row>& rows() const { return rows_; }  // best objective first (then per user, then index)
    std::uint64_t count(Verdict v) const { return counts_[int(v)]; }
    std::uint64_t points() const { return points_; }
    // Re-rank the front by the serving simulation (issue 25): each row's numbers from `eval` (the planner screens
    // with the closed form, evaluate_point_simulated() gives the row what `eval` prints); a row that no longer meets
    // the SLA leaves the front and is counted under its new verdict.
    template <class Eval>
    void refine(Eval&& eval) {
        std::vector<Row> old;
        old.swap(rows_);
        for (Row& r : old) {
            r.result = eval(r);
            const Verdict v = judge(r.result, sla_);
            if (v != Verdict::candidate) {
                --counts_[int(Verdict::candidate)];
                ++counts_[int(v)];
            } else {
                insert(r);
            }
        }
        sorted_.clear();
    }
    // Is point `index` on the front? (binary search over the front's indices, sorted once by finish())
    void finish();
    bool on_front(std::uint64_t index) const;

private:
    void insert(const Row& row);
    Sla sla_;
    PlanObjective objective_ = PlanObjective::throughput;
    std::vector<Row> rows_;
    std::vector<std::uint64_t> sorted_;
    std::uint64_t counts_[6] = {};
    std::uint64_t points_ = 0;
};

struct PlanSummary {
    std::vector<std::size_t> front;           // indices into the points, best first
    std::vector<Verdict> verdicts;            // one per point
    std::size_t counts[6] = {};               // points per Verdict
};
// among: only these points may be on the front (the front re-ranked by the simulation: PlanSearch); the counts
// are over every point.
PlanSummary summarize_plan(const std::vector<PlanPoint>& points, const std::vector<PointResult>& results, const Sla& sla,
                           PlanObjective objective = PlanObjective::throughput,
                           const std::vector<bool>* among = nullptr);

// The plan in slices: enumerate once, evaluate a slice per call, summarise at the end. The results are those of
// evaluate_plan_range() over the same points (the same function on the same scenarios), whatever the slices.
class PlanSearch {
public:
    // Copies the base and the request, enumerates the space. False (and nothing to do) on issues.
    // refine_front false: the results stay the screening pass's (summary() over them), for a caller that merges
    // several searches' fronts and re-ranks the merged one, as `plan --hardware a,b --engine x,y` does (the page).
    bool start(const Scenario& base, const PlanRequest& req, Issues& errors, const Tables& tables = builtin_tables(),
               bool refine_front = true);
    // Evaluates up to `max_points` more points; returns how many. Summarises when the last one is done.
    std::size_t step(std::size_t max_points, const Tables& tables);
    bool started() const { return started_; }
    bool done() const { return started_ && next_ == points_.size(); }
    double progress() const { return points_.empty() ? (started_ ? 1.0 : 0.0) : double(next_) / double(points_.size()); }
    std::size_t evaluated() const { return next_; }
    const Scenario& base() const { return base_; }
    const PlanRequest& request() const { return req_; }
    const std::vector<PlanPoint>& points() const { return points_; }
    const std::vector<PointResult>& results() const { return results_; }  // the first evaluated() are set
    const PlanSummary& summary() const { return summary_; }               // after done()
    Scenario scenario_of(std::size_t i) const;                            // the base with point i applied

private:
    bool started_ = false;
    Scenario base_, scratch_;
    PlanRequest req_;
    std::vector<PlanPoint> points_;
    std::vector<PointResult> results_;
    std::vector<bool> refined_;  // results_[i] is the simulation's (the front, re-ranked)
    bool refine_front_ = true;
    std::size_t next_ = 0;
    PlanSummary summary_;
};

// The command that starts this layout on `engine` (one line; multi-node layouts name the node rank variables).
// Disaggregated points: the decode workers' command; prefill_launch_command gives the prefill workers' ("" for
// aggregated points).
std::string launch_command(const Scenario& s, const PlanPoint& p, ServingEngine engine);
// The rules of an engine's launch flags that a command breaks, each "id: rule (source)"; empty: it passes
// (core/plan/launch_rules.cpp: what must divide what, which flags go together, which values are allowed).
std::vector<std::string> check_launch_command(ServingEngine engine, std::string_view command);
std::size_t launch_rule_count(ServingEngine engine);
std::string prefill_launch_command(const Scenario& s, const PlanPoint& p, ServingEngine engine);
// The HuggingFace repository of the scenario's model (preset ids map to their source; inline configs give their
// _name_or_path), for launch commands.
std::string model_repo(const Scenario& s);

// ---- a plan row as text (plan_csv.cpp): `moe-roofline plan --format csv` and the page's CSV export, byte for byte
std::string plan_weights_text(const Scenario& base, const DtypeSel& w);  // "fp8", or the checkpoint's "bf16/fp8"
std::string plan_kv_text(const DtypeSel& kv);
// A row whose TTFT is mostly waiting for prefill (queue and first wave over half of it; issue 26), and its note
// ("TTFT mostly queueing: 83% of it waits for prefill"; "" when not).
bool plan_ttft_mostly_queueing(const PointResult& r);
std::string plan_queue_note(const PointResult& r);
// The CSV's reason cell: a front row's note, "dominated by a point of the front", or the SLA terms it misses.
std::string plan_row_reason(const PointResult& r, int rank, std::string_view status, const Sla& sla);
// `scratch` := the row's scenario: the base's serving fields, then the point (scratch starts as a copy of base).
void plan_row_scenario(const Scenario& base, const PlanPoint& p, Scenario& scratch);
std::string plan_csv_header();
struct PlanCsvContext {
    const Scenario* base = nullptr;
    Scenario* scratch = nullptr;       // a copy of *base, reused for each row's scenario
    Sla sla;
    ServingEngine engine = ServingEngine::sglang;
    std::string base_url;              // the rows' page links
    std::string hardware;              // the rows' GPU (plan --hardware: one context per search)
};
// One row (rank 0: not on the front; status "front", "dominated" or a verdict name), newline included.
// joules_per_token: the row's J per output token (issue 28: front rows only; 0 leaves the cell empty).
void append_plan_csv_row(std::string& out, const PlanCsvContext& c, const PlanPoint& p, const PointResult& r, int rank,
                         std::string_view status, double joules_per_token = 0);

// The smallest GPU count on which the scenario fits (issue 26: a model that does not fit says it and the page
// offers "use N GPUs"): the first world, trying 2, 4, 8, ... up to `max_gpus`, with a layout the model can run
// (tp dividing the heads, else the rest as attention DP; experts spread over every GPU) whose estimate() fits in
// memory (with the serving layer on: whose deployment fits). `ok` false: none up to max_gpus.
struct FitLayout {
    bool ok = false;
    int gpus = 0;
    ParallelConfig parallel;
};
FitLayout smallest_fitting_layout(const Scenario& s, const Tables& tables, int max_gpus = 1024);
// Disaggregated pools on exactly `gpus` GPUs (the page's "fit the pools to N GPUs"): workers of the decode pool's
// layout when two or more fill the budget (else of the smallest layout that holds the model), both pools of that
// layout, and the prefill:decode split that fits, keeps TTFT under kDefaultServingTtftMs and gives the most output
// tokens/s per GPU (failing the TTFT: the shortest TTFT). Sets s.serving's mode and pools; false with `why`.
bool fit_pools(Scenario& s, int gpus, const Tables& tables, std::string& why);

}  // namespace moe
