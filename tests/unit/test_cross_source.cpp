// test_cross_source.cpp — where two independent sources measured the same kernel, the model's predictions from each
// agree (issue 25). H800 and H100 SXM have the same tensor cores (989 / 1979 dense BF16 / FP8 TFLOPS) and the same
// 3.35 TB/s of HBM, so the roofline transfer between them is the identity; H200 adds HBM only. Sources:
//  - InferSim's H800 DeepGEMM grouped GEMMs (bench_data/grouped_gemm/{prefill,decode}/h800: the two GEMMs, profiler
//    time), to which the model adds the permutation it prices analytically;
//  - AIConfigurator's SGLang DeepEP expert module on H100 / H200 (bench_data/moe/<gpu>/sglang_deepep_*.csv: the GEMMs,
//    activation, quantisation, scatter and gather; the collector's undelivered rows taken out, bench_data/README.md);
//  - DeepGEMM's README figures (shared/reference/public_measurements.csv rows 136 and 139: 8 groups x 4096 rows,
//    N=4096 K=7168 at 1288 TFLOPS and N=7168 K=2048 at 1093 TFLOPS on H800).
// Bar: 25% (the issue's), the module above its GEMMs.
#include "test_helpers.h"

#include <algorithm>
#include <cmath>
#include <string>

using moe::Phase;
using namespace moe_test;

namespace {

// The routed experts of one DeepSeek-V3 MoE layer (us), permutation included, at `tokens` per GPU over EP `ep`.
double experts_us(const char* gpu, int ep, Phase ph, int tokens) {
    const bool prefill = ph == Phase::prefill;
    const std::string json = std::string(R"({"model":"deepseek-v3","hardware":")") + gpu +
                             R"(","parallel":{"tp":1,"dp":)" + std::to_string(ep) + R"(,"ep":)" + std::to_string(ep) +
                             R"(},"workload":{"phase":")" + (prefill ? "prefill" : "decode") + R"(","batch":)" +
                             std::to_string(prefill ? 1 : tokens) + R"(,"prefill_tokens":)" +
                             std::to_string(prefill ? tokens : 4096) + R"(,"prompt_len":4096,"context_len":4096},)" +
                             R"("runtime":{"a2a_backend":")" + (prefill ? "deepep_normal" : "deepep_low_latency") +
                             R"(","two_batch_overlap":false}})";
    const moe::Estimate e = run(json);
    double us = 0;
    for (const char* name : {"moe.routed_experts", "moe.permute", "moe.finalize"})
        if (const moe::OpRecord* o = find_op(e, name, ph)) us += o->time_us;
    return us;
}

const char* table_of(const char* gpu, int ep, Phase ph, int tokens) {
    const bool prefill = ph == Phase::prefill;
    const std::string json = std::string(R"({"model":"deepseek-v3","hardware":")") + gpu +
                             R"(","parallel":{"tp":1,"dp":)" + std::to_string(ep) + R"(,"ep":)" + std::to_string(ep) +
                             R"(},"workload":{"phase":")" + (prefill ? "prefill" : "decode") + R"(","batch":)" +
                             std::to_string(prefill ? 1 : tokens) + R"(,"prefill_tokens":)" +
                             std::to_string(prefill ? tokens : 4096) + R"(},"runtime":{"a2a_backend":")" +
                             (prefill ? "deepep_normal" : "deepep_low_latency") + R"(","two_batch_overlap":false}})";
    const moe::Estimate e = run(json);
    const moe::OpRecord* o = find_op(e, "moe.routed_experts", ph);
    return o ? o->table : "";
}

}  // namespace

TEST_CASE("cross-source: DeepEP prefill experts, AIC's H100/H200 module against InferSim's H800 GEMMs, within 25%") {
    // The two sources are the ones the model reads (not the fallback): checked once.
    CHECK(std::string(table_of("h100-sxm", 32, Phase::prefill, 16384)) == "bench_data/moe/h100/sglang_deepep_prefill.csv");
    CHECK(std::string(table_of("h800", 32, Phase::prefill, 16384)) == "bench_data/grouped_gemm/prefill/h800/data.csv");
    double worst = 1;
    for (const char* gpu : {"h100-sxm", "h200"})
        for (int ep : {8, 16, 32, 64})
            for (int tokens : {4096, 8192, 16384}) {
                const double aic = experts_us(gpu, ep, Phase::prefill, tokens);
                const double infersim = experts_us("h800", ep, Phase::prefill, tokens);
                INFO(std::string(gpu) << " ep" << ep << " " << tokens << " tokens per GPU: AIC module " << aic << " us, InferSim GEMMs + permutation " << infersim << " us");
                CHECK(aic <= 1.25 * infersim);
                CHECK(aic >= infersim / 1.25);
                worst = std::max(worst, std::max(aic / infersim, infersim / aic));
            }
    MESSAGE("DeepEP prefill experts: largest ratio between the sources x" << worst);
}

