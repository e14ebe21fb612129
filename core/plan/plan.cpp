// plan.cpp — the planner (see plan.h).
//
// [SECTION] names            engines, verdicts
// [SECTION] space            defaults, JSON in and out, enumeration
// [SECTION] evaluation       apply_point, evaluate_point (the one objective), ranges
// [SECTION] front            judge, reasons, Pareto front, summary
// [SECTION] launch commands  SGLang, vLLM, TensorRT-LLM
#include "core/plan/plan.h"
#include "core/serving/serving.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <tuple>

#include "core/step/estimate.h"
#include "core/base/json_util.h"

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
        if (m.mtp_layers > 0) s.mtp_draft_tokens = {0, 1, 2, 3};
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
bool engine_ok(ServingEngine e, const PlanPoint& p) {
    switch (e) {
        case ServingEngine::sglang:  // --moe-a2a-backend none|deepep (+ --deepep-mode): no pplx
            return p.a2a != A2ABackend::pplx;
        case ServingEngine::vllm:    // --enable-expert-parallel: EP over all of tp*dp, or none; one backend
            return (p.ep == 1 || p.ep == p.tp * p.dp) && (p.ep == 1 || p.a2a != A2ABackend::auto_);
        case ServingEngine::trtllm:  // enable_attention_dp: attention TP 1; the MoE all-to-all is its own
            return (p.dp == 1 || p.tp == 1) && p.a2a == A2ABackend::auto_ && !p.two_batch_overlap;
    }
    return false;
}

}  // namespace

