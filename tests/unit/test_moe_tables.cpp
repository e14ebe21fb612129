// test_moe_tables.cpp — the measured routed-expert MoE layers (bench_data/moe/<family>/sglang.csv, distilled by
// scripts/distill_aic.py from AIConfigurator's SGLang 0.5.14 moe_perf): lookups, and the step model taking the
// routed experts' time from them (permute and unpermute included in the measurement).
// AIC = ai-dynamo/aiconfigurator @ 095f58a5, files under shared/anchors/aic/perf/ (line numbers count the header as 1).
#include <string>

#include "test_helpers.h"

using moe::Dtype;
using moe::Phase;
using moe::Source;
using moe_test::find_op;
using moe_test::run;

namespace {

const char* kGlm5B200 =
    R"({"model":"glm-5","hardware":"b200","parallel":{"tp":8},"precision":{"weights":"nvfp4"},)"
    R"("workload":{"phase":"prefill","prefill_tokens":8192,"prompt_len":8192}})";

moe::MoeHit glm5(const moe::Tables& t, double tokens) {
    return t.moe_layer("b200", Dtype::nvfp4, 6144, 2048, 8, 256, 8, 1, tokens);
}

}  // namespace

TEST_CASE("AIC MoE layers: a measured point reads back exactly") {
    const moe::Tables& t = moe::builtin_tables();
    // b200_sxm/sglang-0.5.14/moe/moe_perf.csv.gz line 26430:
    // SGLang,0.5.14,NVIDIA B200,moe,sglang_flashinfer_trtllm_moe,nvfp4,8192,6144,2048,8,256,8,1,balanced,0.4997830581665039
    // -> bench_data/moe/b200/sglang.csv: nvfp4,6144,2048,8,256,8,1,8192,499.8
    const moe::MoeHit h = glm5(t, 8192);
    REQUIRE(h.found);
    CHECK(h.source == Source::measured);
    CHECK(std::string(h.table) == "bench_data/moe/b200/sglang.csv");
    CHECK(std::fabs(h.latency_us - 499.8) <= 1e-9 * 499.8);
    // h100_sxm/sglang-0.5.14/moe/moe_perf.csv.gz line 19945: sglang_fused_moe_triton, fp8_block, 1024 tokens, Kimi-K2
    // shape, moe_tp 1 x ep 8, 0.9149394989013672 ms -> fp8,7168,2048,8,384,1,8,...,914.9 (us_at_1024)
    const moe::MoeHit d = t.moe_layer("h100", Dtype::fp8, 7168, 2048, 8, 384, 1, 8, 1024);
    REQUIRE(d.found);
    CHECK(std::fabs(d.latency_us - 914.9) <= 1e-9 * 914.9);
    // h100_sxm/sglang-0.5.10/moe/wideep_context_moe_perf.csv.gz line 454: deepepmoe, fp8_block, 524288 tokens across
    // the EP group (16,384 per rank x 32), moe_tp 1 x ep 32, uniform, 14.264644350324359 ms
    // -> bench_data/moe/h100/sglang_deepep_prefill.csv: fp8,7168,2048,8,256,1,32,...,14265 (us_at_524288)
    const moe::MoeHit p = t.moe_layer("h100", Dtype::fp8, 7168, 2048, 8, 256, 1, 32, 524288, moe::MoeKernel::deepep_contiguous);
    REQUIRE(p.found);
    CHECK(p.source == Source::measured);
    CHECK(std::string(p.table) == "bench_data/moe/h100/sglang_deepep_prefill.csv");
    CHECK(p.latency_us == 14265.0);
    // wideep_generation_moe_perf.csv.gz line 203: deepepmoe, 32 tokens across EP32 (1 per rank), 0.15009599924087524 ms
    const moe::MoeHit g = t.moe_layer("h100", Dtype::fp8, 7168, 2048, 8, 256, 1, 32, 32, moe::MoeKernel::deepep_masked);
    REQUIRE(g.found);
    CHECK(g.latency_us == 150.1);
    // The kernels are separate series: the fused MoE has no EP32 DeepSeek-V3 row (below), DeepEP no EP1 row.
    CHECK(!t.moe_layer("h100", Dtype::fp8, 7168, 2048, 8, 256, 1, 1, 1024, moe::MoeKernel::deepep_contiguous).found);
}

