// Seed 001's finalize (issue 30): where the TopK weight-and-reduce runs for each expert kernel, activation layout
// and all-to-all, and the bytes of the pass that runs it (`moe.finalize`), worked by hand beside the engine source
// that places it. The placements and their sources: weight_reduce_placement in core/step/ops_ffn.cpp.
#include <cmath>
#include <string>

#include "test_helpers.h"

using moe::Phase;
using moe_test::find_op;
using moe_test::run;

namespace {
// memory-bound passes run at the GPU's HBM bandwidth x hbm_bw_eff 0.9 (presets/calibration.json)
double hbm_us(double bytes, double GBps) { return bytes / (GBps * 1e9 * 0.9) * 1e6; }
}  // namespace

TEST_CASE("finalize: DeepGEMM contiguous after DeepEP normal, DeepSeek-V3 prefill EP32 on H800 (ep_gather)") {
    // vLLM deep_gemm_moe.py DeepGemmExperts.apply: ep_scatter permutes, the two grouped GEMMs run, then
    // deepgemm_unpermute_and_reduce -> ep_gather (deep_gemm_utils.py) gathers each received token's rows, weights and
    // sums them; finalize_weight_and_reduce_impl returns TopKWeightAndReduceNoOP, and DeepEP's normal combine gets
    // the reduced tokens (SGLang's DeepEP path forward_deepgemm_contiguous: the same ep_scatter / ep_gather).
    // 4,096 tokens per GPU x DP 32 = 131,072 group tokens; pairs on a rank = 131,072 x 8 / 32 = 32,768; the rank
    // receives the tokens with a pick on its 8 of 256 experts: 131,072 x (1 - (1 - 8/256)^8) = 131,072 x 0.224300
    // = 29,399.5 rows. Bytes: read 32,768 x 7,168 x 2 = 469,762,048 + write 29,399.5 x 7,168 x 2 = 421,470,735
    // -> 891.2 MB, 295.6 us at 3,350 GB/s x 0.9 (the read + write of every pair's row before: 939.5 MB, 311.6 us).
    const moe::Estimate e = run(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"tp":1,"dp":32,"ep":32},)"
                                R"("workload":{"phase":"prefill","batch":1,"prefill_tokens":4096,"prompt_len":4096},)"
                                R"("runtime":{"a2a_backend":"deepep_normal","two_batch_overlap":false}})");
    const moe::OpRecord* fin = find_op(e, "moe.finalize", Phase::prefill);
    REQUIRE(fin);
    const double rows = 131072.0 * (1.0 - std::pow(1.0 - 8.0 / 256, 8));
    CHECK(rows == doctest::Approx(29399.5).epsilon(1e-5));
    CHECK(fin->activation_bytes == doctest::Approx(32768.0 * 7168 * 2 + rows * 7168 * 2).epsilon(1e-12));
    CHECK(fin->activation_bytes == doctest::Approx(891.2e6).epsilon(1e-4));
    CHECK(fin->time_us == doctest::Approx(hbm_us(fin->activation_bytes, 3350)).epsilon(1e-9));
    CHECK(fin->time_us == doctest::Approx(295.6).epsilon(1e-3));
    // the permute stays (ep_scatter: 2 x 32,768 x 7,168 x 1 B FP8 = 469,762,048 B); no separate unpermute pass
    REQUIRE(find_op(e, "moe.permute", Phase::prefill));
    CHECK(find_op(e, "moe.permute", Phase::prefill)->activation_bytes == doctest::Approx(469762048.0));
    CHECK(!find_op(e, "moe.unpermute", Phase::prefill));
}

