// bench_plan.cpp — speed of the planner (Google Benchmark): DeepSeek-V3 on 64 H200 at 2K in / 1K out over the
// default space (about 53,000 points), enumeration + every evaluate_point() + the front. Target: <= 2 s natively.
//   build-native/bench/bench_plan --benchmark_min_time=1   (threads: 1, then every core, as the CLI splits it)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "core/moe.h"
#include "core/plan/plan.h"

namespace {

moe::Scenario dsv3_h200() {
    return moe::parse_scenario(R"({"model":"deepseek-v3","hardware":"h200","workload":{"prompt_len":2048,"output_len":1024}})",
                               moe::builtin_catalog())
        .scenario;
}

void BM_PlanDeepSeekV3On64H200(benchmark::State& state) {
    const moe::Scenario base = dsv3_h200();
    const moe::Tables& tables = moe::builtin_tables();
    moe::PlanRequest req;
    req.gpus = 64;
    req.sla.tpot_ms = 30;
    const int threads = state.range(0) > 0 ? int(state.range(0)) : int(std::max(1u, std::thread::hardware_concurrency()));
    std::size_t points = 0, front = 0;
    for (auto _ : state) {
        moe::Issues errs;
        const std::vector<moe::PlanPoint> pts = moe::enumerate_plan(base, req, errs);
        std::vector<moe::PointResult> res(pts.size());
        std::vector<std::thread> pool;
        const std::size_t per = (pts.size() + std::size_t(threads) - 1) / std::size_t(threads);
        for (int t = 0; t < threads; ++t) {
            const std::size_t b = std::min(pts.size(), per * std::size_t(t)), e = std::min(pts.size(), b + per);
            pool.emplace_back([&, b, e] { moe::evaluate_plan_range(base, pts, b, e, tables, res.data() + b); });
        }
        for (std::thread& t : pool) t.join();
        const moe::PlanSummary sum = moe::summarize_plan(pts, res, req.sla);
        points = pts.size();
        front = sum.front.size();
        benchmark::DoNotOptimize(sum.front.data());
    }
    state.counters["points"] = double(points);
    state.counters["front"] = double(front);
    state.counters["threads"] = threads;
    state.counters["us_per_point"] = benchmark::Counter(double(points), benchmark::Counter::kIsIterationInvariantRate |
                                                                            benchmark::Counter::kInvert);
}
// 1 thread, then every core (0)
BENCHMARK(BM_PlanDeepSeekV3On64H200)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same budget with the serving layer (2K in / 1K out): aggregated and disaggregated points, as the page's Plan
// tab runs it (PlanSearch in slices of 128 points, one thread).
void BM_PlanServingDeepSeekV3On64H200(benchmark::State& state) {
    const moe::Scenario base =
        moe::parse_scenario(R"({"model":"deepseek-v3","hardware":"h200","serving":{"mode":"aggregated","isl":2048,"osl":1024}})",
                            moe::builtin_catalog())
            .scenario;
    moe::PlanRequest req;
    req.gpus = 64;
    req.sla.tpot_ms = 30;
    std::size_t points = 0, front = 0;
    for (auto _ : state) {
        moe::PlanSearch search;
        moe::Issues errs;
        search.start(base, req, errs);
        while (!search.done()) search.step(128, moe::builtin_tables());
        points = search.points().size();
        front = search.summary().front.size();
    }
    state.counters["points"] = double(points);
    state.counters["front"] = double(front);
}
BENCHMARK(BM_PlanServingDeepSeekV3On64H200)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

void BM_EvaluatePointDeepSeekV3(benchmark::State& state) {
    moe::Scenario s = dsv3_h200();
    moe::PlanPoint p;
    p.tp = 1, p.dp = 16, p.ep = 16, p.batch = 64;
    moe::apply_point(s, p);
    for (auto _ : state) benchmark::DoNotOptimize(moe::evaluate_point(s, moe::builtin_tables()));
}
BENCHMARK(BM_EvaluatePointDeepSeekV3);

}  // namespace
