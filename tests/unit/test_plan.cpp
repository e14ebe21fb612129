// test_plan.cpp — the planner (core/plan.h): the Pareto filter, the space enumeration, --space JSON, commands.
#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <tuple>

#include "core/plan/plan.h"
#include "test_helpers.h"

namespace {

// Does a dominate b (at least as good in both, better in one)?
bool dominates(double ga, double ua, double gb, double ub) { return ga >= gb && ua >= ub && (ga > gb || ua > ub); }

moe::Scenario dsv3_h200() {
    return moe_test::scenario(R"({"model":"deepseek-v3","hardware":"h200","workload":{"prompt_len":2048,"output_len":1024}})");
}

}  // namespace

TEST_CASE("pareto_front: a hand example, best per GPU first, ties keep the first") {
    //                       0    1    2    3    4    5    6
    std::vector<double> gpu = {10, 8, 6, 9, 10, 4, 6};
    std::vector<double> user = {1, 3, 5, 2, 1, 5, 5};
    std::vector<bool> cand = {true, true, true, true, true, true, false};
    // 4 equals 0 (0 kept), 5 is dominated by 2, 6 is not a candidate, 3 is on the front (9 > 8, 2 > 1).
    CHECK(moe::pareto_front(gpu, user, cand) == std::vector<std::size_t>{0, 3, 1, 2});
    CHECK(moe::pareto_front({}, {}, {}).empty());
    CHECK(moe::pareto_front({1, 2}, {1, 2}, {false, false}).empty());
}

TEST_CASE("pareto_front: random clouds — no front point dominated, every other candidate dominated or a repeat") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 50; ++trial) {
        const std::size_t n = 1 + rng() % 300;
        std::vector<double> gpu(n), user(n);
        std::vector<bool> cand(n);
        for (std::size_t i = 0; i < n; ++i) {
            gpu[i] = double(rng() % 40);  // coarse values: many ties
            user[i] = double(rng() % 40);
            cand[i] = rng() % 5 != 0;
        }
        const std::vector<std::size_t> front = moe::pareto_front(gpu, user, cand);
        std::set<std::size_t> on(front.begin(), front.end());
        for (std::size_t k = 1; k < front.size(); ++k) {  // best per GPU first, per user rising
            CHECK(gpu[front[k - 1]] > gpu[front[k]]);
            CHECK(user[front[k - 1]] < user[front[k]]);
        }
        for (std::size_t f : front) {
            CHECK(cand[f]);
            for (std::size_t j = 0; j < n; ++j)
                if (cand[j]) CHECK_FALSE(dominates(gpu[j], user[j], gpu[f], user[f]));
        }
        for (std::size_t j = 0; j < n; ++j) {
            if (!cand[j] || on.count(j)) continue;
            bool covered = false;
            for (std::size_t f : front)
                covered = covered || dominates(gpu[f], user[f], gpu[j], user[j]) ||
                          (gpu[f] == gpu[j] && user[f] == user[j] && f < j);
            CHECK(covered);
        }
    }
}

