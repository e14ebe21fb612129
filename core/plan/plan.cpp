// plan.cpp — the planner's space (see plan.h): engine and verdict names, the space's defaults and JSON in and out, and
// the enumeration of candidate deployments. The rest of the planner: plan_evaluate.cpp (each point's one objective,
// ranges, PlanSearch), plan_front.cpp (verdicts, reasons, the Pareto front, the summary), plan_launch.cpp (launch
// commands for SGLang, vLLM and TensorRT-LLM).
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

// ---- [SECTION] names ----------------------------------------------------------------------------------------
namespace {
const char* const kEngineNames[] = {"sglang", "vllm", "trtllm", nullptr};
const char* const kVerdictNames[] = {"candidate", "error", "no_fit", "ttft", "tpot", "per_user"};
const char* const kModeNames[] = {"aggregated", "disaggregated", nullptr};
}  // namespace

const char* serving_engine_name(ServingEngine e) { return kEngineNames[int(e)]; }
bool parse_serving_engine(std::string_view text, ServingEngine& out) {
    for (int i = 0; kEngineNames[i]; ++i)
        if (text == kEngineNames[i]) {
            out = ServingEngine(i);
            return true;
        }
    return false;
}
ServingEngine serving_engine_of(EngineKind k) {
    switch (k) {
        case EngineKind::vllm: return ServingEngine::vllm;
        case EngineKind::trtllm: return ServingEngine::trtllm;
        case EngineKind::sglang:
        case EngineKind::ideal: break;
    }
    return ServingEngine::sglang;
}
EngineKind engine_kind_of(ServingEngine e) {
    switch (e) {
        case ServingEngine::vllm: return EngineKind::vllm;
        case ServingEngine::trtllm: return EngineKind::trtllm;
        case ServingEngine::sglang: break;
    }
    return EngineKind::sglang;
}
const char* verdict_name(Verdict v) { return kVerdictNames[int(v)]; }

