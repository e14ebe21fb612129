// Issue 30 (remaining part): seed 001's expert kernels and chunked fused MoE, the batched layout's padded slots,
// seed 002's "FP4 stored, FP8 compute" mode, the FP8 MLA cache with a BF16 rope part, KV fragmentation over a
// length distribution, and seed 000 §8.1's step over requests of mixed lengths with prefill buckets. Each number is
// worked by hand in the comment beside it, with the seed's formula or the engine's source it comes from.
#include <string_view>

#include "core/data/kernels.h"
#include "core/serving/serving.h"
#include "core/serving/surface.h"
#include "test_helpers.h"

using moe::Phase;
using moe_test::find_op;
using moe_test::run;

namespace {
constexpr double kQwenExpertBytesBf16 = 3.0 * 2048 * 768 * 2;  // one Qwen3-30B-A3B expert, gate + up + down, BF16
}

// ---- seed 001: the experts' kernel and its tile ----------------------------------------------------------------

TEST_CASE("runtime.moe_kernel: the kernel's M tile sets the tile fill of the analytical experts (seed 001)") {
    // Qwen3-30B-A3B BF16 on one A100 (no grouped tables: the analytical fallback), prefill of 8,192 tokens: each of
    // the 128 experts receives X ~ Binomial(8192, 8/128) rows, mean 512, sd 21.9.
    //   DeepGEMM contiguous (auto), 128-row tiles: E[ceil(X/128)] = 4 + P(X > 512) = 4.49 tiles, fill 512 / 574.7
    //   Triton fused MoE, 64-row blocks (tokens 8,192 > 128 experts: vLLM get_default_config): 8 + P(X > 512)
    //   = 8.49 blocks, fill 512 / 543.4. CUTLASS grouped GEMM, 64-row tiles (vLLM grouped_mm_c3x sm90 default):
    //   the same fill as Triton.
    // The compute side sets the time: 6 x 65,536 pairs x 2048 x 768 / 312 TFLOPS = 1,985 us of MMA, over the kernel's
    // efficiency and its fill: DeepGEMM's and CUTLASS's at grouped_compute_eff 0.585, Triton's fused MoE at its own
    // triton_moe_compute_eff 0.39 (fitted on AIC's Triton layers, presets/calibration.json), plus its fixed 26 us a
    // layer (moe.fused_fixed).
    const std::string base = R"({"model":"qwen3-30b-a3b","hardware":"a100-sxm-80g","workload":{"phase":"prefill","prefill_tokens":8192,"prompt_len":8192})";
    auto experts = [&](const char* kernel) {
        moe::Estimate e = run(base + R"(,"runtime":{"moe_kernel":")" + kernel + R"("}})");
        const moe::OpRecord* op = find_op(e, "moe.routed_experts", Phase::prefill);
        REQUIRE(op);
        CHECK(op->source == moe::Source::analytical);
        return op->time_us;
    };
    const double mma_us = 6.0 * 65536 * 2048 * 768 / 312e12 * 1e6 / 0.585;
    const double triton_mma_us = 6.0 * 65536 * 2048 * 768 / 312e12 * 1e6 / 0.39;
    const double tiles128 = moe::kernels::expected_tiles_random(8192, 8.0 / 128, 128);
    const double tiles64 = moe::kernels::expected_tiles_random(8192, 8.0 / 128, 64);
    CHECK(tiles128 == doctest::Approx(4.49).epsilon(0.01));
    CHECK(tiles64 == doctest::Approx(8.49).epsilon(0.01));
    const double deepgemm = experts("deepgemm"), triton = experts("triton"), cutlass = experts("cutlass");
    CHECK(deepgemm == doctest::Approx(mma_us / (512.0 / (tiles128 * 128))).epsilon(1e-3));
    CHECK(triton == doctest::Approx(triton_mma_us / (512.0 / (tiles64 * 64))).epsilon(1e-3));
    CHECK(cutlass == doctest::Approx(mma_us / (512.0 / (tiles64 * 64))).epsilon(1e-3));  // Triton's tile, DeepGEMM's efficiency
    // auto on an A100: DeepGEMM needs SM90 / SM100 (its README's requirements), so the engines run Triton's fused
    // MoE there, and auto takes its tile
    CHECK(experts("auto") == doctest::Approx(triton).epsilon(1e-9));
}

