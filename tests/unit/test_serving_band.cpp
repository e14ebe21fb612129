// test_serving_band.cpp — issue 28: the p10 .. p90 band (serving_band()), calibration files (engines_from_text) and the
// engines evaluate() uses when handed none (active_engines / use_engines).
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "core/base/portable_math.h"
#include "core/serving/engine.h"
#include "core/serving/serving.h"
#include "test_helpers.h"

TEST_CASE("band: the model's number scaled by the held-out quantiles, and always inside its band") {
    moe::EngineConstants k;
    moe::ServingResult r;
    r.ttft_ms = 1000;
    r.tpot_ms = 20;
    r.output_tokens_per_s_per_gpu = 500;
    moe::serving_band(k, r);
    CHECK_FALSE(r.has_band);  // no quantiles (the ideal engine): no band
    k.ttft_log_error_p10 = std::log(0.8);
    k.ttft_log_error_p90 = std::log(1.5);
    k.tpot_log_error_p10 = std::log(0.9);
    k.tpot_log_error_p90 = std::log(1.2);
    // every held-out run above the prediction: p10's quantile is positive, the band widens to the mean
    k.throughput_log_error_p10 = std::log(1.1);
    k.throughput_log_error_p90 = std::log(1.3);
    moe::serving_band(k, r);
    REQUIRE(r.has_band);
    CHECK(r.ttft_ms_p10 == doctest::Approx(800));
    CHECK(r.ttft_ms_p90 == doctest::Approx(1500));
    CHECK(r.tpot_ms_p10 == doctest::Approx(18));
    CHECK(r.tpot_ms_p90 == doctest::Approx(24));
    CHECK(r.output_tokens_per_s_per_gpu_p10 == doctest::Approx(500));
    CHECK(r.output_tokens_per_s_per_gpu_p90 == doctest::Approx(650));
}

TEST_CASE("band: portable_exp, the same bits on the page and the CLI, within 2 ulp of std::exp") {
    // The band multiplies by exp(quantile); Emscripten's libm and glibc's std::exp differed by one ulp on a shipped
    // quantile (928.8014777993866 against ...867), so the band uses portable_exp (core/base/portable_math.h):
    // IEEE operations only. Checked here against std::exp over [-5, 5] (the quantiles' range) and beyond.
    int worst_ulp = 0;
    for (int i = -20000; i <= 20000; ++i) {
        const double x = i * 1e-3;  // -20 .. 20 in steps of 0.001
        const double a = moe::portable_exp(x), b = std::exp(x);
        const double ulp = std::nextafter(b, HUGE_VAL) - b;
        worst_ulp = std::max(worst_ulp, int(std::fabs(a - b) / ulp + 0.5));
    }
    MESSAGE("portable_exp: worst " << worst_ulp << " ulp from std::exp over [-20, 20]");
    CHECK(worst_ulp <= 2);
    CHECK(moe::portable_exp(0) == 1.0);
    CHECK(moe::portable_exp(1) == doctest::Approx(2.718281828459045).epsilon(1e-15));
    CHECK(moe::portable_exp(-1000) == 0.0);
    CHECK(std::isinf(moe::portable_exp(1000)));
    CHECK(std::isnan(moe::portable_exp(std::nan(""))));
}