TEST_CASE("AIC MoE layers: DeepSeek-V3's group-limited routing is not balanced in moe_perf, so its series are left out") {
    // AIC's moe_perf collector gives group-limited top-k (n_group 8, topk_group 4) logits whose ties pile every token
    // onto the same few lowest-index experts, all on rank 0, the GPU timed: EP1 = EP2 (h100 fp8 at 16384 tokens:
    // 17.82 vs 17.89 ms) and EP32 10.52 ms where balanced routing takes 0.80 ms (bench_data/README.md, "moe"); at EP1
    // a decode batch of 64 reads a handful of experts (1.91 ms on h100, which for the ~220 experts balanced routing
    // touches would be 5.1 TB/s, past the 3.35 TB/s HBM). The distiller leaves out every series of that shape.
    const moe::Tables& t = moe::builtin_tables();
    for (const char* fam : {"h100", "h200", "b200"}) {
        INFO(fam);
        for (int ep : {1, 2, 4, 8, 16, 32, 64}) CHECK(!t.moe_layer(fam, Dtype::fp8, 7168, 2048, 8, 256, 1, ep, 1024).found);
        // the same shape without group limits (Kimi-K2's 384 experts) keeps its EP rows
        CHECK(t.moe_layer(fam, Dtype::fp8, 7168, 2048, 8, 384, 1, 8, 1024).found);
    }
}

TEST_CASE("AIC MoE layers: log-log between points, held below the first, linear past the last") {
    const moe::Tables& t = moe::builtin_tables();
    const double lo = glm5(t, 4096).latency_us, hi = glm5(t, 8192).latency_us;  // 326.3, 499.8
    CHECK(lo == doctest::Approx(326.3));
    const moe::MoeHit mid = glm5(t, 4096 * std::sqrt(2.0));
    CHECK(mid.source == Source::interpolated);
    CHECK(mid.latency_us == doctest::Approx(std::sqrt(lo * hi)).epsilon(1e-9));
    CHECK(mid.latency_us > lo);
    CHECK(mid.latency_us < hi);
    // below the first point (1 token): that point's time
    CHECK(glm5(t, 0.25).latency_us == doctest::Approx(glm5(t, 1).latency_us).epsilon(1e-12));
    CHECK(glm5(t, 0.25).source == Source::interpolated);
    // past the last (16384 tokens, 941.5 us): linear in tokens
    CHECK(glm5(t, 65536).latency_us == doctest::Approx(4 * 941.5).epsilon(1e-9));
}

TEST_CASE("AIC MoE layers: every series is monotone in tokens") {
    const moe::Tables& t = moe::builtin_tables();
    struct Key { const char* fam; Dtype d; int h, i, k, e, tp, ep; moe::MoeKernel kernel = moe::MoeKernel::fused; };
    const Key keys[] = {{"b200", Dtype::nvfp4, 6144, 2048, 8, 256, 8, 1}, {"b200", Dtype::fp8, 7168, 2048, 8, 384, 1, 8},
                        {"h100", Dtype::fp8, 7168, 2048, 8, 256, 1, 32, moe::MoeKernel::deepep_contiguous},
                        {"b200", Dtype::fp8, 7168, 2048, 8, 256, 1, 64, moe::MoeKernel::deepep_masked},
                        {"b200", Dtype::mxfp4, 2880, 2880, 4, 128, 4, 1},  {"h200", Dtype::bf16, 2048, 768, 8, 128, 2, 2},
                        {"h100", Dtype::fp8, 3072, 1536, 8, 256, 4, 16},
                        {"h100", Dtype::int4, 7168, 2048, 8, 384, 8, 1}};
    for (const Key& k : keys) {
        INFO(k.fam << " " << moe::dtype_name(k.d) << " " << k.h << "/" << k.i << " tp" << k.tp << " ep" << k.ep);
        double prev = 0;
        for (double x = 0.5; x < 1e5; x *= 1.19) {
            const moe::MoeHit h = t.moe_layer(k.fam, k.d, k.h, k.i, k.k, k.e, k.tp, k.ep, x, k.kernel);
            REQUIRE(h.found);
            CHECK(h.latency_us >= prev);
            prev = h.latency_us;
        }
    }
}

