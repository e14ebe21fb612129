// bench_estimate.cpp — speed of one estimate() (Google Benchmark). Target: <= 5 us median for DeepSeek-V3 decode.
//   build-native/bench/bench_estimate --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "core/moe.h"

namespace {

moe::Scenario preset(const char* id) {
    const moe::CatalogEntry* s = moe::builtin_catalog().scenario(id);
    return moe::scenario_from_json(s->json, moe::builtin_catalog()).scenario;
}

void BM_EstimateDeepSeekV3Decode(benchmark::State& state) {
    const moe::Scenario s = preset("deepseek-v3-decode-h800-ep128");
    const moe::Tables& t = moe::builtin_tables();
    for (auto _ : state) benchmark::DoNotOptimize(moe::estimate(s, t));
}
BENCHMARK(BM_EstimateDeepSeekV3Decode);

void BM_EstimateDeepSeekV3Prefill(benchmark::State& state) {
    const moe::Scenario s = preset("deepseek-v3-prefill-h800-ep32");
    const moe::Tables& t = moe::builtin_tables();
    for (auto _ : state) benchmark::DoNotOptimize(moe::estimate(s, t));
}
BENCHMARK(BM_EstimateDeepSeekV3Prefill);

void BM_EstimateGptOssBothPhases(benchmark::State& state) {
    const moe::Scenario s = preset("gpt-oss-120b-h100");
    const moe::Tables& t = moe::builtin_tables();
    for (auto _ : state) benchmark::DoNotOptimize(moe::estimate(s, t));
}
BENCHMARK(BM_EstimateGptOssBothPhases);

void BM_ParseScenario(benchmark::State& state) {
    const std::string text = R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":128,"ep":128},"workload":{"phase":"decode","batch":128}})";
    for (auto _ : state) benchmark::DoNotOptimize(moe::parse_scenario(text, moe::builtin_catalog()));
}
BENCHMARK(BM_ParseScenario);

}  // namespace