TEST_CASE("finalize: Triton fused MoE, Qwen3-30B-A3B prefill on one A100 (MUL_ROUTED_WEIGHT, then moe_sum)") {
    // vLLM fused_moe.py TritonExperts.apply: the down GEMM (invoke_fused_moe_triton_kernel with mul_routed_weight =
    // not apply_router_weight_on_input) weights each pair's row and writes it at its token's slot of
    // intermediate_cache3 (M, top_k, K); self.moe_sum -> ops.moe_sum reduces it into the output (M, K);
    // finalize_weight_and_reduce_impl returns TopKWeightAndReduceNoOP. The kernel reads its input rows through
    // sorted_token_ids (moe_align_block_size sorts ids, not rows): no permute pass. SGLang's fused_experts_impl the
    // same (moe_sum_reduce). Without EP every token is an output row.
    // 8,192 tokens x top-8 = 65,536 pairs; read 65,536 x 2,048 x 2 = 268,435,456 + write 8,192 x 2,048 x 2 =
    // 33,554,432 = 301,989,888 B, 164.6 us at 2,039 GB/s x 0.9. (Before: permute and unpermute, 536.9 MB each.)
    const std::string base = R"({"model":"qwen3-30b-a3b","hardware":"a100-sxm-80g",)"
                             R"("workload":{"phase":"prefill","prefill_tokens":8192,"prompt_len":8192},"runtime":{"moe_kernel":")";
    for (const char* k : {"triton", "auto"}) {  // auto on an A100: Triton (DeepGEMM needs SM90 / SM100)
        const moe::Estimate e = run(base + k + R"("}})");
        const moe::OpRecord* fin = find_op(e, "moe.finalize", Phase::prefill);
        REQUIRE(fin);
        CHECK(fin->activation_bytes == doctest::Approx(301989888.0).epsilon(1e-12));
        CHECK(fin->time_us == doctest::Approx(164.6).epsilon(1e-3));
        CHECK(!find_op(e, "moe.permute", Phase::prefill));
        CHECK(!find_op(e, "moe.unpermute", Phase::prefill));
    }
    // CUTLASS grouped GEMM on the same GPU: vLLM cutlass_moe.py run_cutlass_moe_fp8 permutes (moe_permute) and runs
    // moe_unpermute, "topk weights and reduction are fused in moe_unpermute cuda kernel": the same finalize bytes,
    // plus the permute (2 x 65,536 x 2,048 x 2 = 536,870,912 B).
    const moe::Estimate cu = run(base + R"(cutlass"}})");
    REQUIRE(find_op(cu, "moe.finalize", Phase::prefill));
    CHECK(find_op(cu, "moe.finalize", Phase::prefill)->activation_bytes == doctest::Approx(301989888.0).epsilon(1e-12));
    REQUIRE(find_op(cu, "moe.permute", Phase::prefill));
    CHECK(find_op(cu, "moe.permute", Phase::prefill)->activation_bytes == doctest::Approx(536870912.0));
}