TEST_CASE("runtime.moe_kernel: only the kernel's own tables (DeepGEMM grouped GEMMs vs SGLang's Triton fused MoE)") {
    // DeepSeek-V3 EP8 decode on H800: auto and deepgemm read InferSim's DeepGEMM masked rows; triton and cutlass
    // have no table of theirs and take the analytical fallback.
    const std::string base = R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":8,"ep":8},"workload":{"phase":"decode","batch":32},"runtime":{"moe_kernel":")";
    for (const char* k : {"auto", "deepgemm"}) {
        moe::Estimate e = run(base + k + R"("}})");
        CHECK(find_op(e, "moe.routed_experts", Phase::decode)->source == moe::Source::measured);
    }
    for (const char* k : {"triton", "cutlass"}) {
        moe::Estimate e = run(base + k + R"("}})");
        CHECK(find_op(e, "moe.routed_experts", Phase::decode)->source == moe::Source::analytical);
    }
}

TEST_CASE("runtime.moe_kernel = triton on B200: Triton's own measured rows, never TensorRT-LLM's kernel") {
    // B200's fused table (bench_data/moe/b200/sglang.csv) keeps the fastest kernel per key, TensorRT-LLM's
    // (sglang_flashinfer_trtllm_moe) for 531 of 734 keys; Triton reads sglang_triton.csv, AIC's Triton rows alone.
    auto experts = [](const char* model, const char* gpu, const char* kernel) {
        moe::Estimate e = run(std::string(R"({"model":")") + model + R"(","hardware":")" + gpu +
                              R"(","workload":{"phase":"prefill","prefill_tokens":1024,"prompt_len":1024},"runtime":{"moe_kernel":")" +
                              kernel + R"("}})");
        return *find_op(e, "moe.routed_experts", Phase::prefill);
    };
    // Qwen3-30B-A3B BF16, 1,024 tokens on one B200: auto reads TensorRT-LLM's kernel, 0.2177888 ms (AIC
    // b200_sxm/sglang-0.5.14/moe/moe_perf.csv, line 2853 of the unpacked file, sglang_flashinfer_trtllm_moe); AIC
    // measured no Triton row of this shape on B200, so triton is analytical.
    const moe::OpRecord a = experts("qwen3-30b-a3b", "b200", "auto"), t = experts("qwen3-30b-a3b", "b200", "triton");
    CHECK(a.source == moe::Source::measured);
    CHECK(a.time_us == doctest::Approx(217.8).epsilon(1e-3));
    CHECK(t.source == moe::Source::analytical);
    // Mixtral-8x7B BF16, 1,024 tokens: Triton is the fastest kernel measured, so auto and triton read the same row,
    // 1.7519743 ms (line 1964, sglang_fused_moe_triton).
    const moe::OpRecord ma = experts("mixtral-8x7b", "b200", "auto"), mt = experts("mixtral-8x7b", "b200", "triton");
    CHECK(mt.source == moe::Source::measured);
    CHECK(mt.time_us == doctest::Approx(1752.0).epsilon(1e-3));
    CHECK(ma.time_us == doctest::Approx(mt.time_us).epsilon(1e-12));
    // H200 has no Triton-only table: its fused table is Triton's for every bf16 / fp8 key (scripts/distill_aic.py
    // checks it), so triton reads it: Qwen3-30B-A3B BF16 at 1,024 tokens, 388.7 us.
    const moe::OpRecord h = experts("qwen3-30b-a3b", "h200", "triton");
    CHECK(h.source == moe::Source::measured);
    CHECK(h.time_us == doctest::Approx(388.7).epsilon(1e-3));
}