TEST_CASE("enumerate_plan: DeepSeek-V3 on 64 H200 — every layout divides the budget, heads and experts, and runs") {
    const moe::Scenario base = dsv3_h200();
    moe::PlanRequest req;
    req.gpus = 64;
    moe::Issues errs;
    const std::vector<moe::PlanPoint> pts = moe::enumerate_plan(base, req, errs);
    REQUIRE(errs.empty());
    REQUIRE(pts.size() > 10000);
    std::set<std::tuple<int, int, int, int>> layouts;
    std::set<int> mtps, batches;
    moe::Scenario s = base;
    for (const moe::PlanPoint& p : pts) {
        CHECK(64 % p.world() == 0);
        CHECK(p.replicas * p.world() == 64);
        CHECK(128 % p.tp == 0);
        CHECK((p.tp * p.dp) % p.ep == 0);
        CHECK(256 % p.ep == 0);
        if (p.ep == 1) {
            CHECK(p.a2a == moe::A2ABackend::auto_);
            CHECK_FALSE(p.two_batch_overlap);
        }
        layouts.insert({p.tp, p.dp, p.ep, p.pp});
        mtps.insert(p.mtp);
        batches.insert(p.batch);
    }
    CHECK(mtps == std::set<int>{0, 1, 2, 3});  // DeepSeek-V3 has an MTP layer
    CHECK(batches.size() == 14);
    // Worlds 1..64 (7 powers of two), tp x ep over divisors: sum of (k+1)^2 for k = 0..6.
    CHECK(layouts.size() == 140);
    // Every layout validates on the model (the estimate does not reject any point).
    for (const auto& layout : layouts) {  // (no structured bindings: clang 14 cannot capture them in INFO)
        const int tp = std::get<0>(layout), dp = std::get<1>(layout), ep = std::get<2>(layout), pp = std::get<3>(layout);
        s.parallel.tp = tp, s.parallel.dp = dp, s.parallel.ep = ep, s.parallel.pp = pp;
        INFO(tp << " " << dp << " " << ep << " " << pp);
        CHECK(moe::validate_scenario(s).empty());
    }
    // Batch innermost, deterministic.
    CHECK(pts[0].batch == 1);
    CHECK(pts[1].batch == 2);
    CHECK(pts[1].tp == pts[0].tp);
    const std::vector<moe::PlanPoint> again = moe::enumerate_plan(base, req, errs);
    REQUIRE(again.size() == pts.size());
    const auto key = [](const moe::PlanPoint& p) {
        return std::make_tuple(p.tp, p.dp, p.ep, p.pp, p.batch, p.replicas, int(p.mtp), p.weights.is_auto, int(p.weights.value),
                               p.kv_cache.is_auto, int(p.kv_cache.value), p.two_batch_overlap, int(p.a2a), int(p.mode));
    };
    for (std::size_t i = 0; i < pts.size(); ++i) REQUIRE(key(again[i]) == key(pts[i]));
}

TEST_CASE("enumerate_plan: a narrowed space, a dense model, and the engines' limits") {
    const moe::Scenario base = dsv3_h200();
    moe::PlanRequest req;
    req.gpus = 16;
    moe::Issues errs;
    REQUIRE(moe::plan_space_from_json(nlohmann::json::parse(R"({"tp":[1],"ep":[8,16],"batch":[32,64],
        "mtp_draft_tokens":[0],"kv_cache":["fp8"],"two_batch_overlap":[true],"a2a_backend":["auto"],"min_gpus_per_replica":8})"),
                                      req.space, errs));
    std::vector<moe::PlanPoint> pts = moe::enumerate_plan(base, req, errs);
    // worlds 8 (ep 8) and 16 (ep 16), tp 1, two batches: SGLang runs DeepEP (auto, step-level) only with ep equal to
    // tp * dp (launch_rules.cpp, sglang.deepep_ep_equals_tp), so world 16 at ep 8 is not a point
    CHECK(pts.size() == 4);
    for (const moe::PlanPoint& p : pts) CHECK(p.ep == p.tp * p.dp);
    for (const moe::PlanPoint& p : pts) {
        CHECK(p.tp == 1);
        CHECK(p.two_batch_overlap);
        CHECK(p.kv_cache.value == moe::Dtype::fp8);
    }

    moe::Scenario dense = moe_test::scenario(R"({"model":"qwen3-8b","hardware":"h100-sxm"})");
    moe::PlanRequest d;
    d.gpus = 8;
    pts = moe::enumerate_plan(dense, d, errs);
    REQUIRE(!pts.empty());
    for (const moe::PlanPoint& p : pts) {
        CHECK(p.ep == 1);
        CHECK(p.mtp == 0);
        CHECK(8 % p.tp == 0);  // 32 heads, 8 KV heads
    }

    req.space = moe::PlanSpace{};
    req.gpus = 32;
    req.engine = moe::ServingEngine::vllm;
    for (const moe::PlanPoint& p : moe::enumerate_plan(base, req, errs)) {
        CHECK((p.ep == 1 || p.ep == p.tp * p.dp));
        if (p.ep > 1) CHECK(p.a2a != moe::A2ABackend::auto_);
    }
    req.engine = moe::ServingEngine::trtllm;
    for (const moe::PlanPoint& p : moe::enumerate_plan(base, req, errs)) {
        CHECK((p.dp == 1 || p.tp == 1));
        CHECK_FALSE(p.two_batch_overlap);
    }
    CHECK(errs.empty());
    req.gpus = 0;
    CHECK(moe::enumerate_plan(base, req, errs).empty());
    CHECK(errs.size() == 1);
}