TEST_CASE("AIC MoE layers: absent keys are not found") {
    const moe::Tables& t = moe::builtin_tables();
    CHECK(!t.moe_layer("h800", Dtype::fp8, 7168, 2048, 8, 256, 1, 8, 1024).found);   // no such family table
    CHECK(!t.moe_layer("h100", Dtype::nvfp4, 7168, 2048, 8, 256, 1, 8, 1024).found); // no NVFP4 on Hopper
    CHECK(!t.moe_layer("h100", Dtype::mxfp4, 2880, 2880, 4, 128, 8, 16, 64).found);  // Hopper MXFP4: tp x ep > 64
    CHECK(!t.moe_layer("b200", Dtype::nvfp4, 6144, 2048, 8, 256, 8, 16, 1024).found); // tp x ep > 64 not kept
    CHECK(!t.moe_layer("b200", Dtype::nvfp4, 6144, 2048, 8, 255, 8, 1, 1024).found);  // another shape
    CHECK(!t.moe_layer("b200", Dtype::nvfp4, 6144, 2048, 8, 256, 8, 1, 0).found);     // no tokens
}

TEST_CASE("AIC MoE layers: the loader checks its rows") {
    moe::Tables t;
    moe::Issues errs;
    const char* hdr = "dtype,hidden,inter,topk,experts,tp,ep,tokens,latency_us\n";
    CHECK(t.load_csv("bench_data/moe/h100/x.csv", std::string(hdr) + "bf16,64,32,2,8,1,1,1,5\nbf16,64,32,2,8,1,1,4,9\n", errs));
    CHECK(errs.empty());
    CHECK(t.table_count() == 1);
    CHECK(t.moe_layer("h100", Dtype::bf16, 64, 32, 2, 8, 1, 1, 2).latency_us == doctest::Approx(std::sqrt(45.0)));
    CHECK(!t.load_csv("bench_data/moe/h100/y.csv", std::string(hdr) + "bf16,64,32,2,8,1,1,1,5\nbf16,64,32,2,8,1,1,1,6\n", errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "bench_data/moe/h100/y.csv:3");
    errs.clear();
    CHECK(!t.load_csv("bench_data/moe/h100/z.csv", std::string(hdr) + "fp6,64,32,2,8,1,1,1,5\nbf16,64,32,2.5,8,1,1,1,5\n"
                      "bf16,64,32,2,8,1,1,1,-5\n", errs));
    CHECK(errs.size() == 3);
    errs.clear();
    CHECK(!t.load_csv("bench_data/moe/h100/w.csv", "dtype,hidden\nbf16,64\n", errs));
    CHECK(errs.size() == 1);
    errs.clear();
    CHECK(!t.load_csv("bench_data/moe/nosuch/w.csv", hdr, errs));
    errs.clear();
    CHECK(!t.load_csv("bench_data/moe/h100/w.csv", hdr, errs));  // a header alone
    CHECK(t.table_count() == 1);
}

TEST_CASE("AIC MoE layers: the wide form (a us_at_<tokens> column per token count) reads as the long one") {
    moe::Tables t;
    moe::Issues errs;
    CHECK(t.load_csv("bench_data/moe/h100/x.csv", "dtype,hidden,inter,topk,experts,tp,ep,us_at_1,us_at_4,us_at_16\n"
                                                   "bf16,64,32,2,8,1,1,5,9,\nbf16,64,32,2,8,1,2,4,,16\n", errs));
    CHECK(errs.empty());
    CHECK(t.moe_layer("h100", Dtype::bf16, 64, 32, 2, 8, 1, 1, 2).latency_us == doctest::Approx(std::sqrt(45.0)));
    CHECK(t.moe_layer("h100", Dtype::bf16, 64, 32, 2, 8, 1, 1, 4).source == moe::Source::measured);
    // the empty 4-token cell is a count not measured: between 1 and 16 tokens, log-log
    CHECK(t.moe_layer("h100", Dtype::bf16, 64, 32, 2, 8, 1, 2, 4).latency_us == doctest::Approx(8.0));
    CHECK(t.moe_layer("h100", Dtype::bf16, 64, 32, 2, 8, 1, 2, 4).source == moe::Source::interpolated);
    errs.clear();
    CHECK(!t.load_csv("bench_data/moe/h100/y.csv", "dtype,hidden,inter,topk,experts,tp,ep,us_at_x\nbf16,64,32,2,8,1,1,5\n", errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "bench_data/moe/h100/y.csv:1");
    errs.clear();
    CHECK(!t.load_csv("bench_data/moe/h100/z.csv", "dtype,hidden,inter,topk,experts,tp,ep,us_at_1\nbf16,64,32,2,8,1,1,-5\n", errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "bench_data/moe/h100/z.csv:2");
    errs.clear();
    CHECK(!t.load_csv("bench_data/moe/h100/w.csv", "dtype,hidden,inter,topk,experts,tp,ep,tokens,latency_us,us_at_1\n", errs));
    CHECK(errs.size() == 1);
    // the other kinds' wide-form rules (tables_detail::WideForm): a truncated line does not half-load, two columns
    // naming the same count are refused
    errs.clear();
    CHECK(!t.load_csv("bench_data/moe/h100/v.csv", "dtype,hidden,inter,topk,experts,tp,ep,us_at_1,us_at_4\nbf16,64,32,2,8,1,1,5\n", errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].message.find("cells") != std::string::npos);
    errs.clear();
    CHECK(!t.load_csv("bench_data/moe/h100/u.csv", "dtype,hidden,inter,topk,experts,tp,ep,us_at_4,us_at_4.0\nbf16,64,32,2,8,1,1,5,6\n", errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].message.find("same") != std::string::npos);
}

TEST_CASE("AIC MoE layers: the step model takes the routed experts from them (worked example: GLM-5 NVFP4 on B200)") {
    // GLM-5 (hidden 6144, moe_intermediate 2048, top-8 of 256), NVFP4 experts, TP8 (moe_tp 8, ep 1), a prefill of 8192
    // tokens: the layer is the table point of b200_sxm/sglang-0.5.14/moe/moe_perf.csv.gz line 26430, 0.49978 ms
    // (permutation and weighted combine included, so no moe.permute / moe.unpermute passes), against 960 us of
    // permute (224) + grouped GEMM transferred from InferSim's H800 tables (512) + unpermute (224) before.
    const moe::Estimate e = run(kGlm5B200);
    const moe::OpRecord* op = find_op(e, "moe.routed_experts", Phase::prefill);
    REQUIRE(op);
    CHECK(op->time_us == doctest::Approx(499.8).epsilon(1e-9));
    CHECK(op->source == Source::measured);
    CHECK(std::string(op->table) == "bench_data/moe/b200/sglang.csv");
    CHECK(op->efficiency > 0);
    CHECK(op->efficiency < 1);
    // The work the table's time covers (seed 000 §4.1, 6·S·h·i·k): 8192 tokens x 8 picks x 6 x 6144 x (2048 / 8,
    // moe_tp 8) = 618.5 GFLOP per GPU; every one of the 256 experts receives rows at 65,536 picks (1 - (31/32)^8192
    // = 1 to double precision), its 3 x 6144 x 256 weights in NVFP4 at 0.5 + 1/16 B (one E4M3 scale per 16):
    // 256 x 4,718,592 x 0.5625 = 679,477,248 B.
    CHECK(op->flops == doctest::Approx(6.0 * 8192 * 8 * 6144 * 256).epsilon(1e-9));
    CHECK(op->weight_bytes == doctest::Approx(679477248.0).epsilon(1e-9));
    CHECK(!find_op(e, "moe.permute", Phase::prefill));
    CHECK(!find_op(e, "moe.unpermute", Phase::prefill));

    // The busiest rank: routing.imbalance scales the tokens looked up (8192 x 1.5 = 12288: between 8192 and 16384).
    std::string skew = kGlm5B200;
    skew.insert(skew.size() - 1, R"(,"routing":{"imbalance":1.5})");
    const moe::Estimate skewed = run(skew);  // kept alive: find_op points into its records
    const moe::OpRecord* sk = find_op(skewed, "moe.routed_experts", Phase::prefill);
    REQUIRE(sk);
    CHECK(sk->source == Source::interpolated);
    CHECK(sk->time_us == doctest::Approx(moe::builtin_tables().moe_layer("b200", Dtype::nvfp4, 6144, 2048, 8, 256, 8, 1,
                                                                         12288).latency_us).epsilon(1e-9));
}

TEST_CASE("AIC MoE layers: other GPUs, formats and layouts keep the grouped-GEMM path") {
    // H800 has no MoE-layer table: permute, grouped GEMM, the unpermute-and-reduce pass (moe.finalize).
    const moe::Estimate h800 = run(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"tp":8},)"
                                   R"("workload":{"phase":"prefill","prefill_tokens":4096,"prompt_len":4096}})");
    CHECK(find_op(h800, "moe.permute", Phase::prefill));
    CHECK(find_op(h800, "moe.finalize", Phase::prefill));
    CHECK(std::string(find_op(h800, "moe.routed_experts", Phase::prefill)->table).rfind("bench_data/grouped_gemm/", 0) == 0);
    // B200 with a format the table does not hold for this shape (INT4 GLM-5): the old path.
    std::string int4 = kGlm5B200;
    int4.replace(int4.find("nvfp4"), 5, "int4");
    const moe::Estimate b_int4 = run(int4);
    // (INT4 on B200 runs as W4A16, vLLM's Marlin MoE: no permute pass, the weighted sum after the down GEMM)
    CHECK(!find_op(b_int4, "moe.permute", Phase::prefill));
    CHECK(find_op(b_int4, "moe.finalize", Phase::prefill));
    CHECK(std::string(find_op(b_int4, "moe.routed_experts", Phase::prefill)->table).rfind("bench_data/moe/", 0) != 0);
    // H100 PCIe borrows the H100 family's tables: a latency does not transfer to another GPU.
    const moe::Estimate pcie = run(R"({"model":"qwen3-30b-a3b","hardware":"h100-pcie","parallel":{"tp":2},)"
                                   R"("workload":{"phase":"prefill","prefill_tokens":4096,"prompt_len":4096}})");
    CHECK(find_op(pcie, "moe.permute", Phase::prefill));
    // The same on H100 SXM: the table.
    const moe::Estimate sxm = run(R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm","parallel":{"tp":2},)"
                                  R"("workload":{"phase":"prefill","prefill_tokens":4096,"prompt_len":4096}})");
    CHECK(!find_op(sxm, "moe.permute", Phase::prefill));
    CHECK(std::string(find_op(sxm, "moe.routed_experts", Phase::prefill)->table) == "bench_data/moe/h100/sglang.csv");
}

// ---- Gated DeltaNet prefill kernels (bench_data/gdn/<family>/sglang.csv, core/tables_gdn.cpp) ----------------

TEST_CASE("AIC Gated DeltaNet prefill: the loader checks its rows, the lookup interpolates log-log in tokens") {
    moe::Tables t;
    moe::Issues errs;
    const char* hdr = "k_heads,v_heads,k_dim,v_dim,tokens,conv_us,core_us\n";
    CHECK(t.load_csv("bench_data/gdn/h100/x.csv", std::string(hdr) + "2,8,128,128,1024,4,64\n2,8,128,128,4096,16,256\n", errs));
    CHECK(errs.empty());
    CHECK(t.table_count() == 1);
    // 2048 tokens: halfway in log tokens between 1024 and 4096 -> geometric mean of the times
    const moe::GdnHit h = t.gdn_prefill("h100", 2, 8, 128, 128, 2048);
    REQUIRE(h.found);
    CHECK(h.conv_us == doctest::Approx(8.0));
    CHECK(h.core_us == doctest::Approx(128.0));
    CHECK(h.source == moe::Source::interpolated);
    CHECK(t.gdn_prefill("h100", 2, 8, 128, 128, 100).core_us == 64.0);                              // floor
    CHECK(t.gdn_prefill("h100", 2, 8, 128, 128, 8192).core_us == doctest::Approx(512.0));           // linear past
    CHECK(t.gdn_prefill("h100", 2, 8, 128, 128, 4096).source == moe::Source::measured);
    CHECK(!t.gdn_prefill("h100", 4, 8, 128, 128, 1024).found);                                      // another key
    CHECK(!t.gdn_prefill("h200", 2, 8, 128, 128, 1024).found);                                      // another GPU
    CHECK(!t.load_csv("bench_data/gdn/h100/y.csv", std::string(hdr) + "2,8,128,128,1024,4,64\n2,8,128,128,1024,4,65\n", errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "bench_data/gdn/h100/y.csv:3");
    errs.clear();
    CHECK(!t.load_csv("bench_data/gdn/h100/z.csv", std::string(hdr) + "2.5,8,128,128,1024,4,64\n2,8,128,128,1024,4,-1\n", errs));
    CHECK(errs.size() == 2);
    errs.clear();
    CHECK(!t.load_csv("bench_data/gdn/nosuch/w.csv", hdr, errs));
    errs.clear();
    CHECK(!t.load_csv("bench_data/gdn/h100/w.csv", "k_heads,v_heads\n2,8\n", errs));
    // the per-phase H20 tables (BLIS's kernel breakdown) are still accepted and not read
    errs.clear();
    CHECK(t.load_csv("bench_data/gdn/prefill/h20/4-16-128-32-128.csv", "seq_len,conv\n4096,65\n", errs));
    CHECK(errs.empty());
    CHECK(t.table_count() == 1);
}

TEST_CASE("AIC Gated DeltaNet prefill: the step model takes the conv and delta-rule kernels from them") {
    // Qwen3.5-397B-A17B, TP8 on B200: 16 k / 64 v heads -> 2 / 8 per GPU, 128 x 128. One 1024-token prompt:
    // bench_data/gdn/b200/sglang.csv (AIC's SGLang 0.5.14 gdn_perf, batch 1, 1024 tokens): causal_conv1d_fn
    // 4.825 us, chunk_gated_delta_rule 69.67 us. The analytical chunked model gave ~3 us (its FLOPs are 1.5 GFLOP;
    // the kernel's sequential chunk scan and launches set its time at this size).
    moe::Estimate e = moe_test::run(R"({"model":"qwen3.5-397b-a17b","hardware":"b200","parallel":{"tp":8},
        "workload":{"phase":"prefill","prefill_tokens":1024,"prompt_len":1024}})");
    const moe::OpRecord* core = moe_test::find_op(e, "attn.gdn_core", moe::Phase::prefill, "MoE layers (Gated DeltaNet)");
    const moe::OpRecord* conv = moe_test::find_op(e, "attn.gdn_conv", moe::Phase::prefill, "MoE layers (Gated DeltaNet)");
    REQUIRE(core);
    REQUIRE(conv);
    CHECK(core->time_us == doctest::Approx(69.67).epsilon(1e-9));
    CHECK(conv->time_us == doctest::Approx(4.825).epsilon(1e-9));
    CHECK(core->source == moe::Source::measured);
    CHECK(std::string(core->table) == "bench_data/gdn/b200/sglang.csv");
    // decode stays analytical
    const moe::Estimate d = moe_test::run(R"({"model":"qwen3.5-397b-a17b","hardware":"b200","parallel":{"tp":8},
        "workload":{"phase":"decode","batch":64}})");
    const moe::OpRecord* dec = moe_test::find_op(d, "attn.gdn_core", moe::Phase::decode, "MoE layers (Gated DeltaNet)");
    REQUIRE(dec);
    CHECK(dec->source == moe::Source::analytical);
}

