// Per-GPU memory (seed 002): weights by part, KV per token, the largest batch and context that fit.
#include "test_helpers.h"

using moe_test::rel_err;
using moe_test::run;

TEST_CASE("KV bytes per token") {
    // DeepSeek-V3 bf16: MLA latent 512 + rope 64 per layer, not TP-sharded: 61 x 576 x 2 = 70,272.
    moe::Estimate d = run(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":32,"ep":32}})");
    CHECK(d.memory.kv_bytes_per_token == doctest::Approx(70272));
    moe::Estimate d8 = run(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":32,"ep":32},"precision":{"kv_cache":"fp8"}})");
    CHECK(d8.memory.kv_bytes_per_token == doctest::Approx(35136));
    // Qwen3-8B (GQA, 8 KV heads, head dim 128, 36 layers) at tp 2: 36 x 2 x 4 x 128 x 2 bytes.
    moe::Estimate q = run(R"({"model":"qwen3-8b","hardware":"h100-sxm","parallel":{"tp":2}})");
    CHECK(q.memory.kv_bytes_per_token == doctest::Approx(36.0 * 2 * 4 * 128 * 2));
    // tp 16 > 8 KV heads: each GPU keeps one replicated KV head.
    moe::Estimate r = run(R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":16}})");
    CHECK(r.memory.kv_bytes_per_token == doctest::Approx(80.0 * 2 * 1 * 128 * 2));
    // gpt-oss-120b: 18 sliding-window (128) and 18 full layers, 8 KV heads x 64, bf16; one sequence at 4096 tokens.
    moe::Estimate g = run(R"({"model":"gpt-oss-120b","hardware":"h100-sxm","workload":{"phase":"decode","batch":1,"context_len":4096}})");
    const double per_layer_token = 2.0 * 8 * 64 * 2;
    CHECK(g.memory.kv_cache_bytes == doctest::Approx(18 * 4096 * per_layer_token + 18 * 128 * per_layer_token));
}

TEST_CASE("seed 002 §3: compressed CSA/HCA KV with the indexer — V4-Pro at 1M tokens is 4.79 GB per request") {
    nlohmann::json cfg = {{"hidden_size", 7168}, {"num_hidden_layers", 61}, {"num_attention_heads", 128}, {"vocab_size", 129280},
                          {"intermediate_size", 18432}, {"head_dim", 512}, {"qk_rope_head_dim", 64}, {"window_size", 128},
                          {"index_head_dim", 128}};
    std::vector<int> ratios;
    for (int i = 0; i < 29; ++i) ratios.push_back(4);    // CSA
    for (int i = 0; i < 31; ++i) ratios.push_back(128);  // HCA
    ratios.push_back(0);                                 // SWA
    cfg["compress_ratios"] = ratios;
    moe::Issues errs;
    moe::ModelSpec m = moe::parse_hf_config(cfg, "model", errs);
    REQUIRE(errs.empty());
    const double bytes = m.kv_bytes_per_request(1e6, 1, 1, 1.0);
    // seed 002 table: CSA 4.18 GB + HCA 0.14 GB + SWA ~0 + indexer 0.47 GB = 4.79 GB
    CHECK(bytes / 1e9 == doctest::Approx(4.79).epsilon(0.005));
}

namespace {
// Hand count of DeepSeek-V3 FP8 weights on one GPU with tp 1 (every number from the HF config).
double dsv3_fp8_weights_per_gpu(double local_experts) {
    const double fp8 = 1.0 + 4.0 / (128 * 128);  // one fp32 scale per 128x128 block
    const double h = 7168;
    const double attn = h * 1536 + h * (512 + 64) + 1536.0 * 128 * 192 + 512.0 * 128 * 256 + 128.0 * 128 * h;
    const double expert = 3.0 * h * 2048;
    const double dense_ffn = 3.0 * h * 18432;
    double w = 61 * attn * fp8;
    w += 58 * local_experts * expert * fp8;
    w += 58 * expert * fp8;                  // one shared expert
    w += 3 * dense_ffn * fp8;                // first_k_dense_replace = 3
    w += 2 * 129280.0 * h * 2;               // embedding + LM head, bf16, untied
    w += 58 * 256.0 * h * 4;                 // router, fp32
    w += 61 * 2 * h * 4 + h * 4;             // norms, fp32
    return w;
}
}  // namespace