TEST_CASE("plan_space_from_json: errors name the key") {
    moe::PlanSpace space;
    moe::Issues errs;
    CHECK_FALSE(moe::plan_space_from_json(nlohmann::json::parse(R"({"tpp":[1]})"), space, errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "space.tpp");
    errs.clear();
    CHECK_FALSE(moe::plan_space_from_json(nlohmann::json::parse(R"({"batch":[0]})"), space, errs));
    CHECK(errs[0].path == "space.batch");
    errs.clear();
    CHECK_FALSE(moe::plan_space_from_json(nlohmann::json::parse(R"({"kv_cache":["nvfp4"]})"), space, errs));
    CHECK(errs[0].path == "space.kv_cache");
    errs.clear();
    CHECK_FALSE(moe::plan_space_from_json(nlohmann::json::parse(R"({"mode":["colocated"]})"), space, errs));
    CHECK(errs[0].path == "space.mode");
    errs.clear();
    // disaggregated parses, but needs the serving layer to be enumerated
    CHECK(moe::plan_space_from_json(nlohmann::json::parse(R"({"mode":["disaggregated"],"decode_workers":[1,2]})"), space, errs));
    CHECK(space.decode_workers == std::vector<int>{1, 2});
    moe::PlanRequest req;
    req.space = space;
    CHECK(moe::enumerate_plan(dsv3_h200(), req, errs).empty());
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "space.mode");
    errs.clear();
    CHECK(moe::plan_space_from_json(nlohmann::json::parse(R"({"weights":["auto","fp8"],"a2a_backend":"pplx"})"), space, errs));
    CHECK(space.weights.size() == 2);
    CHECK(space.a2a_backend == std::vector<moe::A2ABackend>{moe::A2ABackend::pplx});
}

namespace {

// The whole search in one go, as the CLI runs it: every point of the space, its result and the summary (front and
// counts).
struct WholePlan {
    std::vector<moe::PlanPoint> pts;
    std::vector<moe::PointResult> res;
    moe::PlanSummary sum;
};
WholePlan whole_plan(const moe::Scenario& base, const moe::PlanRequest& req, moe::Issues& errs) {
    WholePlan w;
    w.pts = moe::enumerate_plan(base, req, errs);
    w.res.resize(w.pts.size());
    moe::evaluate_plan_range(base, w.pts, 0, w.pts.size(), moe::builtin_tables(), w.res.data());
    w.sum = moe::summarize_plan(w.pts, w.res, req.sla);
    return w;
}

}  // namespace

TEST_CASE("evaluate_point equals estimate(); judge and the summary count every point once") {
    const moe::Scenario base = dsv3_h200();
    moe::PlanRequest req;
    req.gpus = 16;
    req.sla.tpot_ms = 30;
    moe::Issues errs;
    const WholePlan w = whole_plan(base, req, errs);
    const std::vector<moe::PlanPoint>& pts = w.pts;
    const std::vector<moe::PointResult>& res = w.res;
    const moe::PlanSummary& sum = w.sum;
    std::size_t total = 0;
    for (std::size_t c : sum.counts) total += c;
    CHECK(total == pts.size());
    REQUIRE(!sum.front.empty());
    moe::Scenario s = base;
    for (std::size_t i : sum.front) {
        moe::apply_point(s, pts[i]);
        const moe::Estimate e = moe::estimate(s, moe::builtin_tables());
        REQUIRE(e.ok);
        CHECK(e.memory.fits);
        CHECK(e.decode.tpot_ms <= 30);
        CHECK(e.decode.tokens_per_s_per_gpu == res[i].output_tokens_per_s_per_gpu);
    }
}