TEST_CASE("finalize: FlashInfer's CUTLASS MoE on H200, fused into the down GEMM's epilogue or a pass of its own") {
    // TensorRT-LLM moe_kernels.cu CutlassMoeFCRunner::gemm2 (FlashInfer's cutlass_fused_moe runs it): with the TMA
    // warp-specialised down GEMM (SM90+) and its FINALIZE epilogue fusion, cudaMemsetAsync zeroes the output
    // (num_rows x hidden) and the GEMM reduce-adds each weighted row into it; flashinfer fused_moe/core.py
    // cutlass_fused_moe defaults use_fused_finalize to True and vLLM's FlashInferExperts does not pass it. Only the
    // zero-fill is a pass of its own: Qwen3-30B-A3B BF16, 8,192 tokens on one H200: 8,192 x 2,048 x 2 = 33,554,432 B,
    // 7.77 us at 4,800 GB/s x 0.9.
    const std::string base = R"({"model":"qwen3-30b-a3b","hardware":"h200",)"
                             R"("workload":{"phase":"prefill","prefill_tokens":8192,"prompt_len":8192},)"
                             R"("runtime":{"moe_kernel":"flashinfer_cutlass"})";
    const moe::Estimate bf16 = run(base + "}");
    REQUIRE(find_op(bf16, "moe.routed_experts", Phase::prefill));
    CHECK(find_op(bf16, "moe.routed_experts", Phase::prefill)->source == moe::Source::analytical);  // no BF16 row
    const moe::OpRecord* fused = find_op(bf16, "moe.finalize", Phase::prefill);
    REQUIRE(fused);
    CHECK(fused->activation_bytes == doctest::Approx(33554432.0).epsilon(1e-12));
    CHECK(fused->time_us == doctest::Approx(7.77).epsilon(1e-3));
    CHECK(find_op(bf16, "moe.permute", Phase::prefill));  // expandInputRowsKernel permutes first
    // Block-scaled FP8 (DeepSeek-style 128 x 128 scales): gemm2 hands the down GEMM to BlockScaleFC2, which returns
    // before the FINALIZE fusion is considered: finalizeMoeRoutingKernelLauncher's pass reads the 65,536 pair rows
    // and writes the 8,192 tokens, 301,989,888 B as Triton's moe_sum, 69.9 us at 4,800 GB/s x 0.9.
    const moe::Estimate fp8 = run(base + R"(,"precision":{"weights":"fp8","fp8_scaling":"block"}})");
    const moe::OpRecord* pass = find_op(fp8, "moe.finalize", Phase::prefill);
    REQUIRE(pass);
    CHECK(pass->activation_bytes == doctest::Approx(301989888.0).epsilon(1e-12));
    CHECK(pass->time_us == doctest::Approx(69.9).epsilon(1e-3));
    // On an A100 (SM80: no TMA warp-specialised GEMM) the same unfused pass, 164.6 us at 2,039 GB/s x 0.9
    std::string a100 = base + "}";
    a100.replace(a100.find("h200"), 4, "a100-sxm-80g");
    const moe::Estimate amp = run(a100);
    REQUIRE(find_op(amp, "moe.finalize", Phase::prefill));
    CHECK(find_op(amp, "moe.finalize", Phase::prefill)->time_us == doctest::Approx(164.6).epsilon(1e-3));
}

TEST_CASE("finalize: the batched layout after DeepEP low-latency weights and reduces in the combine (Delegate)") {
    // vLLM's batched experts return TopKWeightAndReduceDelegate and DeepEPLLPrepareAndFinalize._finalize asserts it:
    // "Weight application and reduction happens in the combine kernel" (low_latency_combine takes topk_weights).
    // DeepSeek-V3 EP128 decode on H800, batch 64: no permute, no finalize pass; the combine is priced in ep_comm.
    const std::string base = R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":128,"ep":128},)"
                             R"("workload":{"phase":"decode","batch":64})";
    for (const char* k : {"auto", "triton", "cutlass"}) {
        const moe::Estimate e = run(base + R"(,"runtime":{"moe_kernel":")" + k + R"("}})");
        CHECK(!find_op(e, "moe.finalize", Phase::decode));
        CHECK(!find_op(e, "moe.permute", Phase::decode));
        CHECK(!find_op(e, "moe.unpermute", Phase::decode));
        CHECK(find_op(e, "comm.combine", Phase::decode));
    }
    // The batched layout with a combine that does not weight (DeepEP normal forced): vLLM's finalize falls to
    // TopKWeightAndReduceNaiveBatched, priced at its least, the pairs read and the tokens written. 64 tokens x DP 128
    // = 8,192 group tokens; 8,192 x 8 / 128 = 512 pairs on a rank; received tokens 8,192 x (1 - (1 - 2/256)^8) =
    // 8,192 x 0.060817 = 498.2; (512 + 498.2) x 7,168 x 2 = 14,482,466 B -> 4.80 us at 3,350 GB/s x 0.9.
    const moe::Estimate nb = run(base + R"(,"runtime":{"a2a_backend":"deepep_normal","expert_layout":"masked"}})");
    const moe::OpRecord* fin = find_op(nb, "moe.finalize", Phase::decode);
    REQUIRE(fin);
    const double rows = 8192.0 * (1.0 - std::pow(1.0 - 2.0 / 256, 8));
    CHECK(rows == doctest::Approx(498.2).epsilon(1e-4));
    CHECK(fin->activation_bytes == doctest::Approx((512.0 + rows) * 7168 * 2).epsilon(1e-12));
    CHECK(fin->time_us == doctest::Approx(4.80).epsilon(1e-3));
}