namespace {

// A prefill worker's layout for disaggregated points (pipeline 1).
struct PrefillLayout {
    int tp = 1, dp = 1, ep = 1;
    int world() const { return tp * dp; }
};

bool prefill_engine_ok(ServingEngine e, const PrefillLayout& l, const PlanPoint& p) {
    PlanPoint q = p;
    q.tp = l.tp, q.dp = l.dp, q.ep = l.ep, q.pp = 1;
    if (q.ep == 1) q.a2a = A2ABackend::auto_, q.two_batch_overlap = false;
    return engine_ok(e, q);
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
    x.runtime.mtp_draft_tokens = 0;
    x.runtime.two_batch_overlap = false;
    x.serving.mode = ServingMode::disaggregated;
    x.serving.prefill.batch = 1;
    const EngineConstants& k = engine_constants(builtin_engines(), x);
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
                if (!prefill_engine_ok(req.engine, l, probe)) continue;
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

}  // namespace

std::vector<PlanPoint> enumerate_plan(const Scenario& base, const PlanRequest& req, Issues& errors, const Tables& tables) {
    std::vector<PlanPoint> out;
    if (req.gpus < 1 || req.gpus > 65536) {
        errors.push_back({"gpus", std::to_string(req.gpus) + " is out of range [1, 65536]"});
        return out;
    }
    const PlanSpace s = resolve_space(base, req);
    const bool disaggregated = contains_mode(s.mode, PlanMode::disaggregated);
    if (disaggregated && base.serving.mode == ServingMode::off) {
        errors.push_back({"space.mode", "disaggregated plans need the serving layer: set serving.mode in the scenario"});
        return out;
    }
    const std::vector<A2ABackend> no_backend = {A2ABackend::auto_};
    const std::vector<int> no_tbo = {0};
    // Every decode (or aggregated) layout of `world` GPUs the space allows, in the fixed order.
    auto layouts = [&](int world, auto&& each) {
        for (int pp : s.pp) {
            if (world % pp != 0) continue;
            const int stage = world / pp;
            for (int tp : divisors(stage)) {
                const int dp = stage / tp;
                if ((!s.tp.empty() && !contains(s.tp, tp)) || (!s.dp.empty() && !contains(s.dp, dp))) continue;
                for (int ep : divisors(tp * dp)) {
                    if (!s.ep.empty() && !contains(s.ep, ep)) continue;
                    if (!layout_ok(base, tp, dp, ep, pp)) continue;
                    each(tp, dp, ep, pp);
                }
            }
        }
    };
    // The options of a layout: formats, MTP, and (only where tokens move between expert ranks) overlap and backend.
    auto options = [&](PlanPoint p, auto&& each) {
        const std::vector<A2ABackend>& backends = p.ep > 1 ? s.a2a_backend : no_backend;
        const std::vector<int>& tbos = p.ep > 1 ? s.two_batch_overlap : no_tbo;
        for (std::size_t wi = 0; wi < s.weights.size(); ++wi)
            for (std::size_t ki = 0; ki < s.kv_cache.size(); ++ki)
                for (int mtp : s.mtp_draft_tokens) {
                    if (mtp > 0 && base.model.mtp_layers == 0) continue;
                    for (int tbo : tbos)
                        for (A2ABackend a2a : backends) {
                            p.mtp = std::uint8_t(mtp);
                            p.weights = s.weights[wi], p.kv_cache = s.kv_cache[ki];
                            p.two_batch_overlap = tbo != 0;
                            p.a2a = a2a;
                            if (!engine_ok(req.engine, p)) continue;
                            each(p, wi * s.kv_cache.size() + ki);
                        }
                }
    };
    if (contains_mode(s.mode, PlanMode::aggregated)) {
        for (int world : divisors(req.gpus)) {
            if (world < s.min_gpus_per_replica || world > s.max_gpus_per_replica) continue;
            layouts(world, [&](int tp, int dp, int ep, int pp) {
                PlanPoint p;
                p.tp = tp, p.dp = dp, p.ep = ep, p.pp = pp;
                p.replicas = req.gpus / world;
                options(p, [&](PlanPoint q, std::size_t) {
                    for (int b : s.batch) {
                        q.batch = b;
                        out.push_back(q);
                    }
                });
            });
        }
    }
    if (disaggregated) {
        // The prefill layouts per (weights, KV) pair, then decode layouts with every prefill choice and every
        // worker count pair whose GPUs divide the budget; prefill choice and worker counts innermost, so points
        // that share a decode pool are evaluated one after another (evaluate_plan_range reuses its steps).
        std::vector<std::vector<PrefillLayout>> prefill;
        for (const DtypeSel& w : s.weights)
            for (const DtypeSel& kv : s.kv_cache) prefill.push_back(choose_prefill_layouts(base, req, s, w, kv, tables));
        for (int wd : divisors(req.gpus)) {
            if (2 * wd > req.gpus || wd + 1 > s.max_gpus_per_replica) continue;
            layouts(wd, [&](int tp, int dp, int ep, int pp) {
                PlanPoint p;
                p.tp = tp, p.dp = dp, p.ep = ep, p.pp = pp;
                p.mode = PlanMode::disaggregated;
                options(p, [&](PlanPoint q, std::size_t formats) {
                    for (int b : s.batch) {
                        q.batch = b;
                        for (const PrefillLayout& l : prefill[formats]) {
                            if (!prefill_engine_ok(req.engine, l, q)) continue;
                            q.prefill_tp = std::int16_t(l.tp), q.prefill_dp = std::int16_t(l.dp), q.prefill_ep = std::int16_t(l.ep);
                            for (int np : s.prefill_workers)
                                for (int nd : s.decode_workers) {
                                    const int total = np * l.world() + nd * wd;
                                    if (req.gpus % total != 0 || total < s.min_gpus_per_replica || total > s.max_gpus_per_replica) continue;
                                    q.prefill_workers = std::int16_t(np), q.decode_workers = std::int16_t(nd);
                                    q.replicas = req.gpus / total;
                                    out.push_back(q);
                                }
                        }
                    }
                });
            });
        }
    }
    return out;
}

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
    s.runtime.mtp_draft_tokens = p.mtp;
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
}

namespace {

PointResult from_serving(const ServingResult& sr, bool step_fits) {
    PointResult r;
    r.ok = true;
    r.ttft_ms = sr.ttft_ms;
    r.tpot_ms = sr.tpot_ms;
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
PointResult evaluate_point_memo(const Scenario& s, const Tables& tables, ServingStepMemo* memo) {
    // The serving layer's numbers when the scenario turns it on, else the step-level model's.
    PointResult r;
    r.gpus = s.world();
    // (a plan point keeps no warnings: none are built)
    Estimate e;
    if (s.serving.mode != ServingMode::off) evaluate_into(s, tables, builtin_engines(), memo, e, false);
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

PointResult evaluate_point(const Scenario& s, const Tables& tables) { return evaluate_point_memo(s, tables, nullptr); }

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
        const ServingResult sr = serving_model(s, st, engine_constants(builtin_engines(), s));
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
            out[i - begin] = pools.evaluate(s, p, tables);
            memo_point = nullptr;
        } else if (s.serving.mode == ServingMode::aggregated) {
            if (!memo_point || !same_but_batch(*memo_point, p)) memo = ServingStepMemo();
            memo_point = &p;
            out[i - begin] = evaluate_point_memo(s, tables, &memo);
        } else {
            out[i - begin] = evaluate_point(s, tables);
        }
    }
}