TEST_CASE("masked layout: DeepGEMM runs each expert's own rows; Triton's batched kernel pads the activation (seed 001)") {
    // DeepSeek-V3 EP128 decode on H800, batch 64, DeepEP low-latency -> the batched (masked) layout.
    // vLLM's BatchedTritonExperts: the GEMMs return early past each expert's rows, the SiLU-and-mul between them runs
    // over the whole buffer: 2 local experts x (128 dispatchers x max(128, 64) tokens) slots x (read 2 x 2048 +
    // write 2048) x 2 B = 2 x 16,384 x 12,288 = 402,653,184 B, at 3,350 GB/s x 0.9 = 133.55 us per layer.
    const std::string base = R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":128,"ep":128},"workload":{"phase":"decode","batch":64})";
    moe::Estimate t = run(base + R"(,"runtime":{"moe_kernel":"triton"}})");
    const moe::OpRecord* pad = find_op(t, "moe.act_padded", Phase::decode);
    REQUIRE(pad);
    CHECK(pad->activation_bytes == doctest::Approx(402653184.0).epsilon(1e-12));
    CHECK(pad->time_us == doctest::Approx(402653184.0 / (3350e9 * 0.9) * 1e6).epsilon(1e-3));
    // DeepGEMM's masked kernel schedules only the m-blocks below each group's masked_m (its GroupedMasked
    // scheduler): no padded pass, the tile fill of each expert's own rows (binomial, issue 30).
    moe::Estimate d = run(base + "}");
    CHECK(find_op(d, "moe.act_padded", Phase::decode) == nullptr);
}

TEST_CASE("chunked fused MoE: vLLM's 32,768-token chunks run the experts per chunk and size the workspace (seed 001)") {
    // Qwen3-30B-A3B BF16 on one A100, one 65,536-token prefill forward. Under vLLM (runtime.engine = vllm) the
    // modular kernel splits it into ceil(65,536 / 32,768) = 2 chunks (VLLM_FUSED_MOE_CHUNK_SIZE, vllm/envs.py): the
    // experts' op is twice the op of a 32,768-token forward, and the grouped workspace (seed 002 §5) holds one chunk:
    // 32,768 x 8 x 1.3 x 768 x 4 B = 1,046,898,278.4 B, + cuBLAS 64 MB.
    const std::string big = R"({"model":"qwen3-30b-a3b","hardware":"a100-sxm-80g","workload":{"phase":"prefill","prefill_tokens":65536,"prompt_len":65536},"runtime":{"engine":"vllm")";
    const std::string half = R"({"model":"qwen3-30b-a3b","hardware":"a100-sxm-80g","workload":{"phase":"prefill","prefill_tokens":32768,"prompt_len":32768},"runtime":{"engine":"vllm")";
    moe::Estimate chunked = run(big + "}}");
    moe::Estimate one = run(half + "}}");
    const moe::OpRecord* c2 = find_op(chunked, "moe.routed_experts", Phase::prefill);
    const moe::OpRecord* c1 = find_op(one, "moe.routed_experts", Phase::prefill);
    REQUIRE(c2);
    REQUIRE(c1);
    CHECK(c2->time_us == doctest::Approx(2.0 * c1->time_us).epsilon(1e-9));
    CHECK(c2->weight_bytes == doctest::Approx(2.0 * c1->weight_bytes).epsilon(1e-9));  // 128 experts read per chunk
    CHECK(c2->weight_bytes == doctest::Approx(2.0 * 128 * kQwenExpertBytesBf16).epsilon(1e-6));
    CHECK(chunked.memory.workspace_bytes == doctest::Approx(std::ceil(64e6 + 32768.0 * 8 * 1.3 * 768 * 4)).epsilon(1e-12));
    // Without chunking (runtime.moe_chunk_tokens = 0, or SGLang's default): one pass, the weights read once, the
    // workspace for all 65,536 tokens.
    moe::Estimate whole = run(big + R"(,"moe_chunk_tokens":0}})");
    const moe::OpRecord* w = find_op(whole, "moe.routed_experts", Phase::prefill);
    CHECK(w->weight_bytes == doctest::Approx(128 * kQwenExpertBytesBf16).epsilon(1e-6));
    CHECK(whole.memory.workspace_bytes == doctest::Approx(std::ceil(64e6 + 65536.0 * 8 * 1.3 * 768 * 4)).epsilon(1e-12));
    moe::Estimate sglang = run(R"({"model":"qwen3-30b-a3b","hardware":"a100-sxm-80g","workload":{"phase":"prefill","prefill_tokens":65536,"prompt_len":65536}})");
    CHECK(sglang.memory.workspace_bytes == whole.memory.workspace_bytes);
}

// ---- seed 002 --------------------------------------------------------------------------------------------------