TEST_CASE("calibration files: over the shipped constants, errors naming the key, in force until reset") {
    moe::EngineSet set;
    moe::Issues errs;
    CHECK_FALSE(moe::engines_from_text("{\"sglang\":", set, errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "engines");
    errs.clear();
    CHECK_FALSE(moe::engines_from_text(R"({"vllm":{"tpot_log_error_p90":{"value":9}}})", set, errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "engines.vllm.tpot_log_error_p90");
    errs.clear();
    // what the file names replaces the shipped value; the rest stays
    REQUIRE(moe::engines_from_text(R"({"vllm":{"request_overhead_ms":{"value":7.5,"interval_90":[5,9]},
                                        "ttft_log_error_p10":-0.2,"ttft_log_error_p90":0.3}})", set, errs));
    const moe::EngineConstants& shipped = moe::builtin_engines().get(moe::EngineKind::vllm);
    CHECK(set.get(moe::EngineKind::vllm).request_overhead_ms == 7.5);
    CHECK(set.get(moe::EngineKind::vllm).decode_overhead_per_layer_us == shipped.decode_overhead_per_layer_us);
    CHECK(set.get(moe::EngineKind::sglang).request_overhead_ms == moe::builtin_engines().get(moe::EngineKind::sglang).request_overhead_ms);
    CHECK(set.get(moe::EngineKind::vllm).has_band());
    // evaluate() without a set follows use_engines(), and goes back with nullptr
    moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-30b-a3b","hardware":"h200","serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":16}})");
    s.runtime.engine = moe::EngineKind::vllm;
    const moe::Estimate before = moe::evaluate(s, moe::builtin_tables());
    moe::use_engines(&set);
    const moe::Estimate with = moe::evaluate(s, moe::builtin_tables());
    moe::use_engines(nullptr);
    const moe::Estimate after = moe::evaluate(s, moe::builtin_tables());
    REQUIRE((before.ok && with.ok && after.ok));
    CHECK(with.serving.ttft_ms != before.serving.ttft_ms);
    CHECK(after.serving.ttft_ms == before.serving.ttft_ms);
    REQUIRE(with.serving.has_band);
    CHECK(with.serving.ttft_ms_p10 == doctest::Approx(with.serving.ttft_ms * std::exp(-0.2)));
    CHECK(with.serving.ttft_ms_p90 == doctest::Approx(with.serving.ttft_ms * std::exp(0.3)));
}

#ifndef __EMSCRIPTEN__  // (the wasm build has no threads; its page has one calibration at a time)
TEST_CASE("calibrations are per thread: two threads evaluating with different engines at once each get their own") {
    // Two calibrations of vLLM that differ in the per-request overhead (TTFT moves by their difference).
    moe::EngineSet a, b;
    moe::Issues errs;
    REQUIRE(moe::engines_from_text(R"({"vllm":{"request_overhead_ms":{"value":5}}})", a, errs));
    REQUIRE(moe::engines_from_text(R"({"vllm":{"request_overhead_ms":{"value":50}}})", b, errs));
    moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-30b-a3b","hardware":"h200","serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":16}})");
    s.runtime.engine = moe::EngineKind::vllm;
    auto ttft_with = [&](const moe::EngineSet* set) {
        moe::use_engines(set);
        const double t = moe::evaluate(s, moe::builtin_tables()).serving.ttft_ms;
        moe::use_engines(nullptr);
        return t;
    };
    const double want_a = ttft_with(&a), want_b = ttft_with(&b), want_shipped = ttft_with(nullptr);
    REQUIRE(want_a != want_b);
    // Both threads install their set, wait until the other has installed its own, then evaluate: with one
    // process-wide set, the last one installed would be both threads' numbers.
    std::atomic<int> installed{0};
    std::vector<double> got_a, got_b;
    auto run = [&](const moe::EngineSet* set, std::vector<double>* out) {
        moe::use_engines(set);
        ++installed;
        while (installed.load() < 2) std::this_thread::yield();
        for (int i = 0; i < 3; ++i) out->push_back(moe::evaluate(s, moe::builtin_tables()).serving.ttft_ms);
        moe::use_engines(nullptr);
    };
    std::thread ta(run, &a, &got_a), tb(run, &b, &got_b);
    ta.join();
    tb.join();
    CHECK(got_a == std::vector<double>(3, want_a));
    CHECK(got_b == std::vector<double>(3, want_b));
    // this thread never installed one: the shipped constants, and a new thread starts with them too
    CHECK(moe::engines_in_use() == nullptr);
    CHECK(moe::evaluate(s, moe::builtin_tables()).serving.ttft_ms == want_shipped);
    moe::use_engines(&a);
    const moe::EngineSet* seen = &a;
    std::thread([&] { seen = moe::engines_in_use(); }).join();
    moe::use_engines(nullptr);
    CHECK(seen == nullptr);
}
#endif