TEST_CASE("launch commands carry the layout in each engine's flags") {
    moe::Scenario s = dsv3_h200();
    moe::PlanPoint p;
    p.tp = 1, p.dp = 16, p.ep = 16, p.batch = 64, p.mtp = 2;
    p.kv_cache = moe::DtypeSel{false, moe::Dtype::fp8};
    p.two_batch_overlap = true;
    moe::apply_point(s, p);
    const std::string sg = moe::launch_command(s, p, moe::ServingEngine::sglang);
    for (const char* flag : {"--model-path deepseek-ai/DeepSeek-V3", "--tp 16", "--dp 16 --enable-dp-attention", "--ep-size 16",
                             "--moe-a2a-backend deepep", "--enable-two-batch-overlap", "--speculative-num-steps 2",
                             "--kv-cache-dtype fp8_e4m3", "--mem-fraction-static 0.88", "--nnodes 2"})  // SGLang's default fraction
        CHECK_MESSAGE(sg.find(flag) != std::string::npos, sg, " lacks ", flag);
    p.a2a = moe::A2ABackend::deepep_low_latency;
    const std::string vl = moe::launch_command(s, p, moe::ServingEngine::vllm);
    for (const char* flag : {"vllm serve deepseek-ai/DeepSeek-V3", "--tensor-parallel-size 1", "--data-parallel-size 16",
                             "--enable-expert-parallel", "--all2all-backend deepep_low_latency", "--enable-dbo",
                             "\"num_speculative_tokens\":2", "--kv-cache-dtype fp8", "--gpu-memory-utilization 0.9"})
        CHECK_MESSAGE(vl.find(flag) != std::string::npos, vl, " lacks ", flag);
    const std::string tr = moe::launch_command(s, p, moe::ServingEngine::trtllm);
    for (const char* flag : {"trtllm-serve deepseek-ai/DeepSeek-V3", "--tp_size 16", "--ep_size 16", "enable_attention_dp: true",
                             "decoding_type: MTP, num_nextn_predict_layers: 2", "dtype: fp8", "--extra_llm_api_options"})
        CHECK_MESSAGE(tr.find(flag) != std::string::npos, tr, " lacks ", flag);
}

namespace {
// DeepSeek-V3 on H200 served at 2K in / 1K out (the serving layer on: aggregated and disaggregated points).
moe::Scenario dsv3_h200_serving() {
    return moe_test::scenario(R"({"model":"deepseek-v3","hardware":"h200","serving":{"mode":"aggregated","isl":2048,"osl":1024}})");
}

bool same(const moe::PointResult& a, const moe::PointResult& b) {
    return a.ok == b.ok && a.fits == b.fits && a.gpus == b.gpus && a.error == b.error &&
           (!a.ok || (a.ttft_ms == b.ttft_ms && a.tpot_ms == b.tpot_ms &&
                      a.output_tokens_per_s_per_gpu == b.output_tokens_per_s_per_gpu && a.tokens_per_s_per_user == b.tokens_per_s_per_user));
}
}  // namespace