TEST_CASE("FP4 stored, FP8 compute on Blackwell (seed 002 §6: B200_current -> fp4_cast_fp8, memory x1.0, speed x1.0)") {
    // gpt-oss-120b's MXFP4 experts on a B200: natively they multiply at the FP4 rate; precision.fp4_compute = fp8
    // keeps the 4-bit weights in memory (the same bytes) and multiplies at the FP8 rate.
    const std::string base = R"({"model":"gpt-oss-120b","hardware":"b200","workload":{"phase":"prefill","prefill_tokens":16384,"prompt_len":4096})";
    moe::Estimate native = run(base + "}");
    moe::Estimate cast = run(base + R"(,"precision":{"fp4_compute":"fp8"}})");
    const moe::OpRecord* n = find_op(native, "moe.routed_experts", Phase::prefill);
    const moe::OpRecord* c = find_op(cast, "moe.routed_experts", Phase::prefill);
    REQUIRE(n);
    REQUIRE(c);
    CHECK(n->compute_dtype == moe::Dtype::mxfp4);
    CHECK(c->compute_dtype == moe::Dtype::fp8);
    CHECK(cast.memory.weights_experts_bytes == native.memory.weights_experts_bytes);  // memory x1.0
    CHECK(c->weight_bytes == doctest::Approx(n->weight_bytes).epsilon(1e-12));        // 4-bit bytes read
    // compute-bound at prefill: never faster than its FLOPs at the FP8 peak (B200 4.5 PFLOPS dense FP8)
    const moe::GpuSpec& g = moe_test::scenario(base + "}").gpu;
    CHECK(c->time_us >= c->flops / (g.peak_tflops(moe::Dtype::fp8) * 1e12) * 1e6);
    moe::Estimate fp8 = run(base + R"(,"precision":{"experts":"fp8"}})");
    const moe::OpRecord* f = find_op(fp8, "moe.routed_experts", Phase::prefill);
    // The seed's speed x1.0: the cast experts take exactly the time of FP8 experts (compute-bound, the same FLOPs
    // at the FP8 rate; only the bytes read differ, off the critical side). Natively (AIC's measured MXFP4 layer on
    // the B200) they take longer here than either: the measured native kernel is no faster than FP8 at this shape.
    CHECK(c->time_us == doctest::Approx(f->time_us).epsilon(1e-9));
    CHECK(c->bound == f->bound);
}

TEST_CASE("MLA cache in FP8 with the rope part in BF16 (seed 002 §3) and FlashMLA's scales, bytes per token by hand") {
    // DeepSeek-V3: 61 layers, kv_lora_rank 512, rope 64. KV bytes per token (all layers, per GPU; the latent is
    // not split by heads):
    //   bf16                 61 x 576 x 2            = 70,272 B
    //   fp8, all FP8         61 x 576 x 1            = 35,136 B
    //   fp8, bf16_rope       61 x (512 x 1 + 64 x 2) = 39,040 B   (seed 002: nope x 1 + rope x 2)
    //   fp8, flashmla        61 x (512 + 4 x 4 + 128) = 40,016 B  (FlashMLA's 656 B a token)
    const std::string base = R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":8,"ep":8},"workload":{"phase":"decode","batch":16,"context_len":4096},"precision":{"kv_cache":)";
    CHECK(run(base + R"("bf16"}})").memory.kv_bytes_per_token == doctest::Approx(70272.0));
    CHECK(run(base + R"("fp8"}})").memory.kv_bytes_per_token == doctest::Approx(35136.0));
    moe::Estimate rope = run(base + R"("fp8","mla_kv":"bf16_rope"}})");
    CHECK(rope.memory.kv_bytes_per_token == doctest::Approx(39040.0));
    CHECK(run(base + R"("fp8","mla_kv":"flashmla"}})").memory.kv_bytes_per_token == doctest::Approx(40016.0));
    // ...and the decode attention reads those bytes: 16 sequences x 4,096 keys x 640 B per layer
    const moe::OpRecord* core = find_op(rope, "attn.core", Phase::decode);
    REQUIRE(core);
    CHECK(core->activation_bytes == doctest::Approx(16.0 * 4096 * 640).epsilon(1e-9));
    // A model without MLA ignores it: Qwen3-30B-A3B's GQA cache stays 48 x 2 x 4 x 128 x 1 = 49,152 B in FP8.
    CHECK(run(R"({"model":"qwen3-30b-a3b","hardware":"h200","precision":{"kv_cache":"fp8","mla_kv":"bf16_rope"}})").memory.kv_bytes_per_token ==
          doctest::Approx(49152.0));
    // ...and a disaggregated deployment moves that layout from prefill to decode: 4,096 prompt tokens x 61 layers x
    // 656 B = 163,905,536 B with FlashMLA's, 61 x 576 B = 143,917,056 B all FP8 (the MTP layer's KV stays on each side)
    const std::string dis = R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":8,"ep":8},"serving":{"mode":"disaggregated",
        "isl":4096,"osl":512,"prefill":{"parallel":{"dp":8,"ep":8}},"decode":{"parallel":{"dp":8,"ep":8},"batch":16}},"precision":{"kv_cache":"fp8")";
    const moe::StepSurface fl = moe::step_surface(moe_test::scenario(dis + R"(,"mla_kv":"flashmla"}})"), moe::builtin_tables());
    const moe::StepSurface all = moe::step_surface(moe_test::scenario(dis + "}}"), moe::builtin_tables());
    REQUIRE(fl.ok);
    REQUIRE(all.ok);
    CHECK(fl.kv_bytes_per_request == doctest::Approx(4096.0 * 61 * 656).epsilon(1e-12));
    CHECK(all.kv_bytes_per_request == doctest::Approx(4096.0 * 61 * 576).epsilon(1e-12));
}