// Issue 25's symptom, pinned: DeepSeek-V3 prefill on 32 GPUs (EP32, 16K tokens per GPU, DeepEP normal, two-batch
// overlap) gave 651 tokens/s per GPU on H100 and 7,387 on H800, the routed experts read at 16,384 x 32 tokens of
// AIC's moe_perf (whose token count is per rank). The two GPUs have the same SMs and HBM3 and differ in NVLink
// (H800: 400 GB/s) and FP64, so the same deployment must prefill within 10% of each other.
TEST_CASE("DeepSeek-V3 EP32 prefill at 16K tokens per GPU: H100 within 10% of H800 (issue 25)") {
    using namespace moe_test;
    auto tps = [](const char* gpu) {
        return run(std::string(R"({"model":"deepseek-v3","hardware":")") + gpu + R"(","parallel":{"dp":32,"ep":32},
            "workload":{"phase":"prefill","prefill_tokens":16384},"runtime":{"two_batch_overlap":true,"a2a_backend":"deepep_normal"}})")
            .prefill.tokens_per_s_per_gpu;
    };
    const double h100 = tps("h100-sxm"), h800 = tps("h800");
    INFO("H100 " << h100 << " tokens/s per GPU, H800 " << h800);
    CHECK(std::fabs(h100 / h800 - 1) <= 0.10);
    CHECK(h800 > 5000);  // the order of SGLang's published 32-H800 prefill rate (seed 000: ~7.4K)
}

