// The machines of late 2026 (issue 29): AMD MI325X and MI355X, NVIDIA Vera Rubin NVL72, GH200, the H20's 141 GB
// version and the host link of B200 / B300, each number checked against the datasheet figure written beside it
// (sources in presets/hardware/README.md). None of these GPUs has measured kernel tables: the estimate says so.
#include <string>

#include "test_helpers.h"

namespace {
using moe_test::preset_gpu;
using moe_test::has_warning;
}  // namespace

TEST_CASE("AMD MI325X and MI355X carry their datasheet numbers (issue 29)") {
    // AMD Instinct MI325X data sheet: 1,307.4 TFLOPS BF16, 2,614.9 FP8 dense; 256 GB HBM3E at 6 TB/s; 7 Infinity
    // Fabric links x 64 GB/s one way; PCIe Gen5 x16 (128 GB/s bidirectional); CDNA 3 has no FP4.
    const moe::GpuSpec& a = preset_gpu("mi325x");
    CHECK(a.dense_tflops_bf16 == doctest::Approx(1307.4));
    CHECK(a.dense_tflops_fp8 == doctest::Approx(2614.9));
    CHECK(a.dense_tflops_fp4 == 0);
    CHECK(a.hbm_bandwidth_GBps == 6000);
    CHECK(a.hbm_capacity_GiB == 256);
    CHECK(a.nvlink_bandwidth_GBps == 448);
    CHECK(a.host_bandwidth_GBps == 64);
    // AMD Instinct MI355X data sheet: 2.5 PFLOPS BF16, 5.0 FP8, 10 MXFP6 / MXFP4 dense; 288 GB HBM3E at 8 TB/s;
    // 7 links x 153.6 GB/s bidirectional; 256 CUs.
    const moe::GpuSpec& b = preset_gpu("mi355x");
    CHECK(b.dense_tflops_bf16 == doctest::Approx(2500).epsilon(0.01));
    CHECK(b.dense_tflops_fp8 == doctest::Approx(5000).epsilon(0.01));
    CHECK(b.dense_tflops_fp4 == doctest::Approx(10000).epsilon(0.01));
    CHECK(b.hbm_bandwidth_GBps == 8000);
    CHECK(b.hbm_capacity_GiB == 288);
    CHECK(b.nvlink_bandwidth_GBps == doctest::Approx(7 * 153.6 / 2));
    CHECK(b.sm_count == 256);
    CHECK(b.host_bandwidth_GBps == 64);
    // MXFP4 runs natively at the FP4 rate on CDNA 4 (and as W4A16 on the MI325X, with a warning saying so).
    CHECK(b.peak_tflops(moe::Dtype::mxfp4) == doctest::Approx(b.dense_tflops_fp4));
    const moe::Estimate e4 = moe_test::run(R"({"model":"gpt-oss-120b","hardware":"mi355x"})");
    moe_test::check_all_finite(e4);
    CHECK_FALSE(has_warning(e4, "no FP4 tensor cores"));
    const moe::Estimate e3 = moe_test::run(R"({"model":"gpt-oss-120b","hardware":"mi325x"})");
    CHECK(has_warning(e3, "no FP4 tensor cores"));
    // No kernel table was measured on either: the estimate says the efficiencies are borrowed, and that the routed
    // experts (grouped GEMMs measured on Hopper) take the analytical fallback.
    for (const moe::Estimate* e : {&e3, &e4}) {
        CHECK(has_warning(*e, "has no measured kernel tables: efficiencies are borrowed from h100"));
        CHECK(has_warning(*e, "routed experts: no measured grouped-GEMM table applies"));
    }
    // Decode of a memory-bound step scales with HBM bandwidth: MI355X / MI325X = 8 / 6 TB/s, give or take the
    // fixed latencies (Llama-3.1-8B at batch 1).
    auto tpot = [](const char* hw) {
        return moe_test::run(std::string(R"({"model":"llama-3.1-8b","hardware":")") + hw +
                             R"(","workload":{"phase":"decode","batch":1}})").decode.tpot_ms;
    };
    const double ratio = tpot("mi325x") / tpot("mi355x");
    MESSAGE("Llama-3.1-8B decode at batch 1, MI325X / MI355X TPOT: " << ratio);
    CHECK(ratio > 1.15);
    CHECK(ratio < 8.0 / 6.0 + 0.01);
}