TEST_CASE("disaggregated plans: pools that divide the budget, the shared steps give evaluate()'s numbers") {
    const moe::Scenario base = dsv3_h200_serving();
    moe::PlanRequest req;
    req.gpus = 32;
    req.sla.tpot_ms = 50;
    moe::Issues errs;
    REQUIRE(moe::plan_space_from_json(nlohmann::json::parse(R"({"batch":[16,128],"mtp_draft_tokens":[0,1],"kv_cache":["fp8"]})"),
                                      req.space, errs));
    const std::vector<moe::PlanPoint> pts = moe::enumerate_plan(base, req, errs);
    REQUIRE(errs.empty());
    std::size_t agg = 0, dis = 0;
    for (const moe::PlanPoint& p : pts) {
        if (p.mode == moe::PlanMode::aggregated) {
            ++agg;
            CHECK(dis == 0);  // aggregated points first
            continue;
        }
        ++dis;
        CHECK(p.prefill_workers >= 1);
        CHECK(p.decode_workers >= 1);
        CHECK(32 % p.world() == 0);
        CHECK(p.replicas * p.world() == 32);
        CHECK(p.world() == p.prefill_workers * p.prefill_tp * p.prefill_dp + p.decode_workers * p.tp * p.dp * p.pp);
    }
    REQUIRE(agg > 0);
    REQUIRE(dis > 0);
    // The range (with its shared pool steps) against evaluate_point() on each point's own scenario, for a sample
    // of the disaggregated points and a few aggregated ones.
    std::vector<moe::PointResult> res(pts.size());
    moe::evaluate_plan_range(base, pts, 0, pts.size(), moe::builtin_tables(), res.data());
    const std::size_t stride = std::max<std::size_t>(1, pts.size() / 400);
    for (std::size_t i = 0; i < pts.size(); i += stride) {
        moe::Scenario s = base;
        moe::apply_point(s, pts[i]);
        INFO("point " << i);
        CHECK(same(moe::evaluate_point(s, moe::builtin_tables()), res[i]));
    }
    // The front: each row's scenario meets the SLA and fits, by evaluate().
    const moe::PlanSummary sum = moe::summarize_plan(pts, res, req.sla);
    REQUIRE(!sum.front.empty());
    bool any_dis = false;
    for (std::size_t i : sum.front) {
        moe::Scenario s = base;
        moe::apply_point(s, pts[i]);
        const moe::Estimate e = moe::evaluate(s, moe::builtin_tables());
        REQUIRE(e.ok);
        CHECK(e.serving.fits);
        // the screening pass (the closed form) gave the row's numbers; evaluate() simulates (PlanFront::refine())
        const moe::PointResult screened = moe::evaluate_point(s, moe::builtin_tables());
        CHECK(screened.tpot_ms <= 50);
        CHECK(screened.output_tokens_per_s_per_gpu == res[i].output_tokens_per_s_per_gpu);
        any_dis |= pts[i].mode == moe::PlanMode::disaggregated;
        if (pts[i].mode == moe::PlanMode::disaggregated) {
            CHECK(s.serving.mode == moe::ServingMode::disaggregated);
            CHECK(e.serving.gpus == pts[i].world());
            CHECK(moe::prefill_launch_command(s, pts[i], moe::ServingEngine::sglang).find("--disaggregation-mode prefill") != std::string::npos);
            CHECK(moe::launch_command(s, pts[i], moe::ServingEngine::sglang).find("--disaggregation-mode decode") != std::string::npos);
        } else {
            CHECK(e.memory.fits);
        }
    }
    MESSAGE("front: " << sum.front.size() << " rows, disaggregated among them: " << any_dis);
}

TEST_CASE("PlanSearch: slices of any size give evaluate_plan_range()'s results and front") {
    const moe::Scenario base = dsv3_h200_serving();
    moe::PlanRequest req;
    req.gpus = 16;
    req.sla.tpot_ms = 60;
    moe::Issues errs;
    REQUIRE(moe::plan_space_from_json(nlohmann::json::parse(R"({"batch":[8,64,256],"mtp_draft_tokens":[0,2]})"), req.space, errs));
    const WholePlan w = whole_plan(base, req, errs);
    const std::vector<moe::PlanPoint>& pts = w.pts;
    const std::vector<moe::PointResult>& res = w.res;
    const moe::PlanSummary& whole = w.sum;
    for (std::size_t slice : {std::size_t(1), std::size_t(7), std::size_t(1000), std::size_t(1) << 30}) {
        moe::PlanSearch search;
        REQUIRE(search.start(base, req, errs));
        CHECK(search.progress() == 0.0);
        std::size_t steps = 0;
        while (!search.done()) {
            CHECK(search.step(slice, moe::builtin_tables()) > 0);
            ++steps;
            if (steps > pts.size() + 1) break;
        }
        CHECK(search.progress() == 1.0);
        REQUIRE(search.points().size() == pts.size());
        // every point as the screening pass gives it, but the front's: re-ranked by the simulation (what eval gives)
        std::vector<bool> on_front(pts.size(), false);
        for (std::size_t i : search.summary().front) on_front[i] = true;
        for (std::size_t i = 0; i < pts.size(); ++i)
            if (!on_front[i] && same(search.results()[i], res[i])) continue;
            else {
                const moe::PointResult sim = moe::evaluate_point_simulated(search.scenario_of(i), moe::builtin_tables());
                INFO("point " << i << ": TTFT " << search.results()[i].ttft_ms << " / simulated " << sim.ttft_ms);
                REQUIRE(same(search.results()[i], sim));
            }
        REQUIRE_FALSE(search.summary().front.empty());
        CHECK(search.step(10, moe::builtin_tables()) == 0);
        // a row's scenario is the base with the point applied
        const moe::Scenario s = search.scenario_of(whole.front.front());
        CHECK(same(moe::evaluate_point(s, moe::builtin_tables()), res[whole.front.front()]));
    }
    moe::PlanSearch bad;
    req.gpus = 0;
    CHECK_FALSE(bad.start(base, req, errs));
    CHECK_FALSE(bad.started());
}

