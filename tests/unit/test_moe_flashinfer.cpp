// test_moe_flashinfer.cpp — seed 001's FlashInfer-CUTLASS experts (runtime.moe_kernel = flashinfer_cutlass): the table
// bench_data/moe/<family>/vllm_flashinfer_cutlass.csv, distilled by scripts/distill_aic.py from AIConfigurator's vLLM
// 0.24 moe_perf rows of kernel_source vllm_fp8moe_flashinfer_cutlass_flashinferexperts (block-scaled FP8, balanced
// routing, H100 / H200), read back at its source rows, and the step model taking the routed experts from it.
// AIC = ai-dynamo/aiconfigurator @ 095f58a5, files under shared/anchors/aic/perf/ (line numbers count the header as 1).
#include <string>

#include "test_helpers.h"

using moe::Dtype;
using moe::Phase;
using moe::Source;
using moe_test::find_op;
using moe_test::run;

namespace {

constexpr moe::MoeKernel kFi = moe::MoeKernel::flashinfer_cutlass;

// Kimi-K2 (hidden 7168, moe_intermediate 2048, top-8 of 384, block-scaled FP8) decode on 8 H200s, attention DP 8 x EP 8,
// the EP group's tokens all-gathered (no DeepEP: the standard format FlashInferExperts runs), 128 sequences per rank.
std::string kimi_h200(const char* kernel, const char* extra = "") {
    return std::string(R"({"model":"kimi-k2","hardware":"h200","parallel":{"dp":8,"ep":8},)") +
           R"("workload":{"phase":"decode","batch":128},"runtime":{"a2a_backend":"allgather","moe_kernel":")" + kernel + R"("})" + extra + "}";
}

}  // namespace

TEST_CASE("FlashInfer-CUTLASS MoE table: measured points read back at their AIC rows") {
    const moe::Tables& t = moe::builtin_tables();
    struct Point { const char* fam; int h, i, k, e, ep; double tokens, us; };
    // h200_sxm/vllm-0.24.0/moe/moe_perf.csv.gz, vllm_fp8moe_flashinfer_cutlass_flashinferexperts, fp8_block, moe_tp 1,
    // balanced; the latency (ms) x 1000 at 4 significant digits:
    //   line 20537: 1024 tokens, Kimi-K2 7168/2048/8/384, ep 8, 0.6668213208516439 ms
    //   line 9446: 4096 tokens, Qwen3-235B-A22B 4096/1536/8/128, ep 2, 1.2985706329345703 ms
    //   line 46665: 16384 tokens, DeepSeek-V4-Pro 7168/3072/6/384, ep 64, 0.5560799837112427 ms
    // h100_sxm/vllm-0.24.0/moe/moe_perf.csv.gz line 28515: 256 tokens, GLM-5 6144/2048/8/256, ep 16, 0.25246934096018475 ms
    const Point pts[] = {{"h200", 7168, 2048, 8, 384, 8, 1024, 666.8},
                         {"h200", 4096, 1536, 8, 128, 2, 4096, 1299.0},
                         {"h200", 7168, 3072, 6, 384, 64, 16384, 556.1},
                         {"h100", 6144, 2048, 8, 256, 16, 256, 252.5}};
    for (const Point& p : pts) {
        INFO(p.fam << " " << p.h << "/" << p.i << "/" << p.k << "/" << p.e << " ep" << p.ep << " at " << p.tokens);
        const moe::MoeHit h = t.moe_layer(p.fam, Dtype::fp8, p.h, p.i, p.k, p.e, 1, p.ep, p.tokens, kFi);
        REQUIRE(h.found);
        CHECK(h.source == Source::measured);
        CHECK(h.latency_us == p.us);
        CHECK(std::string(h.table) == std::string("bench_data/moe/") + p.fam + "/vllm_flashinfer_cutlass.csv");
    }
    // A series of its own: at the same key SGLang's Triton fused MoE (bench_data/moe/h200/sglang.csv, h200_sxm/
    // sglang-0.5.14 moe_perf) takes 687.1 us, FlashInfer's CUTLASS 666.8 us.
    CHECK(t.moe_layer("h200", Dtype::fp8, 7168, 2048, 8, 384, 1, 8, 1024).latency_us == 687.1);
    // Between measured counts: log-log in tokens (Kimi-K2 ep 8: 594.0 at 256, 666.8 at 1024).
    const moe::MoeHit mid = t.moe_layer("h200", Dtype::fp8, 7168, 2048, 8, 384, 1, 8, 512, kFi);
    CHECK(mid.source == Source::interpolated);
    CHECK(mid.latency_us == doctest::Approx(std::sqrt(594.0 * 666.8)).epsilon(1e-9));
    // What AIC did not measure, or what the distiller left out, is not found:
    // - DeepSeek-V3's shape (7168/2048/8/256): its collector's group-limited ties pile the picks on rank 0's experts,
    //   as in the SGLang rows; h200 at 1 token, ep 2..256: 0.141, 0.110, 0.096, 0.093, 0.091, 0.074, 0.051, 0.038 ms,
    //   the steps of rank 0's pick counts under that rule (8, 6, 5, 5, 5, 4, 2, 1), ~12-15 us per 44 MB expert, where
    //   balanced routing would put at most one pick on a rank from ep 8 up.
    for (int ep : {2, 8, 32}) CHECK(!t.moe_layer("h200", Dtype::fp8, 7168, 2048, 8, 256, 1, ep, 1024, kFi).found);
    // - ep 1 and moe_tp > 1 (AIC's block-scaled FP8 rows are moe_tp 1 x ep 2..256 only), B200, BF16 on Hopper
    CHECK(!t.moe_layer("h200", Dtype::fp8, 7168, 2048, 8, 384, 8, 1, 1024, kFi).found);
    CHECK(!t.moe_layer("h200", Dtype::fp8, 4096, 1536, 8, 128, 1, 1, 1024, kFi).found);
    CHECK(!t.moe_layer("b200", Dtype::fp8, 7168, 2048, 8, 384, 1, 8, 1024, kFi).found);
    CHECK(!t.moe_layer("h200", Dtype::bf16, 2048, 768, 8, 128, 1, 8, 1024, kFi).found);
}