// ---- PlanSearch
bool PlanSearch::start(const Scenario& base, const PlanRequest& req, Issues& errors, const Tables& tables) {
    *this = PlanSearch();
    base_ = base;
    req_ = req;
    points_ = enumerate_plan(base_, req_, errors, tables);
    if (!errors.empty()) {
        points_.clear();
        return false;
    }
    results_.resize(points_.size());
    started_ = true;
    if (points_.empty()) summary_ = summarize_plan(points_, results_, req_.sla);
    return true;
}

std::size_t PlanSearch::step(std::size_t max_points, const Tables& tables) {
    if (!started_ || done()) return 0;
    const std::size_t end = std::min(points_.size(), next_ + max_points);
    evaluate_plan_range(base_, points_, next_, end, tables, results_.data() + next_);
    const std::size_t n = end - next_;
    next_ = end;
    if (done()) summary_ = summarize_plan(points_, results_, req_.sla);
    return n;
}

Scenario PlanSearch::scenario_of(std::size_t i) const {
    Scenario s = base_;
    if (i < points_.size()) apply_point(s, points_[i]);
    return s;
}

// ---- [SECTION] front ----------------------------------------------------------------------------------------
Verdict judge(const PointResult& r, const Sla& sla) {
    if (!r.ok) return Verdict::error;
    if (!r.fits) return Verdict::no_fit;
    if (sla.ttft_ms > 0 && r.ttft_ms > sla.ttft_ms) return Verdict::ttft;
    if (sla.tpot_ms > 0 && r.tpot_ms > sla.tpot_ms) return Verdict::tpot;
    if (sla.min_tokens_per_s_per_user > 0 && r.tokens_per_s_per_user < sla.min_tokens_per_s_per_user) return Verdict::per_user;
    return Verdict::candidate;
}