// ---- issue 27: the plan without holding its points --------------------------------------------------------------
namespace {
bool same_point(const moe::PlanPoint& a, const moe::PlanPoint& b) {
    return std::tie(a.tp, a.dp, a.ep, a.pp, a.batch, a.replicas, a.mtp, a.two_batch_overlap, a.a2a, a.mode, a.prefill_tp,
                    a.prefill_dp, a.prefill_ep, a.prefill_workers, a.decode_workers) ==
               std::tie(b.tp, b.dp, b.ep, b.pp, b.batch, b.replicas, b.mtp, b.two_batch_overlap, b.a2a, b.mode, b.prefill_tp,
                        b.prefill_dp, b.prefill_ep, b.prefill_workers, b.decode_workers) &&
           a.weights.is_auto == b.weights.is_auto && a.weights.value == b.weights.value &&
           a.kv_cache.is_auto == b.kv_cache.is_auto && a.kv_cache.value == b.kv_cache.value;
}
}  // namespace

TEST_CASE("PlanFront: the same front as pareto_front, whatever the order points come in and however split") {
    std::mt19937 rng(27);
    for (int trial = 0; trial < 200; ++trial) {
        const std::size_t n = 1 + rng() % 400;
        std::vector<double> gpu(n), user(n);
        std::vector<bool> cand(n);
        std::vector<moe::PointResult> res(n);
        for (std::size_t i = 0; i < n; ++i) {
            gpu[i] = double(rng() % (trial % 2 ? 8 : 60));  // coarse values: many ties and repeats
            user[i] = double(rng() % (trial % 2 ? 8 : 60));
            res[i].ok = rng() % 7 != 0;
            res[i].fits = rng() % 5 != 0;
            res[i].output_tokens_per_s_per_gpu = gpu[i];
            res[i].tokens_per_s_per_user = user[i];
            cand[i] = moe::judge(res[i], moe::Sla()) == moe::Verdict::candidate;
        }
        const std::vector<std::size_t> expected = moe::pareto_front(gpu, user, cand);
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), std::size_t(0));
        if (trial % 3) std::shuffle(order.begin(), order.end(), rng);
        // into up to 4 partial fronts, merged at the end
        std::vector<moe::PlanFront> parts(1 + std::size_t(trial % 4));
        for (std::size_t k = 0; k < n; ++k) parts[k % parts.size()].add(order[k], moe::PlanPoint(), res[order[k]]);
        moe::PlanFront front;
        for (const moe::PlanFront& p : parts) front.merge(p);
        std::vector<std::size_t> got;
        for (const moe::PlanFront::Row& r : front.rows()) got.push_back(std::size_t(r.index));
        CHECK(got == expected);
        CHECK(front.points() == n);
        CHECK(front.count(moe::Verdict::candidate) == std::size_t(std::count(cand.begin(), cand.end(), true)));
        front.finish();
        for (std::size_t i = 0; i < n; ++i)
            CHECK(front.on_front(i) == (std::find(expected.begin(), expected.end(), i) != expected.end()));
    }
}