TEST_CASE("cross-source: DeepEP low-latency decode experts, AIC's H100/H200 module against InferSim's H800 masked GEMMs, within 25%") {
    CHECK(std::string(table_of("h100-sxm", 32, Phase::decode, 64)) == "bench_data/moe/h100/sglang_deepep_decode.csv");
    // EP 8..64 (4..32 local experts, 2.8 GB to 350 MB of weights a step): the GEMMs dominate both. At EP128 (two
    // local experts, 88 MB) the module's other kernels (activation and quantisation between the GEMMs, the combine's
    // weighting) are a fixed ~10-25 us that InferSim's GEMM-only timing does not hold (H100 batch 16: 55.8 against
    // 37.1 us): there the bar is 25% or 25 us, whichever is larger.
    double worst = 1;
    for (const char* gpu : {"h100-sxm", "h200"}) {
        for (int batch : {16, 64, 128}) {
            const double aic = experts_us(gpu, 128, Phase::decode, batch), infersim = experts_us("h800", 128, Phase::decode, batch);
            INFO(std::string(gpu) << " ep128 batch " << batch << ": AIC module " << aic << " us, InferSim masked GEMMs " << infersim << " us");
            CHECK(std::fabs(aic - infersim) <= std::max(25.0, 0.25 * infersim));
        }
        for (int ep : {8, 16, 32, 64})
            for (int batch : {16, 64, 128}) {
                const double aic = experts_us(gpu, ep, Phase::decode, batch);
                const double infersim = experts_us("h800", ep, Phase::decode, batch);
                INFO(std::string(gpu) << " ep" << ep << " batch " << batch << " per GPU: AIC module " << aic << " us, InferSim masked GEMMs " << infersim << " us");
                // H200's 4.8 TB/s against H800's 3.35: the memory-bound decode experts may run up to 1.43x faster there
                const double lo = std::string(gpu) == "h200" ? 1.25 * 4.8 / 3.35 : 1.25;
                CHECK(aic <= 1.25 * infersim);
                CHECK(aic >= infersim / lo);
                worst = std::max(worst, std::max(aic / infersim, infersim / aic));
            }
    }
    MESSAGE("DeepEP decode experts: largest ratio between the sources x" << worst);
}

TEST_CASE("cross-source: DeepGEMM's published grouped GEMMs against AIC's H100 DeepEP module, within 25%") {
    // DeepGEMM README @a6d97a1c (public_measurements.csv rows 136, 139), H800, 8 groups x 4096 rows: the up projection
    // (N = 2 x 2048, K = 7168) at 1288 TFLOPS and the down projection (N = 7168, K = 2048) at 1093 TFLOPS.
    const double up_us = 2.0 * 8 * 4096 * 4096 * 7168 / 1288e12 * 1e6;    // 1494 us
    const double down_us = 2.0 * 8 * 4096 * 7168 * 2048 / 1093e12 * 1e6;  // 880 us
    // The same work on one GPU: 8 local experts (EP32), 4096 tokens per GPU x top-8 = 4096 rows per expert.
    const double aic = experts_us("h100-sxm", 32, Phase::prefill, 4096);
    const double infersim = experts_us("h800", 32, Phase::prefill, 4096);
    INFO("DeepGEMM " << up_us + down_us << " us, AIC H100 module " << aic << " us, InferSim H800 GEMMs + permutation " << infersim << " us");
    CHECK(aic >= up_us + down_us);  // the module holds the GEMMs and more
    CHECK(aic <= 1.25 * (up_us + down_us));
    CHECK(infersim >= up_us + down_us);
    CHECK(infersim <= 1.25 * (up_us + down_us));
}