TEST_CASE("KV fragmentation over a length distribution (seed 002 §10), by hand") {
    // Lengths 1..16 in 16-token blocks waste 15, 14, .., 1, 0: 120 / 16 = 7.5 = (16 - 1) / 2 tokens a request.
    CHECK(moe::kv_fragmentation(1, 16, 16).waste_tokens == doctest::Approx(7.5));
    // One fixed length: 4,097 tokens hold 257 blocks, 15 slots empty.
    CHECK(moe::kv_fragmentation(4097, 4097, 16).waste_tokens == doctest::Approx(15.0));
    // A benchmark's 1,024-token requests spread by 0.2 (serving.length_spread): lengths 819..1024, 206 of them.
    // 12 whole runs of 16 lengths waste 12 x 120 = 1,440; the last 14 (1011..1024) waste 13 + 12 + .. + 0 = 91:
    // 1,531 / 206 = 7.4320 tokens; utilisation 921.5 / (921.5 + 7.4320) = 0.99200.
    const moe::KvFragmentation f = moe::kv_fragmentation(819, 1024, 16);
    CHECK(f.waste_tokens == doctest::Approx(1531.0 / 206).epsilon(1e-12));
    CHECK(f.utilisation == doctest::Approx(921.5 / (921.5 + 1531.0 / 206)).epsilon(1e-12));
    // Larger blocks waste more: SGLang's page 1 wastes nothing, 64-token blocks about 31.5.
    CHECK(moe::kv_fragmentation(819, 1024, 1).waste_tokens == doctest::Approx(0.0));
    CHECK(moe::kv_fragmentation(1, 6400, 64).waste_tokens == doctest::Approx(31.5));
}

// ---- seed 000 §8.1: a step over requests of mixed lengths -------------------------------------------------------

TEST_CASE("mixed lengths (seed 000 §8.1): prefill attention per prompt is quadratic, decode attention linear") {
    const moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-30b-a3b","hardware":"h200"})");
    const moe::Tables& t = moe::builtin_tables();
    // Prefill: prompts of 1,024 and 7,168 tokens against two of the mean 4,096. Causal attention over a prompt of L
    // is ~L^2 / 2 keys x queries: (1,024^2 + 7,168^2) / (2 x 4,096^2) = 52,428,800 / 33,554,432 = 1.5625 times the
    // work; the time follows within the kernel's tile efficiency (short prompts fill fewer tiles).
    moe::MixedStep p = moe::prefill_step_mixed(s, t, {1024, 7168});
    REQUIRE(p.ok);
    CHECK(p.tokens == 8192);
    CHECK(p.attention_flops / p.attention_flops_at_mean == doctest::Approx(1.5625).epsilon(1e-3));
    MESSAGE("prefill attention ", p.attention_ms, " ms mixed, ", p.attention_ms_at_mean, " at the mean");
    CHECK(p.attention_ms > 1.1 * p.attention_ms_at_mean);
    CHECK(p.step_ms - p.step_ms_at_mean == doctest::Approx(p.attention_ms - p.attention_ms_at_mean).epsilon(1e-9));
    // Equal prompts: exactly the estimate at their length.
    moe::MixedStep same = moe::prefill_step_mixed(s, t, {4096, 4096});
    REQUIRE(same.ok);
    CHECK(same.step_ms == doctest::Approx(same.step_ms_at_mean).epsilon(1e-12));
    // Decode: KV lengths 1,024 and 7,168 against two at 4,096: the keys read are the same 8,192, linear in the
    // context, so the attention time is the mean's (within the decode table's interpolation).
    moe::MixedStep d = moe::decode_step_mixed(s, t, {1024, 7168});
    REQUIRE(d.ok);
    CHECK(d.attention_flops == doctest::Approx(d.attention_flops_at_mean).epsilon(1e-9));
    CHECK(d.attention_ms == doctest::Approx(d.attention_ms_at_mean).epsilon(0.05));
}