TEST_CASE("FlashInfer-CUTLASS MoE table: the file's name makes it a kernel of its own; no EP interpolation") {
    moe::Tables t;
    moe::Issues errs;
    const char* hdr = "dtype,hidden,inter,topk,experts,tp,ep,us_at_1,us_at_16\n";
    CHECK(t.load_csv("bench_data/moe/h200/sglang.csv", std::string(hdr) + "fp8,64,32,2,8,1,2,10,20\n", errs));
    CHECK(t.load_csv("bench_data/moe/h200/vllm_flashinfer_cutlass.csv",
                     std::string(hdr) + "fp8,64,32,2,8,1,2,5,7\nfp8,64,32,2,8,1,8,3,4\n", errs));
    CHECK(errs.empty());
    CHECK(t.moe_layer("h200", Dtype::fp8, 64, 32, 2, 8, 1, 2, 16).latency_us == 20.0);
    CHECK(t.moe_layer("h200", Dtype::fp8, 64, 32, 2, 8, 1, 2, 16, kFi).latency_us == 7.0);
    // ep 4 lies between two measured EP sizes; unlike DeepEP's tables (whose work per GPU is fixed along tokens per
    // rank), a fused MoE handed the whole group's tokens has no such diagonal: not found.
    CHECK(!t.moe_layer("h200", Dtype::fp8, 64, 32, 2, 8, 1, 4, 16, kFi).found);
}