TEST_CASE("PlanEnumerator: enumerate_plan()'s points in its order, counted without listing them") {
    struct Case {
        moe::Scenario base;
        int gpus;
        const char* space;
        moe::ServingEngine engine;
    };
    const moe::Scenario step = dsv3_h200(), serving = dsv3_h200_serving();
    const moe::Scenario qwen = moe_test::scenario(R"({"model":"qwen3-30b-a3b","hardware":"h200","serving":{"mode":"aggregated","isl":1024,"osl":512}})");
    const Case cases[] = {
        {step, 64, "{}", moe::ServingEngine::sglang},
        {step, 48, R"({"pp":[1,2,3],"mtp_draft_tokens":[0,3]})", moe::ServingEngine::vllm},
        {serving, 16, "{}", moe::ServingEngine::sglang},
        {serving, 24, R"({"prefill_workers":[1,2],"decode_workers":[1,3],"min_gpus_per_replica":4,"max_gpus_per_replica":12})", moe::ServingEngine::trtllm},
        {qwen, 16, R"({"mode":["disaggregated"],"a2a_backend":["pplx","allgather"]})", moe::ServingEngine::vllm},
        {qwen, 7, "{}", moe::ServingEngine::sglang},
    };
    for (const Case& c : cases) {
        INFO(c.gpus << " GPUs, space " << c.space);
        moe::PlanRequest req;
        req.gpus = c.gpus;
        req.engine = c.engine;
        moe::Issues errs;
        REQUIRE(moe::plan_space_from_json(nlohmann::json::parse(c.space), req.space, errs));
        const std::vector<moe::PlanPoint> pts = moe::enumerate_plan(c.base, req, errs);
        moe::PlanEnumerator space;
        REQUIRE(space.start(c.base, req, errs));
        REQUIRE(errs.empty());
        CHECK(space.size() == pts.size());
        CHECK(space.aggregated_points() + space.disaggregated_points() == pts.size());
        std::size_t i = 0;
        bool in_order = true;
        space.for_each([&](const moe::PlanPoint& p) {
            in_order = in_order && i < pts.size() && same_point(p, pts[i]);
            ++i;
            return true;
        });
        CHECK(in_order);
        CHECK(i == pts.size());
        // stopping early
        std::size_t seen = 0;
        CHECK_FALSE(space.for_each([&](const moe::PlanPoint&) { return ++seen < 5; }));
        CHECK(seen == std::min<std::size_t>(5, pts.size()));
    }
}

TEST_CASE("PlanFront over a real plan: summarize_plan()'s front and counts") {
    const moe::Scenario base = dsv3_h200_serving();
    moe::PlanRequest req;
    req.gpus = 16;
    req.sla.tpot_ms = 40;
    moe::Issues errs;
    const WholePlan w = whole_plan(base, req, errs);
    const std::vector<moe::PlanPoint>& pts = w.pts;
    const std::vector<moe::PointResult>& res = w.res;
    const moe::PlanSummary& sum = w.sum;
    moe::PlanFront front(req.sla);
    for (std::size_t i = 0; i < pts.size(); ++i) front.add(i, pts[i], res[i]);
    std::vector<std::size_t> got;
    for (const moe::PlanFront::Row& r : front.rows()) got.push_back(std::size_t(r.index));
    CHECK(got == sum.front);
    for (int v = 0; v < 6; ++v) CHECK(front.count(moe::Verdict(v)) == sum.counts[v]);
    REQUIRE(!front.rows().empty());
    CHECK(same_point(front.rows()[0].point, pts[sum.front[0]]));
    CHECK(same(front.rows()[0].result, res[sum.front[0]]));
}

TEST_CASE("plan space: repeated values are dropped (first kept, in order); a space over the limit is refused with its size") {
    const moe::Scenario base = dsv3_h200_serving();
    moe::PlanRequest req;
    req.gpus = 8;
    moe::Issues errs;
    REQUIRE(moe::plan_space_from_json(nlohmann::json::parse(
                                          R"({"batch":[64,16,64,64,16,32],"kv_cache":["fp8","auto","fp8"],"mode":["aggregated","aggregated"],
                                              "two_batch_overlap":[true,false,true],"a2a_backend":["allgather","allgather"],"pp":[1,1]})"),
                                      req.space, errs));
    const moe::PlanSpace s = moe::resolve_space(base, req);
    CHECK(s.batch == std::vector<int>{64, 16, 32});
    REQUIRE(s.kv_cache.size() == 2);
    CHECK(s.kv_cache[0].value == moe::Dtype::fp8);
    CHECK(s.kv_cache[1].is_auto);
    CHECK(s.mode.size() == 1);
    CHECK(s.two_batch_overlap == std::vector<int>{1, 0});
    CHECK(s.a2a_backend.size() == 1);
    CHECK(s.pp == std::vector<int>{1});
    moe::PlanEnumerator space;
    REQUIRE(space.start(base, req, errs));
    const std::uint64_t n = space.size();
    req.max_points = n - 1;
    CHECK_FALSE(space.start(base, req, errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "space");
    std::string size = std::to_string(n);
    for (int i = int(size.size()) - 3; i > 0; i -= 3) size.insert(std::size_t(i), ",");
    CHECK(errs[0].message.rfind(size + " points (", 0) == 0);
    CHECK(errs[0].message.find("narrow --space") != std::string::npos);
    CHECK(moe::enumerate_plan(base, req, errs).empty());  // the web's path refuses it too
}