TEST_CASE("prefill buckets (seed 000 §8.1): each prompt padded to the smallest bucket that holds it") {
    const moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-30b-a3b","hardware":"h200"})");
    const moe::Tables& t = moe::builtin_tables();
    // Prompts of 1,000 and 3,000 tokens in buckets 1,024 / 2,048 / 4,096: padded to 1,024 and 4,096, 5,120 tokens
    // computed instead of 4,000; the step is the mixed step of those padded prompts.
    moe::MixedStep b = moe::prefill_step_mixed(s, t, {1000, 3000}, {4096, 1024, 2048});
    moe::MixedStep padded = moe::prefill_step_mixed(s, t, {1024, 4096});
    moe::MixedStep plain = moe::prefill_step_mixed(s, t, {1000, 3000});
    REQUIRE(b.ok);
    CHECK(b.tokens == 5120);
    CHECK(plain.tokens == 4000);
    CHECK(b.step_ms == doctest::Approx(padded.step_ms).epsilon(1e-12));
    CHECK(b.step_ms > plain.step_ms);
    // Errors name the input: a prompt past the largest bucket, an empty batch.
    moe::MixedStep over = moe::prefill_step_mixed(s, t, {5000}, {1024, 4096});
    CHECK_FALSE(over.ok);
    REQUIRE_FALSE(over.errors.empty());
    CHECK(over.errors[0].path == "prompt_lens");
    CHECK_FALSE(moe::decode_step_mixed(s, t, {}).ok);
}

