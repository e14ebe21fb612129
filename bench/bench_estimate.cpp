// bench_estimate.cpp — speed of one estimate() (Google Benchmark). Target (issue 13): <= 1 us median on the preset
// scenarios.
//   build-native/bench/bench_estimate --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Each benchmark cycles through 64 variants of its preset scenario, the batch and the context (decode KV length,
// prefill prompt length) moved around the preset's values, one variant per call: the core keeps some results per
// thread between calls (the routed experts' batch envelope, table picks), and a benchmark that repeated one scenario
// would time those caches' hits instead of the model. What the caches share across these variants is what a sweep
// or a plan over batch and context shares too.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "core/moe.h"

namespace {

moe::Scenario preset(const char* id) {
    const moe::CatalogEntry* s = moe::builtin_catalog().scenario(id);
    return moe::scenario_from_json(s->json, moe::builtin_catalog()).scenario;
}

// 64 variants: batch in [b/2, 3b/2) and the context (or prompt) in [c/2, 3c/2), in steps that are co-prime with
// the cycle, so that neighbouring calls differ in both.
std::vector<moe::Scenario> variants(const char* id) {
    const moe::Scenario base = preset(id);
    std::vector<moe::Scenario> out;
    const int b0 = std::max(2, base.workload.batch), p0 = base.workload.prompt_len, c0 = base.context_len();
    for (int i = 0; i < 64; ++i) {
        moe::Scenario s = base;
        s.workload.batch = std::max(1, b0 / 2 + (i * 37 % 64) * b0 / 64);
        s.workload.context_len = std::max(1, c0 / 2 + (i * 23 % 64) * c0 / 64);
        s.workload.prompt_len = std::max(1, p0 / 2 + (i * 23 % 64) * p0 / 64);
        out.push_back(std::move(s));
    }
    return out;
}

void run(benchmark::State& state, const char* id) {
    const std::vector<moe::Scenario> v = variants(id);
    const moe::Tables& t = moe::builtin_tables();
    for (const moe::Scenario& s : v)
        if (!moe::estimate(s, t).ok) state.SkipWithError("a variant is invalid");
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(moe::estimate(v[i], t));
        i = (i + 1) & 63;
    }
}

// The same variants through estimate_into() with one Estimate kept across calls, warnings off: what a sweep worker
// does per point (its vectors keep their capacity, no warning text). Not the headline figure (that is estimate()).
void run_into(benchmark::State& state, const char* id) {
    const std::vector<moe::Scenario> v = variants(id);
    const moe::Tables& t = moe::builtin_tables();
    moe::Estimate e;
    for (const moe::Scenario& s : v) {
        moe::estimate_into(s, t, e, false);
        if (!e.ok) state.SkipWithError("a variant is invalid");
    }
    std::size_t i = 0;
    for (auto _ : state) {
        moe::estimate_into(v[i], t, e, false);
        benchmark::DoNotOptimize(e);
        i = (i + 1) & 63;
    }
}

void BM_EstimateDeepSeekV3Decode(benchmark::State& state) { run(state, "deepseek-v3-decode-h800-ep128"); }
BENCHMARK(BM_EstimateDeepSeekV3Decode);

void BM_EstimateDeepSeekV3Prefill(benchmark::State& state) { run(state, "deepseek-v3-prefill-h800-ep32"); }
BENCHMARK(BM_EstimateDeepSeekV3Prefill);

void BM_EstimateGptOssBothPhases(benchmark::State& state) { run(state, "gpt-oss-120b-h100"); }
BENCHMARK(BM_EstimateGptOssBothPhases);

void BM_SweepPointEstimateIntoDeepSeekV3Decode(benchmark::State& state) { run_into(state, "deepseek-v3-decode-h800-ep128"); }
BENCHMARK(BM_SweepPointEstimateIntoDeepSeekV3Decode);

void BM_SweepPointEstimateIntoDeepSeekV3Prefill(benchmark::State& state) { run_into(state, "deepseek-v3-prefill-h800-ep32"); }
BENCHMARK(BM_SweepPointEstimateIntoDeepSeekV3Prefill);

void BM_SweepPointEstimateIntoGptOssBothPhases(benchmark::State& state) { run_into(state, "gpt-oss-120b-h100"); }
BENCHMARK(BM_SweepPointEstimateIntoGptOssBothPhases);

// Every preset scenario, the same way (64 variants each): BM_EstimatePreset/<id>. The issue's figure is the median
// over these of each one's median time; scripts/bench_presets.sh runs them and prints it.
const int kPresetBenchmarks = [] {
    for (const moe::CatalogEntry& s : moe::builtin_catalog().scenarios()) {
        const std::string id = s.id;
        benchmark::RegisterBenchmark(("BM_EstimatePreset/" + id).c_str(), [id](benchmark::State& st) { run(st, id.c_str()); });
    }
    return 0;
}();

void BM_ParseScenario(benchmark::State& state) {
    const std::string text = R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":128,"ep":128},"workload":{"phase":"decode","batch":128}})";
    for (auto _ : state) benchmark::DoNotOptimize(moe::parse_scenario(text, moe::builtin_catalog()));
}
BENCHMARK(BM_ParseScenario);

}  // namespace

// One serving evaluation (issue 25: <= 1 ms median): the step-time surface (estimate() at its grid points) and the
// simulated benchmark, on each serving preset, the clients moved around the preset's (a fresh surface every call).
void run_serving(benchmark::State& state, const char* id) {
    const moe::Scenario base = preset(id);
    std::vector<moe::Scenario> v;
    for (int i = 0; i < 16; ++i) {
        moe::Scenario s = base;
        s.serving.concurrency = std::max(1, base.serving.concurrency / 2 + (i * 7 % 16) * base.serving.concurrency / 16);
        v.push_back(s);
    }
    const moe::Tables& t = moe::builtin_tables();
    for (const moe::Scenario& s : v)
        if (!moe::evaluate(s, t).ok) state.SkipWithError("a variant is invalid");
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(moe::evaluate(v[i], t));
        i = (i + 1) & 15;
    }
}
void BM_ServingDeepSeekV3B200SGLang(benchmark::State& st) { run_serving(st, "deepseek-v3-serving-b200-sglang"); }
BENCHMARK(BM_ServingDeepSeekV3B200SGLang)->Unit(benchmark::kMicrosecond);
void BM_ServingQwen3H200VLLM(benchmark::State& st) { run_serving(st, "qwen3-235b-a22b-serving-h200-vllm"); }
BENCHMARK(BM_ServingQwen3H200VLLM)->Unit(benchmark::kMicrosecond);