TEST_CASE("launch commands pass their engine's rules: every front row of three plans, both pools (issue 26)") {
    // The rules themselves catch what they should (SGLang ignores --ep-size under DeepEP unless it equals --tp: the
    // first front row of the issue's plan, --tp 32 --dp 16 --ep-size 8 with DeepEP, would not have run as planned).
    const auto broken = moe::check_launch_command(moe::ServingEngine::sglang,
        "python -m sglang.launch_server --model-path m --tp 32 --dp 16 --enable-dp-attention --ep-size 8 "
        "--moe-a2a-backend deepep --deepep-mode auto");
    REQUIRE(broken.size() == 1);
    CHECK(broken[0].rfind("sglang.deepep_ep_equals_tp", 0) == 0);
    CHECK(moe::check_launch_command(moe::ServingEngine::sglang, "python -m sglang.launch_server --tp 8 --dp 4").size() == 1);
    CHECK(moe::check_launch_command(moe::ServingEngine::vllm, "vllm serve m --all2all-backend pplx").size() == 1);
    CHECK(moe::check_launch_command(moe::ServingEngine::trtllm, "mpirun -np 8 trtllm-llmapi-launch trtllm-serve m --tp_size 16 --ep_size 3").size() == 2);
    CHECK(moe::launch_rule_count(moe::ServingEngine::sglang) >= 5);
    // Three plans (DeepSeek-V3 on 32 H200 with the serving layer, one per engine, and a step-level SGLang plan with
    // DeepEP): every front row's commands pass.
    struct Case { moe::ServingEngine engine; bool serving; };
    int rows = 0;
    for (const Case& k : {Case{moe::ServingEngine::sglang, true}, Case{moe::ServingEngine::vllm, true},
                          Case{moe::ServingEngine::trtllm, true}, Case{moe::ServingEngine::sglang, false}}) {
        moe::Scenario base = dsv3_h200_serving();
        if (!k.serving) base.serving.mode = moe::ServingMode::off;
        base.runtime.engine = moe::engine_kind_of(k.engine);
        moe::PlanRequest req;
        req.gpus = 32;
        req.engine = k.engine;
        req.sla.tpot_ms = 50;
        moe::Issues errs;
        REQUIRE(moe::plan_space_from_json(nlohmann::json::parse(R"({"batch":[16,128],"kv_cache":["fp8"]})"), req.space, errs));
        const WholePlan w = whole_plan(base, req, errs);
        REQUIRE(errs.empty());
        const std::vector<moe::PlanPoint>& pts = w.pts;
        const moe::PlanSummary& sum = w.sum;
        REQUIRE(!sum.front.empty());
        for (std::size_t i : sum.front) {
            moe::Scenario s = base;
            moe::apply_point(s, pts[i]);
            for (const std::string& cmd : {moe::launch_command(s, pts[i], k.engine), moe::prefill_launch_command(s, pts[i], k.engine)}) {
                const std::vector<std::string> bad = moe::check_launch_command(k.engine, cmd);
                INFO(cmd);
                CHECK(bad.empty());
                for (const std::string& b : bad) MESSAGE(b);
            }
            ++rows;
        }
    }
    MESSAGE(rows << " front rows checked");
    CHECK(rows >= 8);
}
