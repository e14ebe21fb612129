// The expert cache's membership decided from selection counts over a window of batches (issue 30; seed 003: "sliding
// window tracks usage over last 128 batches", the cache holding the most selected experts): runtime.expert_offload.
// window_batches, the normal / fixed-threshold approximation of core/step/offload.cpp worked by hand and checked
// against a simulation of the windowed cache.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "test_helpers.h"

using moe_test::run;

namespace {

// Seed 003's Mixtral-shaped model on the M2 Max (tests/unit/test_helpers.h seed003_tok_s) at a given batch, experts
// streamed from the host with a cache of `cached` experts, Zipf skew `skew`, window W.
moe::Estimate seed003_window(int experts, int cached, int batch, int window, double skew = 1.5) {
    nlohmann::json model = {{"architectures", {"MixtralForCausalLM"}}, {"model_type", "mixtral"}, {"hidden_size", 2048},
                            {"intermediate_size", 8192}, {"num_hidden_layers", 16}, {"num_attention_heads", 16},
                            {"num_key_value_heads", 8}, {"head_dim", 128}, {"num_local_experts", experts},
                            {"num_experts_per_tok", 2}, {"vocab_size", 32000}, {"torch_dtype", "float16"}};
    nlohmann::json off = {{"tier", "host"}, {"prefetch", true}, {"skew", skew}, {"cached_experts_per_layer", cached},
                          {"window_batches", window}};
    nlohmann::json s = {{"model", model}, {"hardware", "m2-max"},
                        {"workload", {{"phase", "decode"}, {"batch", batch}, {"context_len", 512}}},
                        {"precision", {{"weights", "fp16"}, {"experts", "int4"}}},
                        {"runtime", {{"expert_offload", off}}}};
    return run(s.dump());
}

double hit(int experts, int cached, int batch, int window, double skew = 1.5) {
    return seed003_window(experts, cached, batch, window, skew).memory.offload_hit_rate;
}

double phi(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// A windowed most-selected cache simulated: each batch of B tokens, token t picks expert i with probability pi_i
// (independent draws: the model's marginals, and its counts' Binomial(W B, pi_i) law, exactly); the cache holds the C
// largest counts of the previous W batches (ties broken at random) and serves the batch's picks of its members.
// splitmix64 so the stream is the same on every standard library.
double simulate(const std::vector<double>& pi, int cached, int window, int batch, int batches) {
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    auto uniform = [&state] {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return double((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
    };
    const std::size_t L = pi.size();
    std::vector<std::vector<int>> ring(std::size_t(window), std::vector<int>(L, 0));
    std::vector<long> counts(L, 0);
    std::vector<std::pair<double, std::size_t>> order(L);
    double hits = 0, picks = 0;
    for (int b = 0; b < batches + window; ++b) {
        std::vector<int>& slot = ring[std::size_t(b % window)];
        std::vector<int> x(L, 0);
        for (std::size_t i = 0; i < L; ++i)
            for (int t = 0; t < batch; ++t) x[i] += uniform() < pi[i] ? 1 : 0;
        if (b >= window) {  // the window is full: membership from the previous W batches
            for (std::size_t i = 0; i < L; ++i) order[i] = {-(double(counts[i]) + 0.5 * uniform()), i};
            std::sort(order.begin(), order.end());
            for (std::size_t j = 0; j < L; ++j) {
                picks += x[order[j].second];
                if (j < std::size_t(cached)) hits += x[order[j].second];
            }
        }
        for (std::size_t i = 0; i < L; ++i) counts[i] += x[i] - slot[i];
        slot = x;
    }
    return hits / picks;
}

}  // namespace

TEST_CASE("windowed expert cache, seed 003's Mixtral shape: W = 128 at batch 1 and 32, one expert's P(cached) by hand") {
    // 8 experts, top-2, a cache of 4, skew 1.5 (the calibrated skew of tests/unit/test_topology.cpp: oracle hit rate
    // 0.86205). pi_i = 1, 0.38153, 0.20768, 0.13489, 0.09652, 0.07343, 0.05827, 0.04769 (expert 1 capped at one pick a
    // token; the other pick over experts 2..8 by i^-1.5 / 0.92668).
    const double oracle = hit(8, 4, 32, 0);
    CHECK(oracle == doctest::Approx(0.86205).epsilon(1e-4));
    CHECK(hit(8, 4, 1, 0) == doctest::Approx(oracle).epsilon(1e-12));  // the oracle does not depend on the batch
    // Batch 1, W = 128: n = 128 draws. Expert 1 (count 128 every window) is cached; 3 slots for experts 2..8, whose
    // counts are ~ N(128 pi, 128 pi (1 - pi)): means 48.84, 26.58, 17.27, 12.36, 9.40, 7.46, 6.10, sd 5.50, 4.59,
    // 3.87, 3.34, 2.95, 2.65, 2.41. The threshold t with sum_i Phi((mu_i - t) / sd_i) = 3 is t = 14.809:
    // expert 4 (the coldest member of the oracle's cache): z = (17.266 - 14.809) / 3.865 = 0.636, P(cached) =
    // Phi(0.636) = 0.738; expert 5 (the hottest outside it): z = (12.355 - 14.809) / 3.341 = -0.735, 0.231; the others
    // 1.000, 0.995 (experts 2, 3) and 0.033, 0.003, 0.000 (6, 7, 8). Hit rate = sum pi_i q_i / 2 = 0.85628.
    const double pi[8] = {1.0, 0.38153, 0.20768, 0.13489, 0.09652, 0.07343, 0.05827, 0.04769};
    const double t = 14.8087;
    double slots = 0, hand = pi[0];
    for (int i = 1; i < 8; ++i) {
        const double q = phi((128 * pi[i] - t) / std::sqrt(128 * pi[i] * (1 - pi[i])));
        if (i == 3) CHECK(q == doctest::Approx(0.7376).epsilon(1e-3));
        if (i == 4) CHECK(q == doctest::Approx(0.2313).epsilon(1e-3));
        slots += q;
        hand += pi[i] * q;
    }
    CHECK(slots == doctest::Approx(3.0).epsilon(1e-4));
    const moe::Estimate b1 = seed003_window(8, 4, 1, 128);
    const double w1 = b1.memory.offload_hit_rate;
    CHECK(w1 == doctest::Approx(hand / 2).epsilon(1e-4));
    CHECK(w1 == doctest::Approx(0.85628).epsilon(1e-4));
    // At batch 1 a grouped step streams each uncached pick once: 1 - (1 - pi)^1 = pi, so 16 layers x 2 (1 - hit)
    // experts x 25,952,256 B (3 x 2048 x 8192 int4 with a bf16 scale per 128).
    CHECK(b1.decode.offload_bytes == doctest::Approx(16 * 2 * (1 - w1) * 25952256.0).epsilon(1e-9));
    // Batch 32, W = 128: n = 4096 draws; expert 4's mean 552.5 (sd 21.9) against expert 5's 395.3 (sd 18.9): the
    // threshold falls between them 7 sd from each, so the window finds the oracle's cache: 0.86205 to 5 digits.
    const double w32 = hit(8, 4, 32, 128);
    CHECK(w32 == doctest::Approx(oracle).epsilon(1e-5));
    CHECK(w32 < oracle);
    MESSAGE("seed 003, 8 experts, cache 4, W = 128: hit rate " << w1 << " at batch 1, " << w32 << " at batch 32 (oracle " << oracle << ")");
    // The seed's own cache, the top 8 of 64 experts: oracle 0.81523; W = 128 gives 0.80554 at batch 1 and 0.81479 at 32.
    const double o64 = hit(64, 8, 32, 0), b1_64 = hit(64, 8, 1, 128), b32_64 = hit(64, 8, 32, 128);
    MESSAGE("seed 003, 64 experts, cache 8, W = 128: hit rate " << b1_64 << " at batch 1, " << b32_64 << " at batch 32 (oracle " << o64 << ")");
    CHECK(o64 == doctest::Approx(0.81523).epsilon(1e-4));
    CHECK(b1_64 == doctest::Approx(0.80554).epsilon(1e-4));
    CHECK(b32_64 == doctest::Approx(0.81479).epsilon(1e-4));
}

TEST_CASE("windowed expert cache: a long window converges to the oracle; uniform popularity hits C / E at any window") {
    // W = 100,000 batches of 32 (3.2 M draws): within 1e-3 of the oracle (8 of 64 experts at skew 1.5, and Qwen3-30B's
    // 32 of 128 at skew 1.2, oracle 0.80147 in tests/unit/test_topology.cpp); short windows sit below it, and the
    // hit rate rises with the window.
    CHECK(std::fabs(hit(64, 8, 32, 100000) - hit(64, 8, 32, 0)) < 1e-3);
    CHECK(std::fabs(hit(8, 4, 32, 100000) - hit(8, 4, 32, 0)) < 1e-3);
    auto qwen = [](int window) {
        return run(std::string(R"({"model":"qwen3-30b-a3b","hardware":"gb200","workload":{"phase":"decode","batch":16},)") +
                   R"("runtime":{"expert_offload":{"tier":"host","cached_experts_per_layer":32,"skew":1.2,"window_batches":)" +
                   std::to_string(window) + "}}}")
            .memory.offload_hit_rate;
    };
    CHECK(qwen(0) == doctest::Approx(0.80147).epsilon(1e-4));
    CHECK(std::fabs(qwen(100000) - qwen(0)) < 1e-3);
    double prev = 0;
    for (int w : {1, 4, 16, 128, 1024}) {
        const double h = hit(64, 8, 1, w);
        CHECK(h > prev);
        CHECK(h < hit(64, 8, 1, 0));
        prev = h;
    }
    // Skew 0: every expert is equally likely, each is cached with probability C / E (sum q = C by construction and
    // the same q for all), so the hit rate is 4 / 8 and 8 / 64 whatever the window, and the bytes streamed equal the
    // oracle's (sum over experts of (1 - C / E) x the same stream probability).
    for (int w : {0, 1, 128, 100000}) {
        CAPTURE(w);
        CHECK(hit(8, 4, 1, w, 0.0) == doctest::Approx(0.5).epsilon(1e-9));
        CHECK(hit(64, 8, 32, w, 0.0) == doctest::Approx(8.0 / 64).epsilon(1e-9));
        CHECK(seed003_window(64, 8, 32, w, 0.0).decode.offload_bytes ==
              doctest::Approx(seed003_window(64, 8, 32, 0, 0.0).decode.offload_bytes).epsilon(1e-9));
    }
}

TEST_CASE("windowed expert cache: the normal / fixed-threshold approximation against a simulated window") {
    // The simulation keeps what the approximation drops: integer counts and their ties, the spread of the C-th
    // largest count. At n = W B = 128 draws it agrees within half a point of hit rate (8 experts: model 0.85628,
    // simulated 0.8578; 64 experts: model 0.80554, simulated 0.8019, 20,000 batches after a full window).
    const std::vector<double> pi8 = {1.0, 0.38153, 0.20768, 0.13489, 0.09652, 0.07343, 0.05827, 0.04769};
    std::vector<double> pi64(64);
    double wsum = 0;
    for (int i = 1; i <= 64; ++i) wsum += std::pow(i, -1.5);
    for (int i = 1; i <= 64; ++i) pi64[std::size_t(i - 1)] = 2 * std::pow(i, -1.5) / wsum;  // no expert capped: 2 / wsum < 1
    CHECK(2 / wsum < 1);
    const double s8 = simulate(pi8, 4, 128, 1, 20000), s64 = simulate(pi64, 8, 128, 1, 20000);
    MESSAGE("simulated window 128, batch 1: " << s8 << " (8 experts), " << s64 << " (64 experts)");
    CHECK(std::fabs(hit(8, 4, 1, 128) - s8) < 0.005);
    CHECK(std::fabs(hit(64, 8, 1, 128) - s64) < 0.005);
    // and at batch 8 (n = 1024) within 0.2 points
    const double s64b8 = simulate(pi64, 8, 128, 8, 5000);
    CHECK(std::fabs(hit(64, 8, 8, 128) - s64b8) < 0.002);
}

TEST_CASE("runtime.expert_offload.window_batches: a negative window is an error naming the field") {
    const moe::ParseResult r = moe::parse_scenario(
        R"({"model":"mixtral-8x7b","runtime":{"expert_offload":{"tier":"host","cached_experts_per_layer":4,"window_batches":-1}}})",
        moe::builtin_catalog());
    REQUIRE_FALSE(r.ok());
    CHECK(moe_test::messages(r.errors).find("runtime.expert_offload.window_batches") != std::string::npos);
    CHECK(moe::parse_scenario(R"({"model":"mixtral-8x7b","runtime":{"expert_offload":{"window_batches":1.5}}})",
                              moe::builtin_catalog())
              .ok() == false);
}