TEST_CASE("Vera Rubin NVL72 is one 72-GPU NVLink 6 domain with HBM4 and a Vera host (issue 29)") {
    // NVIDIA Vera Rubin NVL72 per GPU: NVFP4 35 PFLOPS dense (training), 288 GB HBM4 at 22 TB/s, NVLink 6
    // 3.6 TB/s bidirectional, ConnectX-9 1.6 Tb/s; Vera: NVLink-C2C 1.8 TB/s, 54 TB LPDDR5X per rack (750 GB per GPU).
    const moe::GpuSpec& g = preset_gpu("vr200");
    CHECK(g.topology == moe::Topology::rack);
    CHECK(g.gpus_per_node == 72);
    CHECK(g.dense_tflops_fp4 == 35000);
    CHECK(g.dense_tflops_fp8 == doctest::Approx(1.2e6 / 72).epsilon(0.001));  // GTC 2025: 1.2 EF FP8 per rack
    CHECK(g.hbm_bandwidth_GBps == 22000);
    CHECK(g.hbm_capacity_GiB == 288);
    CHECK(g.nvlink_bandwidth_GBps == 1800);
    CHECK(g.rdma_bandwidth_GBps == 200);
    CHECK(g.host_bandwidth_GBps == 900);
    CHECK(g.host_memory_bytes == doctest::Approx(54e12 / 72));
    // DeepSeek-V3 at EP 64 inside the rack: the dispatch never leaves NVLink, so it is cheaper than on a B200 node
    // pair ... and the step is valid and finite.
    const moe::Estimate e = moe_test::run(R"({"model":"deepseek-v3","hardware":"vr200",
        "parallel":{"tp":1,"dp":64,"ep":64},"workload":{"phase":"decode","batch":64}})");
    moe_test::check_all_finite(e);
    CHECK(has_warning(e, "has no measured kernel tables: efficiencies are borrowed from h800"));
    const moe::Estimate gb = moe_test::run(R"({"model":"deepseek-v3","hardware":"gb300",
        "parallel":{"tp":1,"dp":64,"ep":64},"workload":{"phase":"decode","batch":64}})");
    const moe::OpRecord* dv = moe_test::find_op(e, "comm.dispatch", moe::Phase::decode);
    const moe::OpRecord* dg = moe_test::find_op(gb, "comm.dispatch", moe::Phase::decode);
    REQUIRE(dv);
    REQUIRE(dg);
    CHECK(dv->time_us < dg->time_us);  // NVLink 6 at twice NVLink 5's bandwidth
    CHECK(e.decode.tpot_ms < gb.decode.tpot_ms);
}

TEST_CASE("GH200 streams offloaded experts over NVLink-C2C; H20 141 GB; B200 / B300 host link (issue 29)") {
    // GH200 datasheet: NVLink-C2C 900 GB/s bidirectional = 450 GB/s host -> GPU; up to 480 GB LPDDR5X.
    const moe::GpuSpec& g = preset_gpu("gh200");
    CHECK(g.host_bandwidth_GBps == 450);
    CHECK(g.host_memory_bytes == 480e9);
    CHECK(g.hbm_capacity_GiB == 96);
    CHECK(g.hbm_bandwidth_GBps == 4000);
    const moe::Estimate e = moe_test::run(R"({"model":"qwen3-30b-a3b","hardware":"gh200","workload":{"phase":"decode","batch":1},
        "runtime":{"expert_offload":{"tier":"host","cached_experts_per_layer":16}}})");
    const moe::OpRecord* s = moe_test::find_op(e, "moe.expert_stream", moe::Phase::decode);
    REQUIRE(s);
    CHECK(s->time_us == doctest::Approx(s->comm_bytes / 450e9 * 1e6).epsilon(0.02));
    // The same offload on an H100 SXM crosses PCIe Gen5 (64 GB/s): about 7x longer.
    const moe::Estimate h = moe_test::run(R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm","workload":{"phase":"decode","batch":1},
        "runtime":{"expert_offload":{"tier":"host","cached_experts_per_layer":16}}})");
    const moe::OpRecord* sh = moe_test::find_op(h, "moe.expert_stream", moe::Phase::decode);
    REQUIRE(sh);
    CHECK(sh->time_us / s->time_us == doctest::Approx(450.0 / 64).epsilon(0.05));

    // The H20 preset is the 96 GB part (HGX H20: 96 GB HBM3 at 4.0 TB/s); its 141 GB version has the same compute
    // and more memory, so a larger batch fits.
    CHECK(preset_gpu("h20").hbm_capacity_GiB == 96);
    const moe::GpuSpec& h141 = preset_gpu("h20-141g");
    CHECK(h141.hbm_capacity_GiB == 141);
    CHECK(h141.dense_tflops_fp8 == preset_gpu("h20").dense_tflops_fp8);
    auto max_batch = [](const char* hw) {
        return moe_test::run(std::string(R"({"model":"qwen3-30b-a3b","hardware":")") + hw +
                             R"(","workload":{"phase":"decode","batch":8,"context_len":8192}})").memory.max_batch;
    };
    CHECK(max_batch("h20-141g") > 1.5 * max_batch("h20"));

    // DGX B200 / B300: PCIe Gen5 hosts (64 GB/s one way), 2 TB of system memory over 8 GPUs.
    for (const char* id : {"b200", "b300"}) {
        INFO(id);
        CHECK(preset_gpu(id).host_bandwidth_GBps == 64);
        CHECK(preset_gpu(id).host_memory_bytes == 250e9);
    }
}