TEST_CASE("mixed lengths (seed 000 §8.1): the step's time by hand on the M2 Max, prefill and decode") {
    // Qwen3-30B-A3B BF16 on the m2-max preset (13.6 TFLOPS FP16, 400 GB/s; no tables: every record analytical), so
    // each request's attention can be worked by hand. 48 layers, 32 query heads and 4 KV heads of 128.
    const moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-30b-a3b","hardware":"m2-max"})");
    const moe::Tables& t = moe::builtin_tables();
    const double layers = 48, eff = t.calibration.attn_prefill_compute_eff;  // 0.5066 (presets/calibration.json)
    CHECK(eff == doctest::Approx(0.5066));
    // Prefill, prompts of 1,024 and 7,168 tokens. The attention core of a prompt of L is 2 (QK^T, PV) x 2 FLOP x
    // 32 heads x 128 x L^2 / 2 (causal) = 8,192 L^2 FLOP a layer, at 13.6 TFLOPS x 0.5066:
    //   1,024: 8.590e9 FLOP, 1.2468 ms;  7,168: 4.2090e11 FLOP, 61.092 ms;  a layer 62.338 ms, 48 layers 2,992.2 ms.
    // At the mean (two prompts of 4,096): 2 x 1.3744e11 FLOP, 39.897 ms a layer, 1,915.0 ms.
    auto attn_ms = [&](double L) { return 8192.0 * L * L / (13.6e12 * eff) * 1e3; };
    moe::MixedStep p = moe::prefill_step_mixed(s, t, {1024, 7168});
    REQUIRE(p.ok);
    CHECK(p.attention_ms == doctest::Approx(layers * (attn_ms(1024) + attn_ms(7168))).epsilon(1e-6));
    CHECK(p.attention_ms == doctest::Approx(2992.2).epsilon(1e-4));
    CHECK(p.attention_ms_at_mean == doctest::Approx(layers * 2 * attn_ms(4096)).epsilon(1e-6));
    CHECK(p.attention_ms_at_mean == doctest::Approx(1915.0).epsilon(1e-4));
    // The step: the estimate at the mean (8,192 tokens of 4,096-token prompts: estimate() prices exactly that step)
    // with its attention replaced, 7,736.9 - 1,915.0 + 2,992.2 = 8,814.1 ms: 13.9% over the mean's step.
    const moe::Estimate mean = moe_test::run(R"({"model":"qwen3-30b-a3b","hardware":"m2-max","workload":{"phase":"prefill","prompt_len":4096,"prefill_tokens":8192}})");
    CHECK(p.step_ms_at_mean == doctest::Approx(mean.prefill.step_ms).epsilon(1e-12));
    CHECK(mean.prefill.step_ms == doctest::Approx(7736.9).epsilon(1e-4));
    CHECK(p.step_ms == doctest::Approx(mean.prefill.step_ms - layers * 2 * attn_ms(4096) +
                                       layers * (attn_ms(1024) + attn_ms(7168))).epsilon(1e-9));
    CHECK(p.step_ms == doctest::Approx(8814.1).epsilon(1e-4));
    // Decode, two sequences at KV lengths 1,024 and 7,168. The attention core reads each sequence's K and V
    // (2 x 4 heads x 128 x 2 B = 2,048 B a token) plus its query and output (2 x 32 x 128 x 2 B = 16,384 B), at
    // 400 GB/s x attn_decode_bw_eff 0.75:
    //   at their own lengths: (1,024 + 7,168) x 2,048 + 2 x 16,384 = 16,809,984 B a layer, 56.033 us, 2.6896 ms
    // the same bytes as two at 4,096: linear in the context, so the mixed decode step is the mean's exactly.
    CHECK(t.calibration.attn_decode_bw_eff == doctest::Approx(0.75));
    moe::MixedStep d = moe::decode_step_mixed(s, t, {1024, 7168});
    REQUIRE(d.ok);
    const double bytes = (1024.0 + 7168) * 2048 + 2 * 16384;
    CHECK(bytes == 16809984);
    CHECK(d.attention_ms == doctest::Approx(layers * bytes / (400e9 * 0.75) * 1e3).epsilon(1e-6));
    CHECK(d.attention_ms == doctest::Approx(2.6896).epsilon(1e-4));
    CHECK(d.step_ms == doctest::Approx(d.step_ms_at_mean).epsilon(1e-9));
    const moe::Estimate dmean = moe_test::run(R"({"model":"qwen3-30b-a3b","hardware":"m2-max","workload":{"phase":"decode","batch":2,"context_len":4096}})");
    CHECK(d.step_ms == doctest::Approx(dmean.decode.step_ms).epsilon(1e-9));
}

TEST_CASE("prefill buckets (seed 000 §8.1): the padded tokens' time by hand on the M2 Max") {
    // Prompts of 1,000 and 3,000 tokens padded to buckets of 1,024 and 4,096 (as the test above): the step is the
    // mixed step of 1,024 + 4,096 tokens; the attention by hand (8,192 L^2 FLOP a layer at 13.6 TFLOPS x 0.5066,
    // 48 layers) is 48 x (1.2468 + 19.949) = 1,017.4 ms against 48 x (1.1891 + 10.701) = 570.7 ms unpadded.
    const moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-30b-a3b","hardware":"m2-max"})");
    const moe::Tables& t = moe::builtin_tables();
    auto attn_ms = [&](double L) { return 48 * 8192.0 * L * L / (13.6e12 * 0.5066) * 1e3; };
    moe::MixedStep b = moe::prefill_step_mixed(s, t, {1000, 3000}, {1024, 2048, 4096});
    moe::MixedStep plain = moe::prefill_step_mixed(s, t, {1000, 3000});
    REQUIRE(b.ok);
    REQUIRE(plain.ok);
    CHECK(b.attention_ms == doctest::Approx(attn_ms(1024) + attn_ms(4096)).epsilon(1e-6));
    CHECK(b.attention_ms == doctest::Approx(1017.4).epsilon(1e-4));
    CHECK(plain.attention_ms == doctest::Approx(attn_ms(1000) + attn_ms(3000)).epsilon(1e-6));
    CHECK(plain.attention_ms == doctest::Approx(570.7).epsilon(1e-3));
    // the rest of the step follows the tokens: 5,120 computed instead of 4,000
    CHECK(b.step_ms - b.attention_ms > plain.step_ms - plain.attention_ms);
}