TEST_CASE("DeepSeek-V3 FP8 weights per GPU, by hand") {
    moe::Estimate ep32 = run(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":32,"ep":32}})");
    CHECK(ep32.memory.weights_bytes == doctest::Approx(dsv3_fp8_weights_per_gpu(256.0 / 32)).epsilon(1e-6));
    // EP8 with 32 redundant experts: (256 + 32) / 8 = 36 experts per GPU
    moe::Estimate ep8 = run(R"({"model":"deepseek-v3","hardware":"h200","parallel":{"dp":8,"ep":8},"routing":{"redundant_experts":32}})");
    CHECK(ep8.memory.weights_bytes == doctest::Approx(dsv3_fp8_weights_per_gpu(36)).epsilon(1e-6));
    // cluster total = per GPU x GPUs
    CHECK(ep32.memory.cluster_weights_bytes == doctest::Approx(32 * ep32.memory.weights_bytes));
}

TEST_CASE("FP4 checkpoints on Hopper, precision.fp4_on_hopper = expand: pre-expanded to FP8, expert memory doubles (seed 002 §6)") {
    moe::Estimate hopper = run(R"({"model":"gpt-oss-120b","hardware":"h200","precision":{"fp4_on_hopper":"expand"}})");
    moe::Estimate blackwell = run(R"({"model":"gpt-oss-120b","hardware":"b200"})");
    const double ratio = hopper.memory.weights_experts_bytes / blackwell.memory.weights_experts_bytes;
    // fp8 + 128x128 scales vs mxfp4 (0.5 + 1/32 bytes)
    CHECK(ratio == doctest::Approx((1.0 + 4.0 / 16384) / (0.5 + 1.0 / 32)).epsilon(1e-6));
    bool warned = false;
    for (const auto& w : hopper.warnings) warned = warned || w.find("pre-expanded") != std::string::npos;
    CHECK(warned);
}

TEST_CASE("max_batch grows with capacity, shrinks with context, and is solved exactly") {
    auto mb = [](const char* hw, int ctx) {
        return run(std::string(R"({"model":"qwen3-30b-a3b","hardware":")") + hw +
                   R"(","workload":{"phase":"decode","context_len":)" + std::to_string(ctx) + "}}")
            .memory.max_batch;
    };
    CHECK(mb("h200", 8192) > mb("h100-sxm", 8192));
    CHECK(mb("h100-sxm", 4096) > mb("h100-sxm", 16384));
    // exactness: at max_batch it fits, one more does not
    const double b = mb("h100-sxm", 8192);
    REQUIRE(b > 1);
    auto fits = [](double batch) {
        return run(R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm","workload":{"phase":"decode","context_len":8192,"batch":)" +
                   std::to_string(int(batch)) + "}}").memory.fits;
    };
    CHECK(fits(b));
    CHECK(!fits(b + 1));
    // largest context at the batch: fits at max_context, not beyond
    moe::Estimate e = run(R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm","workload":{"phase":"decode","batch":32}})");
    REQUIRE(e.memory.max_context > 0);
    moe::Estimate at = run(R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm","workload":{"phase":"decode","batch":32,"context_len":)" +
                           std::to_string(int(e.memory.max_context)) + "}}");
    CHECK(at.memory.fits);
}

TEST_CASE("a model that cannot fit says so and by how much") {
    moe::Estimate e = run(R"({"model":"deepseek-v3","hardware":"h100-sxm","workload":{"phase":"decode","batch":1}})");
    CHECK(!e.memory.fits);
    CHECK(e.memory.shortfall_bytes > 550e9);  // ~680 GB of FP8 weights on one 80 GiB GPU
    CHECK(e.memory.shortfall_bytes == doctest::Approx(e.memory.total_bytes - e.memory.usable_bytes));
    CHECK(e.memory.max_batch == 0);
    bool said = false;
    for (const auto& w : e.warnings) said = said || w.find("short") != std::string::npos;
    CHECK(said);
    moe_test::check_all_finite(e);
}

TEST_CASE("memory components are never negative or NaN") {
    for (const char* s : {R"({"model":"mixtral-8x7b","hardware":"a100-sxm-80g","parallel":{"tp":2}})",
                          R"({"model":"llama-4-scout","hardware":"mi300x","workload":{"phase":"prefill"}})",
                          R"({"model":"kimi-k2","hardware":"b200","parallel":{"dp":64,"ep":64},"runtime":{"two_batch_overlap":true}})"}) {
        moe::Estimate e = run(s);
        for (double v : {e.memory.weights_bytes, e.memory.kv_cache_bytes, e.memory.activation_bytes, e.memory.workspace_bytes,
                         e.memory.comm_buffer_bytes, e.memory.reserved_bytes, e.memory.total_bytes, e.memory.max_batch})
            CHECK((std::isfinite(v) && v >= 0));
        moe_test::check_all_finite(e);
    }
}