std::string verdict_reason(const PointResult& r, const Sla& sla) {
    if (!r.ok) return r.error;
    std::string out;
    char buf[96];
    auto add = [&](const char* text) { out += (out.empty() ? "" : "; ") + std::string(text); };
    if (!r.fits) add("does not fit in memory");
    if (sla.ttft_ms > 0 && r.ttft_ms > sla.ttft_ms) {
        std::snprintf(buf, sizeof buf, "ttft %.1f ms > %g", r.ttft_ms, sla.ttft_ms);
        add(buf);
    }
    if (sla.tpot_ms > 0 && r.tpot_ms > sla.tpot_ms) {
        std::snprintf(buf, sizeof buf, "tpot %.2f ms > %g", r.tpot_ms, sla.tpot_ms);
        add(buf);
    }
    if (sla.min_tokens_per_s_per_user > 0 && r.tokens_per_s_per_user < sla.min_tokens_per_s_per_user) {
        std::snprintf(buf, sizeof buf, "%.1f tokens/s per user < %g", r.tokens_per_s_per_user, sla.min_tokens_per_s_per_user);
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

PlanSummary summarize_plan(const std::vector<PlanPoint>& points, const std::vector<PointResult>& results, const Sla& sla) {
    PlanSummary sum;
    const std::size_t n = std::min(points.size(), results.size());
    sum.verdicts.resize(n);
    std::vector<double> gpu(n), user(n);
    std::vector<bool> cand(n);
    for (std::size_t i = 0; i < n; ++i) {
        sum.verdicts[i] = judge(results[i], sla);
        ++sum.counts[int(sum.verdicts[i])];
        cand[i] = sum.verdicts[i] == Verdict::candidate;
        gpu[i] = results[i].output_tokens_per_s_per_gpu;
        user[i] = results[i].tokens_per_s_per_user;
    }
    sum.front = pareto_front(gpu, user, cand);
    return sum;
}

// ---- [SECTION] launch commands ------------------------------------------------------------------------------
// Flag spellings, checked against each engine's documentation:
// - SGLang, python -m sglang.launch_server: --model-path, --tp (= --tp-size, all GPUs of a pipeline stage), --dp
//   with --enable-dp-attention, --ep-size, --pp-size, --mem-fraction-static, --kv-cache-dtype fp8_e4m3,
//   --quantization, --chunked-prefill-size, --max-running-requests, --nnodes/--node-rank/--dist-init-addr
//   (https://docs.sglang.io/advanced_features/server_arguments.html,
//   https://docs.sglang.io/cookbook/base/reference/server_arguments); --moe-a2a-backend deepep (default none:
//   all-reduce / all-gather dispatch) (https://docs.sglang.io/advanced_features/expert_parallelism.html);
//   --deepep-mode auto|normal|low_latency and --enable-two-batch-overlap (the same page and `launch_server --help`);
//   MTP as --speculative-algorithm EAGLE --speculative-num-steps N --speculative-eagle-topk 1
//   --speculative-num-draft-tokens N+1 (https://docs.sglang.io/advanced_features/speculative_decoding.html,
//   "Multi Token Prediction"); --stream-interval N (serving.stream_interval; InferenceMAX's SGLang recipes set it).
//   TensorRT-LLM takes the same as stream_interval in the LLM API options; vLLM's command leaves it out (its flag
//   is recent and not in every version).
// - vLLM, vllm serve: --tensor-parallel-size, --data-parallel-size, --pipeline-parallel-size, --kv-cache-dtype fp8,
//   --gpu-memory-utilization, --max-num-seqs, --max-num-batched-tokens, --quantization
//   (https://docs.vllm.ai/en/latest/configuration/engine_args.html); --enable-expert-parallel (EP = tp*dp) and
//   --all2all-backend allgather_reducescatter|pplx|deepep_high_throughput|deepep_low_latency, multi-node
//   --data-parallel-size-local / --data-parallel-address / --data-parallel-start-rank
//   (https://docs.vllm.ai/en/latest/serving/expert_parallel_deployment/); dual-batch overlap --enable-dbo
//   (https://blog.vllm.ai/2025/12/17/large-scale-serving.html); MTP --speculative-config
//   '{"method":"mtp","num_speculative_tokens":N}' (https://docs.vllm.ai/en/latest/features/spec_decode.html).
// - TensorRT-LLM, trtllm-serve MODEL: --tp_size (all GPUs of a stage), --ep_size, --pp_size, --max_batch_size,
//   --max_num_tokens, --kv_cache_free_gpu_memory_fraction, --trust_remote_code, --extra_llm_api_options FILE (YAML:
//   enable_attention_dp, kv_cache_config.dtype, speculative_config {decoding_type: MTP, num_nextn_predict_layers})
//   (https://nvidia.github.io/TensorRT-LLM/commands/trtllm-serve/trtllm-serve.html,
//   https://nvidia.github.io/TensorRT-LLM/examples/deepseek_r1_reasoning_parser.html,
//   https://nvidia.github.io/TensorRT-LLM/features/speculative-decoding.html); multi-node through
//   mpirun ... trtllm-llmapi-launch.
std::string model_repo(const Scenario& s) {
    static const char* const kRepos[][2] = {
        {"deepseek-v3", "deepseek-ai/DeepSeek-V3"},        {"deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite"},
        {"kimi-k2", "moonshotai/Kimi-K2-Instruct"},         {"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"},
        {"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"},        {"qwen3-8b", "Qwen/Qwen3-8B"},
        {"qwen3-next-80b-a3b", "Qwen/Qwen3-Next-80B-A3B-Instruct"},
        {"mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1"},    {"gpt-oss-120b", "openai/gpt-oss-120b"},
        {"llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct"},
        {"llama-4-scout", "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"},
    };
    for (const auto& r : kRepos)
        if (s.model_ref == r[0]) return r[1];
    if (s.model_inline.is_object()) {
        const std::string name = read_str(s.model_inline, "_name_or_path");
        // Only a plain repository id or path goes into a shell command.
        if (!name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") == std::string::npos)
            return name;
        return "MODEL_PATH";
    }
    return s.model_ref;
}

namespace {

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// The weight format the point asks for, when it differs from the checkpoint's: an online quantisation flag.
Dtype requested_weights(const Scenario& s, const PlanPoint& p, bool& changed) {
    changed = !p.weights.is_auto && p.weights.value != s.model.weight_dtype;
    return p.weights.is_auto ? s.model.weight_dtype : p.weights.value;
}

std::string sglang_command(const Scenario& s, const PlanPoint& p) {
    const int stage = p.tp * p.dp;
    std::string c = "python -m sglang.launch_server --model-path " + model_repo(s) + " --trust-remote-code";
    c += " --tp " + std::to_string(stage);
    if (p.dp > 1) c += " --dp " + std::to_string(p.dp) + " --enable-dp-attention";
    if (p.ep > 1) c += " --ep-size " + std::to_string(p.ep);
    if (p.pp > 1) c += " --pp-size " + std::to_string(p.pp);
    if (p.ep > 1) {
        switch (p.a2a) {
            case A2ABackend::auto_: c += " --moe-a2a-backend deepep --deepep-mode auto"; break;
            case A2ABackend::deepep_normal: c += " --moe-a2a-backend deepep --deepep-mode normal"; break;
            case A2ABackend::deepep_low_latency: c += " --moe-a2a-backend deepep --deepep-mode low_latency"; break;
            default: break;  // allgather: SGLang's default (none)
        }
        if (p.two_batch_overlap) c += " --enable-two-batch-overlap";
    }
    if (p.mtp > 0)
        c += " --speculative-algorithm EAGLE --speculative-num-steps " + std::to_string(p.mtp) +
             " --speculative-eagle-topk 1 --speculative-num-draft-tokens " + std::to_string(p.mtp + 1);
    bool changed = false;
    const Dtype w = requested_weights(s, p, changed);
    if (changed) c += std::string(" --quantization ") + (w == Dtype::fp8 ? "fp8" : is_fp4_like(w) ? "modelopt_fp4" : dtype_name(w));
    if (!p.kv_cache.is_auto && p.kv_cache.value == Dtype::fp8) c += " --kv-cache-dtype fp8_e4m3";
    c += " --mem-fraction-static " + num(s.runtime.mem_fraction);
    // SGLang divides both by the DP size under --enable-dp-attention: give the totals of all DP ranks.
    c += " --chunked-prefill-size " + std::to_string(s.workload.prefill_tokens * p.dp);
    c += " --max-running-requests " + std::to_string(p.batch * p.dp);
    if (s.serving.stream_interval > 1) c += " --stream-interval " + std::to_string(s.serving.stream_interval);
    if (p.mode == PlanMode::disaggregated) c += p.prefill_workers < 0 ? " --disaggregation-mode prefill" : " --disaggregation-mode decode";
    const int world = p.decode_world(), per_node = s.gpus_per_node();
    if (world > per_node)
        c += " --nnodes " + std::to_string((world + per_node - 1) / per_node) + " --node-rank $NODE_RANK --dist-init-addr $HEAD_IP:5000";
    return c;
}

std::string vllm_command(const Scenario& s, const PlanPoint& p) {
    std::string c = "vllm serve " + model_repo(s) + " --trust-remote-code";
    c += " --tensor-parallel-size " + std::to_string(p.tp);
    if (p.dp > 1) c += " --data-parallel-size " + std::to_string(p.dp);
    if (p.pp > 1) c += " --pipeline-parallel-size " + std::to_string(p.pp);
    if (p.ep > 1) {
        c += " --enable-expert-parallel --all2all-backend ";
        switch (p.a2a) {
            case A2ABackend::pplx: c += "pplx"; break;
            case A2ABackend::deepep_normal: c += "deepep_high_throughput"; break;
            case A2ABackend::deepep_low_latency: c += "deepep_low_latency"; break;
            default: c += "allgather_reducescatter"; break;
        }
        if (p.two_batch_overlap) c += " --enable-dbo";
    }
    if (p.mtp > 0) c += " --speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":" + std::to_string(p.mtp) + "}'";
    bool changed = false;
    const Dtype w = requested_weights(s, p, changed);
    if (changed) c += std::string(" --quantization ") + (w == Dtype::fp8 ? "fp8" : is_fp4_like(w) ? "modelopt_fp4" : dtype_name(w));
    if (!p.kv_cache.is_auto && p.kv_cache.value == Dtype::fp8) c += " --kv-cache-dtype fp8";
    c += " --gpu-memory-utilization " + num(s.runtime.mem_fraction);
    c += " --max-num-seqs " + std::to_string(p.batch);
    c += " --max-num-batched-tokens " + std::to_string(s.workload.prefill_tokens);
    if (p.mode == PlanMode::disaggregated) c += " --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'";
    const int per_node = s.gpus_per_node();
    if (p.decode_world() > per_node && p.dp > 1 && per_node % (p.tp * p.pp) == 0)
        c += " --data-parallel-size-local " + std::to_string(per_node / (p.tp * p.pp)) +
             " --data-parallel-address $HEAD_IP --data-parallel-start-rank $START_RANK";
    return c;
}

std::string trtllm_command(const Scenario& s, const PlanPoint& p) {
    std::string yaml = "{";
    auto item = [&](const std::string& kv) { yaml += (yaml.size() > 1 ? ", " : "") + kv; };
    if (p.dp > 1) item("enable_attention_dp: true");
    std::string kv = "kv_cache_config: {free_gpu_memory_fraction: " + num(s.runtime.mem_fraction);
    if (!p.kv_cache.is_auto && p.kv_cache.value == Dtype::fp8) kv += ", dtype: fp8";
    item(kv + "}");
    if (p.mtp > 0) item("speculative_config: {decoding_type: MTP, num_nextn_predict_layers: " + std::to_string(p.mtp) + "}");
    if (p.mode == PlanMode::disaggregated) item("cache_transceiver_config: {backend: DEFAULT}");
    if (s.serving.stream_interval > 1) item("stream_interval: " + std::to_string(s.serving.stream_interval));
    yaml += "}";
    const int stage = p.tp * p.dp, world = p.decode_world(), per_node = s.gpus_per_node();
    std::string c = "echo '" + yaml + "' > extra-llm-api.yml && ";
    if (world > per_node) c += "mpirun -np " + std::to_string(world) + " --hostfile $HOSTFILE trtllm-llmapi-launch ";
    c += "trtllm-serve " + model_repo(s) + " --trust_remote_code";
    c += " --tp_size " + std::to_string(stage);
    if (p.ep > 1) c += " --ep_size " + std::to_string(p.ep);
    if (p.pp > 1) c += " --pp_size " + std::to_string(p.pp);
    c += " --max_batch_size " + std::to_string(p.batch);
    c += " --max_num_tokens " + std::to_string(s.workload.prefill_tokens);
    c += " --kv_cache_free_gpu_memory_fraction " + num(s.runtime.mem_fraction);
    c += " --extra_llm_api_options extra-llm-api.yml";
    bool changed = false;
    requested_weights(s, p, changed);
    if (changed) c += "  # needs a checkpoint quantised to " + std::string(dtype_name(p.weights.value)) + " (TensorRT Model Optimizer)";
    return c;
}

}  // namespace

std::string prefill_launch_command(const Scenario& s, const PlanPoint& p, ServingEngine engine) {
    if (p.mode != PlanMode::disaggregated) return "";
    // A prefill worker: its own layout, one prompt per forward per DP rank (prefill_workers < 0 marks the role).
    PlanPoint q = p;
    q.tp = p.prefill_tp, q.dp = p.prefill_dp, q.ep = p.prefill_ep, q.pp = 1;
    q.batch = 1;
    q.prefill_workers = -1;
    if (q.ep == 1) q.two_batch_overlap = false;
    return launch_command(s, q, engine);
}

std::string launch_command(const Scenario& s, const PlanPoint& p, ServingEngine engine) {
    switch (engine) {
        case ServingEngine::sglang: return sglang_command(s, p);
        case ServingEngine::vllm: return vllm_command(s, p);
        case ServingEngine::trtllm: return trtllm_command(s, p);
    }
    return "";
}

}  // namespace moe