TEST_CASE("a mixed prefill + decode step (seed 000 §8.1's combined step): one forward, by its parts") {
    // Seed 000 §8.1 combines a step's phases as max(prefill, decode). The engines that mix them (vLLM, TRT-LLM:
    // EngineConstants::mixed_batches) run one forward over the decode tokens and the prefill chunk, so the model
    // adds instead (core/serving/surface.h, PoolSurface::mixed_ms): the decode step of b requests, plus the
    // non-attention work P prefill tokens add to a forward of b tokens (weights already read), plus the P tokens'
    // attention. Qwen3-30B-A3B on one H200 under vLLM, 1,024-token prompts: b = 256 decode requests at their first
    // step (context 1,024) and P = 512 prefill tokens; 256, 512 and 768 are grid points of the surface, so its
    // curves give estimate()'s own steps there and the parts below are direct estimates.
    const moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-30b-a3b","hardware":"h200","runtime":{"engine":"vllm"},
        "serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":256}})");
    const moe::Tables& t = moe::builtin_tables();
    const moe::StepSurface sf = moe::step_surface(s, t);
    REQUIRE(sf.ok);
    REQUIRE(moe::builtin_engines().get(moe::EngineKind::vllm).mixed_batches);
    const moe::Scenario x = moe::serving_step_scenario(s, s.parallel);
    auto decode_ms = [&](int b, int ctx) {
        moe::Scenario y = x;
        y.workload.phase = moe::PhaseSel::decode;
        y.workload.batch = b;
        y.workload.context_len = ctx;
        const moe::Estimate e = moe::estimate(y, t);
        REQUIRE(e.ok);
        return e.decode.step_ms;
    };
    auto forward = [&](int tokens, double& attn_ms) {
        moe::Scenario y = x;
        y.workload.phase = moe::PhaseSel::prefill;
        y.workload.batch = 1;
        y.workload.prefill_tokens = tokens;
        const moe::Estimate e = moe::estimate(y, t);
        REQUIRE(e.ok);
        attn_ms = 0;
        for (const moe::OpRecord& o : e.ops)
            if (o.phase == moe::Phase::prefill && std::string_view(o.name) == "attn.core") attn_ms += o.time_us * o.count / 1e3;
        return e.prefill.step_ms;
    };
    double a768 = 0, a256 = 0, a512 = 0;
    const double f768 = forward(768, a768), f256 = forward(256, a256), f512 = forward(512, a512);
    const double dec = decode_ms(256, 1024);
    const double by_parts = dec + ((f768 - a768) - (f256 - a256)) + a512;
    const double mixed = sf.agg.mixed_ms(256, 1024, 512);
    MESSAGE("mixed step: decode " << dec << " ms + prefill tokens' non-attention " << (f768 - a768) - (f256 - a256)
                                  << " ms + their attention " << a512 << " ms = " << by_parts << " ms (surface " << mixed
                                  << " ms); the seed's max(prefill, decode) would be " << std::max(dec, f512) << " ms");
    CHECK(mixed == doctest::Approx(by_parts).epsilon(1e-6));
    // 24.473 + 3.639 + 0.511 = 28.623 ms (H200 tables and the shipped calibration), against the seed's
    // max(24.473, forward of 512 tokens) = 24.473 ms: one forward pays for both token sets.
    CHECK(dec == doctest::Approx(24.473).epsilon(1e-3));
    CHECK(mixed == doctest::Approx(28.623).epsilon(1e-3));
    CHECK(mixed > std::max(dec, f512));
    // the parts: P tokens add work (the forward grows with its tokens) and the mixed step exceeds the decode alone
    CHECK(f768 > f256);
    CHECK(mixed > dec);
    // no prefill tokens: the decode step; no decode requests: the prefill forward
    CHECK(sf.agg.mixed_ms(256, 1024, 0) == doctest::Approx(dec).epsilon(1e-6));
    CHECK(sf.agg.mixed_ms(0, 1024, 512) == doctest::Approx(f512).epsilon(1e-6));
}