// ---- [SECTION] space ----------------------------------------------------------------------------------------
namespace {

std::vector<int> divisors(int n) {
    std::vector<int> d;
    for (int i = 1; i <= n; ++i)
        if (n % i == 0) d.push_back(i);
    return d;
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool is_16bit(Dtype d) { return d == Dtype::bf16 || d == Dtype::fp16 || d == Dtype::fp32; }

// Reads a JSON array of positive integers (or one integer) into `out`.
bool read_ints(const json& v, const std::string& path, int min, int max, std::vector<int>& out, Issues& errors) {
    const json list = v.is_array() ? v : json::array({v});
    std::vector<int> got;
    for (const json& x : list) {
        if (!is_number(x) || x.get<double>() != std::floor(x.get<double>()) || x.get<double>() < min || x.get<double>() > max) {
            errors.push_back({path, "must be whole numbers in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + shown(x)});
            return false;
        }
        got.push_back(x.get<int>());
    }
    if (got.empty()) {
        errors.push_back({path, "is empty"});
        return false;
    }
    out = std::move(got);
    return true;
}

bool read_strings(const json& v, const std::string& path, std::vector<std::string>& out, Issues& errors) {
    const json list = v.is_array() ? v : json::array({v});
    out.clear();
    for (const json& x : list) {
        if (!x.is_string()) {
            errors.push_back({path, "must be strings, got " + shown(x)});
            return false;
        }
        out.push_back(x.get<std::string>());
    }
    if (out.empty()) errors.push_back({path, "is empty"});
    return !out.empty();
}

json dtype_sel_json(const DtypeSel& d) { return d.is_auto ? "auto" : dtype_name(d.value); }

// Drops the values equal to an earlier one, keeping the order. Quadratic in the distinct values: fine for formats,
// backends and modes (a handful); integer lists (a --space of a million distinct batches) go through a sorted copy.
template <class T, class Eq>
void unique_in_order(std::vector<T>& v, Eq eq) {
    std::vector<T> out;
    for (const T& x : v)
        if (std::none_of(out.begin(), out.end(), [&](const T& y) { return eq(x, y); })) out.push_back(x);
    v = std::move(out);
}
void unique_in_order(std::vector<int>& v) {
    std::vector<std::pair<int, std::size_t>> sorted;  // (value, first place)
    for (std::size_t i = 0; i < v.size(); ++i) sorted.push_back({v[i], i});
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<bool> keep(v.size(), false);
    for (std::size_t i = 0; i < sorted.size(); ++i)
        if (i == 0 || sorted[i].first != sorted[i - 1].first) keep[sorted[i].second] = true;
    std::vector<int> out;
    for (std::size_t i = 0; i < v.size(); ++i)
        if (keep[i]) out.push_back(v[i]);
    v = std::move(out);
}

}  // namespace

bool plan_space_from_json(const json& j, PlanSpace& space, Issues& errors) {
    const std::size_t before = errors.size();
    if (!j.is_object()) {
        errors.push_back({"space", "must be a JSON object"});
        return false;
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        const std::string path = "space." + shown_text(key);
        const json& v = it.value();
        std::vector<std::string> names;
        if (key == "tp") read_ints(v, path, 1, 65536, space.tp, errors);
        else if (key == "dp") read_ints(v, path, 1, 65536, space.dp, errors);
        else if (key == "ep") read_ints(v, path, 1, 65536, space.ep, errors);
        else if (key == "pp") read_ints(v, path, 1, 4096, space.pp, errors);
        else if (key == "batch") read_ints(v, path, 1, 1000000, space.batch, errors);
        else if (key == "mtp_draft_tokens") read_ints(v, path, 0, 8, space.mtp_draft_tokens, errors);
        else if (key == "prefill_workers") read_ints(v, path, 1, 64, space.prefill_workers, errors);
        else if (key == "decode_workers") read_ints(v, path, 1, 64, space.decode_workers, errors);
        else if (key == "two_batch_overlap") {
            const json list = v.is_array() ? v : json::array({v});
            std::vector<int> got;
            for (const json& x : list) {
                if (!x.is_boolean()) {
                    errors.push_back({path, "must be true/false, got " + shown(x)});
                    got.clear();
                    break;
                }
                got.push_back(x.get<bool>() ? 1 : 0);
            }
            if (!got.empty()) space.two_batch_overlap = got;
            else if (list.empty()) errors.push_back({path, "is empty"});
        } else if (key == "weights" || key == "kv_cache") {
            if (!read_strings(v, path, names, errors)) continue;
            std::vector<DtypeSel> got;
            for (const std::string& n : names) {
                DtypeSel d;
                if (n == "auto") {
                    d.is_auto = true;
                } else if (parse_dtype(n, d.value) && d.value != Dtype::fp32 &&
                           (key == "weights" || d.value == Dtype::bf16 || d.value == Dtype::fp16 || d.value == Dtype::fp8)) {
                    d.is_auto = false;
                } else {
                    errors.push_back({path, "unknown format '" + shown_text(n) + "' (" +
                                                (key == "weights" ? "auto, bf16, fp16, fp8, mxfp4, nvfp4, int4" : "auto, bf16, fp16, fp8") + ")"});
                    got.clear();
                    break;
                }
                got.push_back(d);
            }
            if (!got.empty()) (key == "weights" ? space.weights : space.kv_cache) = got;
        } else if (key == "a2a_backend") {
            if (!read_strings(v, path, names, errors)) continue;
            std::vector<A2ABackend> got;
            for (const std::string& n : names) {
                int found = -1;
                for (int b = 0; b <= int(A2ABackend::pplx); ++b)
                    if (n == a2a_backend_name(A2ABackend(b))) found = b;
                if (found < 0 || A2ABackend(found) == A2ABackend::none) {
                    errors.push_back({path, "unknown backend '" + shown_text(n) + "' (auto, allgather, deepep_normal, deepep_low_latency, pplx)"});
                    got.clear();
                    break;
                }
                got.push_back(A2ABackend(found));
            }
            if (!got.empty()) space.a2a_backend = got;
        } else if (key == "mode") {
            if (!read_strings(v, path, names, errors)) continue;
            std::vector<PlanMode> got;
            for (const std::string& n : names) {
                if (n == "aggregated") {
                    got.push_back(PlanMode::aggregated);
                } else if (n == "disaggregated") {
                    got.push_back(PlanMode::disaggregated);
                } else {
                    errors.push_back({path, "unknown mode '" + shown_text(n) + "' (aggregated, disaggregated)"});
                    got.clear();
                    break;
                }
            }
            if (!got.empty()) space.mode = got;
        } else if (key == "min_gpus_per_replica" || key == "max_gpus_per_replica") {
            std::vector<int> one;
            if (v.is_array() || !read_ints(v, path, key[1] == 'a' ? 0 : 1, 65536, one, errors)) {
                if (v.is_array()) errors.push_back({path, "must be one whole number"});
                continue;
            }
            (key[1] == 'i' ? space.min_gpus_per_replica : space.max_gpus_per_replica) = one[0];
        } else {
            errors.push_back({path, "unknown key (tp, dp, ep, pp, batch, mtp_draft_tokens, weights, kv_cache, "
                                    "two_batch_overlap, a2a_backend, mode, prefill_workers, decode_workers, "
                                    "min_gpus_per_replica, max_gpus_per_replica)"});
        }
    }
    return errors.size() == before;
}

json plan_space_to_json(const PlanSpace& s) {
    json j = json::object();
    j["tp"] = s.tp;
    j["dp"] = s.dp;
    j["ep"] = s.ep;
    j["pp"] = s.pp;
    j["batch"] = s.batch;
    j["mtp_draft_tokens"] = s.mtp_draft_tokens;
    json w = json::array(), kv = json::array(), tbo = json::array(), a2a = json::array(), mode = json::array();
    for (const DtypeSel& d : s.weights) w.push_back(dtype_sel_json(d));
    for (const DtypeSel& d : s.kv_cache) kv.push_back(dtype_sel_json(d));
    for (int t : s.two_batch_overlap) tbo.push_back(t != 0);
    for (A2ABackend b : s.a2a_backend) a2a.push_back(a2a_backend_name(b));
    for (PlanMode m : s.mode) mode.push_back(kModeNames[int(m)]);
    j["weights"] = w;
    j["kv_cache"] = kv;
    j["two_batch_overlap"] = tbo;
    j["a2a_backend"] = a2a;
    j["mode"] = mode;
    j["prefill_workers"] = s.prefill_workers;
    j["decode_workers"] = s.decode_workers;
    j["min_gpus_per_replica"] = s.min_gpus_per_replica;
    j["max_gpus_per_replica"] = s.max_gpus_per_replica;
    return j;
}

PlanSpace resolve_space(const Scenario& base, const PlanRequest& req) {
    PlanSpace s = req.space;
    const ModelSpec& m = base.model;
    const GpuSpec& g = base.gpu;
    if (s.max_gpus_per_replica <= 0) s.max_gpus_per_replica = req.gpus;
    // tp/dp/ep empty: every divisor (filtered per layout in enumerate_plan)
    if (s.pp.empty()) s.pp = {1};
    if (s.batch.empty()) s.batch = {1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512};
    if (s.mtp_draft_tokens.empty()) {
        s.mtp_draft_tokens = {0};
        if (m.mtp_layers > 0 || base.runtime.speculative.method != SpecMethod::mtp) s.mtp_draft_tokens = {0, 1, 2, 3};
    }
    if (s.weights.empty()) {
        // The checkpoint's formats (auto), or what the scenario names; plus lower formats the GPU computes in
        // natively: FP8 for a 16-bit checkpoint, FP4 (NVFP4 on NVIDIA, MXFP4 on AMD) where the GPU has FP4.
        if (!base.precision.weights.is_auto) {
            s.weights = {base.precision.weights};
        } else {
            s.weights = {DtypeSel{}};
            const bool all16 = is_16bit(m.weight_dtype) && is_16bit(m.expert_dtype);
            if (all16 && g.dense_tflops_fp8 > 0) s.weights.push_back(DtypeSel{false, Dtype::fp8});
            if (!is_fp4_like(m.weight_dtype) && !is_fp4_like(m.expert_dtype) && g.dense_tflops_fp4 > 0)
                s.weights.push_back(DtypeSel{false, g.arch == "cdna3" || g.arch == "cdna4" ? Dtype::mxfp4 : Dtype::nvfp4});
        }
    }
    if (s.kv_cache.empty()) {
        if (!base.precision.kv_cache.is_auto) {
            s.kv_cache = {base.precision.kv_cache};
        } else {
            s.kv_cache = {DtypeSel{false, Dtype::bf16}};
            if (g.dense_tflops_fp8 > 0) s.kv_cache.push_back(DtypeSel{false, Dtype::fp8});
        }
    }
    if (s.two_batch_overlap.empty()) {
        s.two_batch_overlap = {0, 1};
        if (req.engine == ServingEngine::trtllm) s.two_batch_overlap = {0};
    }
    if (s.a2a_backend.empty()) {
        switch (req.engine) {
            case ServingEngine::sglang: s.a2a_backend = {A2ABackend::auto_, A2ABackend::allgather}; break;
            case ServingEngine::vllm: s.a2a_backend = {A2ABackend::deepep_low_latency, A2ABackend::allgather}; break;
            case ServingEngine::trtllm: s.a2a_backend = {A2ABackend::auto_}; break;
        }
    }
    if (s.mode.empty()) {
        s.mode = {PlanMode::aggregated};
        if (base.serving.mode != ServingMode::off) s.mode.push_back(PlanMode::disaggregated);
    }
    if (s.prefill_workers.empty()) s.prefill_workers = {1, 2, 3, 4, 5, 6, 7, 8};
    if (s.decode_workers.empty()) s.decode_workers = {1, 2, 3, 4, 5, 6, 7, 8};
    // A repeated value would repeat points (a --space list of 100,000 equal batches multiplied the work by as much).
    for (std::vector<int>* v : {&s.tp, &s.dp, &s.ep, &s.pp, &s.batch, &s.mtp_draft_tokens, &s.two_batch_overlap,
                                &s.prefill_workers, &s.decode_workers})
        unique_in_order(*v);
    for (std::vector<DtypeSel>* v : {&s.weights, &s.kv_cache})
        unique_in_order(*v, [](const DtypeSel& a, const DtypeSel& b) { return a.is_auto == b.is_auto && a.value == b.value; });
    unique_in_order(s.a2a_backend, [](A2ABackend a, A2ABackend b) { return a == b; });
    unique_in_order(s.mode, [](PlanMode a, PlanMode b) { return a == b; });
    return s;
}

namespace {

// Can the model run this layout? (the checks of validate_scenario that depend on the layout alone)
bool layout_ok(const Scenario& base, int tp, int dp, int ep, int pp) {
    const ModelSpec& m = base.model;
    if (m.num_heads % tp != 0) return false;
    if (m.attn != AttnKind::mla && m.num_kv_heads % tp != 0 && tp % m.num_kv_heads != 0) return false;
    if (pp > m.num_layers) return false;
    if ((tp * dp) % ep != 0) return false;
    if (!m.is_moe()) return ep == 1;
    if ((m.num_experts + base.routing.redundant_experts) % ep != 0) return false;
    return m.moe_intermediate % (tp * dp / ep) == 0;
}

// Can the engine express this layout and these options?
bool engine_ok(ServingEngine e, const PlanPoint& p, bool auto_deepep) {
    switch (e) {
        case ServingEngine::sglang: {  // --moe-a2a-backend none|deepep (+ --deepep-mode): no pplx
            // DeepEP only with ep_size = tp_size (all GPUs of the stage): launch_rules.cpp, sglang.deepep_ep_equals_tp
            const bool deepep = p.a2a == A2ABackend::deepep_normal || p.a2a == A2ABackend::deepep_low_latency ||
                                (p.a2a == A2ABackend::auto_ && auto_deepep);
            return p.a2a != A2ABackend::pplx && (p.ep == 1 || !deepep || p.ep == p.tp * p.dp);
        }
        case ServingEngine::vllm:    // --enable-expert-parallel: EP over all of tp*dp, or none; one backend
            return (p.ep == 1 || p.ep == p.tp * p.dp) && (p.ep == 1 || p.a2a != A2ABackend::auto_);
        case ServingEngine::trtllm:  // enable_attention_dp: attention TP 1; the MoE all-to-all is its own
            return (p.dp == 1 || p.tp == 1) && p.a2a == A2ABackend::auto_ && !p.two_batch_overlap;
    }
    return false;
}

}  // namespace

namespace {

using PrefillLayout = PlanEnumerator::PrefillLayout;

bool prefill_engine_ok(ServingEngine e, const PrefillLayout& l, const PlanPoint& p, bool auto_deepep) {
    PlanPoint q = p;
    q.tp = l.tp, q.dp = l.dp, q.ep = l.ep, q.pp = 1;
    if (q.ep == 1) q.a2a = A2ABackend::auto_, q.two_batch_overlap = false;
    return engine_ok(e, q, auto_deepep);
}

// The prefill layouts disaggregated points use, for one weight and KV format: for each prefill-worker size that
// leaves room for a decode worker, the layout with the most prompts per second per GPU and the one with the
// shortest prefill (the TTFT end), among those that hold their forward in memory. Evaluated with the space's first
// backend and no overlap; the points then apply their own to both pools.
std::vector<PrefillLayout> choose_prefill_layouts(const Scenario& base, const PlanRequest& req, const PlanSpace& s,
                                                  const DtypeSel& w, const DtypeSel& kv, const Tables& tables) {
    std::vector<PrefillLayout> chosen;
    Scenario x = base;
    x.precision.weights = w;
    x.precision.kv_cache = kv;
    x.runtime.speculative.draft_tokens = 0;
    x.runtime.two_batch_overlap = false;
    x.serving.mode = ServingMode::disaggregated;
    x.serving.prefill.batch = 1;
    const EngineConstants k = engine_constants(active_engines(), x);
    for (int wp : divisors(req.gpus)) {
        if (2 * wp > req.gpus || wp + 1 > s.max_gpus_per_replica) continue;
        bool any = false;
        PrefillLayout best_rate, best_time;
        double top_rate = 0, top_ms = 0;
        for (int tp : divisors(wp)) {
            const int dp = wp / tp;
            for (int ep : divisors(wp)) {
                if (!layout_ok(base, tp, dp, ep, 1)) continue;
                PlanPoint probe;
                probe.a2a = ep > 1 ? s.a2a_backend.front() : A2ABackend::auto_;
                const PrefillLayout l{tp, dp, ep};
                if (!prefill_engine_ok(req.engine, l, probe, auto_a2a_is_deepep(base))) continue;
                x.runtime.a2a_backend = probe.a2a;
                x.serving.prefill.parallel.tp = tp;
                x.serving.prefill.parallel.dp = dp;
                x.serving.prefill.parallel.ep = ep;
                x.serving.prefill.parallel.pp = 1;
                ServingSteps st;
                if (!serving_prefill_pool(x, tables, st) || !st.prefill_fits) continue;
                const double ms = prefill_forward_ms(x, st, k);
                const double rate = dp / (ms * wp);
                if (!any || rate > top_rate) best_rate = l, top_rate = rate;
                if (!any || ms < top_ms) best_time = l, top_ms = ms;
                any = true;
            }
        }
        if (!any) continue;
        chosen.push_back(best_rate);
        if (best_time.tp != best_rate.tp || best_time.dp != best_rate.dp || best_time.ep != best_rate.ep)
            chosen.push_back(best_time);
    }
    return chosen;
}

bool contains_mode(const std::vector<PlanMode>& v, PlanMode m) { return std::find(v.begin(), v.end(), m) != v.end(); }

// Counts that cannot wrap: a space's size is a product of list lengths (saturates at the largest uint64).
std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) { return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

std::string thousands(std::uint64_t n) {
    std::string t = std::to_string(n);
    for (int i = int(t.size()) - 3; i > 0; i -= 3) t.insert(std::size_t(i), ",");
    return t;
}

const std::vector<A2ABackend> kNoBackend = {A2ABackend::auto_};
const std::vector<int> kNoOverlap = {0};

}  // namespace

// ---- [SECTION] enumeration ----------------------------------------------------------------------------------
const std::vector<int>& PlanEnumerator::divisors_of(int n) const {
    // Every world, stage and tp*dp of the walk divides the budget: their divisors were listed by start().
    for (const auto& [d, list] : divisors_)
        if (d == n) return list;
    static const std::vector<int> none;
    return none;
}

// Every decode (or aggregated) layout of `world` GPUs the space allows, in the fixed order.
template <class F>
void PlanEnumerator::each_layout(int world, F&& f) const {
    const PlanSpace& s = space_;
    for (int pp : s.pp) {
        if (world % pp != 0) continue;
        const int stage = world / pp;
        const std::vector<int>& stage_divisors = divisors_of(stage);
        for (int tp : stage_divisors) {
            const int dp = stage / tp;
            if ((!s.tp.empty() && !contains(s.tp, tp)) || (!s.dp.empty() && !contains(s.dp, dp))) continue;
            for (int ep : stage_divisors) {  // the divisors of tp * dp
                if (!s.ep.empty() && !contains(s.ep, ep)) continue;
                if (!layout_ok(base_, tp, dp, ep, pp)) continue;
                f(tp, dp, ep, pp);
            }
        }
    }
}

// The options of a layout: formats, MTP, and (only where tokens move between expert ranks) overlap and backend.
// f(point, formats index) for each; the point's batch and pools are the caller's.
template <class F>
void PlanEnumerator::each_option(PlanPoint p, F&& f) const {
    const PlanSpace& s = space_;
    const std::vector<A2ABackend>& backends = p.ep > 1 ? s.a2a_backend : kNoBackend;
    const std::vector<int>& tbos = p.ep > 1 ? s.two_batch_overlap : kNoOverlap;
    for (std::size_t wi = 0; wi < s.weights.size(); ++wi)
        for (std::size_t ki = 0; ki < s.kv_cache.size(); ++ki)
            for (int mtp : s.mtp_draft_tokens) {
                if (mtp > 0 && base_.model.mtp_layers == 0 && base_.runtime.speculative.method == SpecMethod::mtp) continue;
                for (int tbo : tbos)
                    for (A2ABackend a2a : backends) {
                        p.mtp = std::uint8_t(mtp);
                        p.weights = s.weights[wi], p.kv_cache = s.kv_cache[ki];
                        p.two_batch_overlap = tbo != 0;
                        p.a2a = a2a;
                        if (!engine_ok(req_.engine, p, auto_a2a_is_deepep(base_))) continue;
                        if (!f(p, wi * s.kv_cache.size() + ki)) return;
                    }
            }
}

// Worker-count pairs (prefill, decode) whose replica of prefill_world and decode_world GPUs per worker divides the
// budget and fits the replica limits.
std::uint64_t PlanEnumerator::worker_pairs(int prefill_world, int decode_world) const {
    for (const auto& [key, n] : pairs_)
        if (key.first == prefill_world && key.second == decode_world) return n;
    const PlanSpace& s = space_;
    std::uint64_t n = 0;
    for (int np : s.prefill_workers)
        for (int nd : s.decode_workers) {
            const int total = np * prefill_world + nd * decode_world;
            if (req_.gpus % total == 0 && total >= s.min_gpus_per_replica && total <= s.max_gpus_per_replica) ++n;
        }
    pairs_.push_back({{prefill_world, decode_world}, n});
    return n;
}

bool PlanEnumerator::start(const Scenario& base, const PlanRequest& req, Issues& errors, const Tables& tables) {
    *this = PlanEnumerator();
    if (req.gpus < 1 || req.gpus > 65536) {
        errors.push_back({"gpus", std::to_string(req.gpus) + " is out of range [1, 65536]"});
        return false;
    }
    if (!base.workload.context_lens.empty()) {
        errors.push_back({"workload.context_lens", "the planner chooses the decode batch: leave the list of contexts out "
                                                   "(workload.context_len gives the context)"});
        return false;
    }
    base_ = base;
    req_ = req;
    space_ = resolve_space(base, req);
    const PlanSpace& s = space_;
    const bool disaggregated = contains_mode(s.mode, PlanMode::disaggregated);
    if (disaggregated && base.serving.mode == ServingMode::off) {
        errors.push_back({"space.mode", "disaggregated plans need the serving layer: set serving.mode in the scenario"});
        return false;
    }
    const std::vector<int> all = divisors(req.gpus);
    for (int d : all) {
        std::vector<int> own;
        for (int x : all)
            if (d % x == 0) own.push_back(x);
        divisors_.emplace_back(d, std::move(own));
    }
    // The size, by multiplying, never by listing: per layout, the overlap and backend pairs the engine takes, times
    // the formats, MTP values and batches (and for disaggregated points the prefill choices and worker counts).
    const std::uint64_t batches = s.batch.size();
    std::uint64_t mtps = 0;
    for (int mtp : s.mtp_draft_tokens)
        mtps += mtp == 0 || base.model.mtp_layers > 0 || base.runtime.speculative.method != SpecMethod::mtp;
    auto each_overlap_backend = [&](PlanPoint p, auto&& f) {
        for (int tbo : p.ep > 1 ? s.two_batch_overlap : kNoOverlap)
            for (A2ABackend a2a : p.ep > 1 ? s.a2a_backend : kNoBackend) {
                p.two_batch_overlap = tbo != 0;
                p.a2a = a2a;
                if (engine_ok(req.engine, p, auto_a2a_is_deepep(base))) f(p);
            }
    };
    if (contains_mode(s.mode, PlanMode::aggregated)) {
        for (int world : all) {
            if (world < s.min_gpus_per_replica || world > s.max_gpus_per_replica) continue;
            each_layout(world, [&](int tp, int dp, int ep, int pp) {
                PlanPoint p;
                p.tp = tp, p.dp = dp, p.ep = ep, p.pp = pp;
                std::uint64_t pairs = 0;
                each_overlap_backend(p, [&](const PlanPoint&) { ++pairs; });
                const std::uint64_t per_batch = sat_mul(sat_mul(pairs, s.weights.size() * s.kv_cache.size()), mtps);
                aggregated_ = sat_add(aggregated_, sat_mul(per_batch, batches));
                ++layouts_;
            });
        }
    }
    if (disaggregated) {
        for (const DtypeSel& w : s.weights)
            for (const DtypeSel& kv : s.kv_cache) prefill_.push_back(choose_prefill_layouts(base, req, s, w, kv, tables));
        for (int wd : all) {
            if (2 * wd > req.gpus || wd + 1 > s.max_gpus_per_replica) continue;
            each_layout(wd, [&](int tp, int dp, int ep, int pp) {
                PlanPoint p;
                p.tp = tp, p.dp = dp, p.ep = ep, p.pp = pp;
                p.mode = PlanMode::disaggregated;
                ++layouts_;
                each_overlap_backend(p, [&](const PlanPoint& q) {
                    std::uint64_t pools = 0;  // over the formats: prefill choices x worker pairs
                    for (const std::vector<PrefillLayout>& choices : prefill_)
                        for (const PrefillLayout& l : choices)
                            if (prefill_engine_ok(req.engine, l, q, auto_a2a_is_deepep(base))) pools = sat_add(pools, worker_pairs(l.world(), wd));
                    disaggregated_ = sat_add(disaggregated_, sat_mul(sat_mul(pools, mtps), batches));
                });
            });
        }
    }
    if (size() > req.max_points) {
        // (at most ~290 characters with every count at its largest)
        errors.push_back({"space", thousands(size()) + " points (" + thousands(layouts_) + " layouts x " + thousands(batches) +
                                       " batches x options: " + thousands(aggregated_) + " aggregated, " +
                                       thousands(disaggregated_) + " disaggregated) exceed the limit of " +
                                       thousands(req.max_points) +
                                       "; narrow --space (batch, tp, dp, ep, pp, mode, prefill_workers, decode_workers, "
                                       "max_gpus_per_replica) or --gpus"});
        return false;
    }
    started_ = true;
    return true;
}

bool PlanEnumerator::for_each(const std::function<bool(const PlanPoint&)>& each) const {
    if (!started_) return true;
    const PlanSpace& s = space_;
    const int gpus = req_.gpus;
    bool go = true;
    if (contains_mode(s.mode, PlanMode::aggregated)) {
        for (const auto& entry : divisors_) {  // (no structured binding: a lambda below uses it, C++17)
            const int world = entry.first;
            if (!go) return false;
            if (world < s.min_gpus_per_replica || world > s.max_gpus_per_replica) continue;
            each_layout(world, [&](int tp, int dp, int ep, int pp) {
                if (!go) return;
                PlanPoint p;
                p.tp = tp, p.dp = dp, p.ep = ep, p.pp = pp;
                p.replicas = gpus / world;
                each_option(p, [&](PlanPoint q, std::size_t) {
                    for (int b : s.batch) {
                        q.batch = b;
                        if (!(go = each(q))) return false;
                    }
                    return true;
                });
            });
        }
    }
    if (!go) return false;
    if (contains_mode(s.mode, PlanMode::disaggregated)) {
        // Decode layouts with every prefill choice and every worker count pair whose GPUs divide the budget; prefill
        // choice and worker counts innermost, so points that share a decode pool are evaluated one after another
        // (evaluate_plan_range reuses its steps).
        for (const auto& entry : divisors_) {
            const int wd = entry.first;
            if (!go) return false;
            if (2 * wd > gpus || wd + 1 > s.max_gpus_per_replica) continue;
            each_layout(wd, [&](int tp, int dp, int ep, int pp) {
                if (!go) return;
                PlanPoint p;
                p.tp = tp, p.dp = dp, p.ep = ep, p.pp = pp;
                p.mode = PlanMode::disaggregated;
                each_option(p, [&](PlanPoint q, std::size_t formats) {
                    for (int b : s.batch) {
                        q.batch = b;
                        for (const PrefillLayout& l : prefill_[formats]) {
                            if (!prefill_engine_ok(req_.engine, l, q, auto_a2a_is_deepep(base_))) continue;
                            q.prefill_tp = std::int16_t(l.tp), q.prefill_dp = std::int16_t(l.dp), q.prefill_ep = std::int16_t(l.ep);
                            for (int np : s.prefill_workers)
                                for (int nd : s.decode_workers) {
                                    const int total = np * l.world() + nd * wd;
                                    if (gpus % total != 0 || total < s.min_gpus_per_replica || total > s.max_gpus_per_replica) continue;
                                    q.prefill_workers = std::int16_t(np), q.decode_workers = std::int16_t(nd);
                                    q.replicas = gpus / total;
                                    if (!(go = each(q))) return false;
                                }
                        }
                    }
                    return true;
                });
            });
        }
    }
    return go;
}

std::vector<PlanPoint> enumerate_plan(const Scenario& base, const PlanRequest& req, Issues& errors, const Tables& tables) {
    std::vector<PlanPoint> out;
    PlanEnumerator space;
    if (!space.start(base, req, errors, tables)) return out;
    out.reserve(std::size_t(space.size()));
    space.for_each([&](const PlanPoint& p) {
        out.push_back(p);
        return true;
    });
    return out;
}

}  // namespace moe