TEST_CASE("runtime.moe_kernel = flashinfer_cutlass: Kimi-K2 EP8 decode on H200 takes the measured row (seed 001)") {
    // 128 sequences per rank x attention DP 8 = 1,024 tokens entering the MoE across the EP group, the tables' unit
    // (bench_data/README.md, "moe"): the routed experts are h200_sxm/vllm-0.24.0 moe_perf line 20537, 666.8 us per
    // layer (token permutation and weighted combine inside the kernel: no moe.permute / moe.unpermute passes).
    const moe::Estimate fi = run(kimi_h200("flashinfer_cutlass"));
    const moe::OpRecord* op = find_op(fi, "moe.routed_experts", Phase::decode);
    REQUIRE(op);
    CHECK(op->time_us == 666.8);
    CHECK(op->source == Source::measured);
    CHECK(std::string(op->table) == "bench_data/moe/h200/vllm_flashinfer_cutlass.csv");
    CHECK(!find_op(fi, "moe.permute", Phase::decode));
    // auto and triton keep SGLang's Triton fused MoE at the same key: 687.1 us (h200_sxm/sglang-0.5.14 moe_perf)
    for (const char* k : {"auto", "triton"}) {
        const moe::Estimate e = run(kimi_h200(k));
        CHECK(find_op(e, "moe.routed_experts", Phase::decode)->time_us == 687.1);
        CHECK(std::string(find_op(e, "moe.routed_experts", Phase::decode)->table) == "bench_data/moe/h200/sglang.csv");
    }
    // Where no row applies, the analytical fallback with CUTLASS's tiles, and the op's source and a warning say so:
    auto fallback = [](const std::string& scenario) {
        const moe::Estimate e = run(scenario);
        const moe::OpRecord* o = find_op(e, "moe.routed_experts", Phase::decode);
        REQUIRE(o);
        CHECK(o->source == Source::analytical);
        bool warned = false;
        for (const std::string& w : e.warnings)
            warned |= w.find("flashinfer_cutlass has no measured row") != std::string::npos;
        CHECK(warned);
    };
    fallback(kimi_h200("flashinfer_cutlass", R"(,"precision":{"fp8_scaling":"tensor"})"));  // per-tensor FP8: another kernel
    std::string deepep = kimi_h200("flashinfer_cutlass");
    deepep.replace(deepep.find("allgather"), 9, "deepep_low_latency");  // the batched format: not FlashInferExperts'
    fallback(deepep);
    std::string h800 = kimi_h200("flashinfer_cutlass");
    h800.replace(h800.find("h200"), 4, "h800");  // no FlashInfer table for H800
    fallback(h800);
    std::string dsv3 = kimi_h200("flashinfer_cutlass");
    dsv3.replace(dsv3.find("kimi-k2"), 7, "deepseek-v3");  // its group-limited rows are left out
    fallback(dsv3);
}

TEST_CASE("runtime.moe_kernel = flashinfer_cutlass off its tables: CUTLASS's 64-row tiles") {
    // Qwen3-30B-A3B BF16 prefill of 8,192 tokens on one A100 (no table of any kernel): FlashInfer's CUTLASS MoE picks
    // its tile by profiling, not verified; the fallback takes the CUTLASS choice's (64 rows past 16: 8.49 tiles per
    // expert, test_seed_kernels' worked example) at FlashInfer's own efficiency, flashinfer_moe_compute_eff 0.36
    // (fitted on AIC's FlashInfer-CUTLASS layers) against CUTLASS's and DeepGEMM's grouped_compute_eff 0.585.
    const std::string base = R"({"model":"qwen3-30b-a3b","hardware":"a100-sxm-80g",)"
                             R"("workload":{"phase":"prefill","prefill_tokens":8192,"prompt_len":8192},)"
                             R"("runtime":{"moe_kernel":")";
    const moe::Estimate fi = run(base + R"(flashinfer_cutlass"}})");
    const moe::Estimate cu = run(base + R"(cutlass"}})");
    const moe::Estimate dg = run(base + R"(deepgemm"}})");
    const double fi_us = find_op(fi, "moe.routed_experts", Phase::prefill)->time_us;
    CHECK(fi_us == doctest::Approx(find_op(cu, "moe.routed_experts", Phase::prefill)->time_us * 0.585 / 0.36).epsilon(1e-9));
    // 8.49 x 64 = 543 rows billed per expert's 512 against DeepGEMM's 4.49 x 128 = 575, at 0.36 against 0.585
    const double dg_us = find_op(dg, "moe.routed_experts", Phase::prefill)->time_us;
    CHECK(fi_us == doctest::Approx(dg_us * (8.49 * 64) / (4.49 * 128) * 0.585 / 0.36).epsilon(0.01));
    // and its fixed 20 us a layer (moe.fused_fixed); CUTLASS's fallback has none
    CHECK(find_op(fi, "moe.fused_fixed", Phase::prefill)->time_us == doctest::Approx(20.0));
    CHECK(find_op(cu, "moe.fused_fixed", Phase::prefill) == nullptr);
}