TEST_CASE("AIC MoE layers: has_moe_kernel says which kernels a family's loaded files measured, kept by a copy") {
    // bench_data/moe: b200 has sglang_triton.csv (SGLang's Triton fused MoE alone), h100 none; h100 has
    // vllm_flashinfer_cutlass.csv and trtllm_mxfp4.csv, gb200 neither (its own sglang.csv and the DeepEP pair)
    const moe::Tables& builtin = moe::builtin_tables();
    CHECK(builtin.has_moe_kernel("b200", moe::MoeKernel::triton));
    CHECK_FALSE(builtin.has_moe_kernel("h100", moe::MoeKernel::triton));
    CHECK(builtin.has_moe_kernel("h100", moe::MoeKernel::flashinfer_cutlass));
    CHECK(builtin.has_moe_kernel("h100", moe::MoeKernel::trtllm));
    CHECK(builtin.has_moe_kernel("gb200", moe::MoeKernel::deepep_masked));
    CHECK(builtin.has_moe_kernel("gb200", moe::MoeKernel::fused));
    CHECK_FALSE(builtin.has_moe_kernel("gb200", moe::MoeKernel::flashinfer_cutlass));
    CHECK_FALSE(builtin.has_moe_kernel("gb200", moe::MoeKernel::trtllm));
    CHECK_FALSE(builtin.has_moe_kernel("nosuch", moe::MoeKernel::fused));

    moe::Tables t;
    moe::Issues errs;
    const char* hdr = "dtype,hidden,inter,topk,experts,tp,ep,tokens,latency_us\n";
    CHECK_FALSE(t.has_moe_kernel("h100", moe::MoeKernel::triton));
    // a refused file (a repeated token count) flags nothing
    CHECK_FALSE(t.load_csv("bench_data/moe/h100/a_triton.csv", std::string(hdr) + "bf16,64,32,2,8,1,1,1,5\nbf16,64,32,2,8,1,1,1,6\n", errs));
    CHECK_FALSE(t.has_moe_kernel("h100", moe::MoeKernel::triton));
    CHECK(t.load_csv("bench_data/moe/h100/a_triton.csv", std::string(hdr) + "bf16,64,32,2,8,1,1,1,5\n", errs));
    CHECK(t.has_moe_kernel("h100", moe::MoeKernel::triton));
    CHECK_FALSE(t.has_moe_kernel("h100", moe::MoeKernel::fused));
    CHECK_FALSE(t.has_moe_kernel("h200", moe::MoeKernel::triton));
    const moe::Tables copy(t);
    CHECK(copy.has_moe_kernel("h100", moe::MoeKernel::triton));
    moe::Tables assigned;
    assigned = t;
    CHECK(assigned.has_moe_kernel("h100", moe::MoeKernel::triton));
}
