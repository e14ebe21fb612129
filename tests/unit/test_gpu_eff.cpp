// test_gpu_eff.cpp — each GPU's own GEMM fallback efficiencies (hardware.gemm_efficiency, gemm_hbm_efficiency):
// the fields, the fallback taking them, and the held-out check of scripts/derive_gpu_eff.py against each GPU's own
// measured dense-GEMM table (seed 002 §10: nothing hard-coded that varies by GPU).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/data/kernels.h"
#include "core/moe.h"
#include "test_helpers.h"

namespace {

using moe::GemmEngine;
using moe::GemmFormat;

// One GPU's table as the fallback is tested on it: the preset, the bench_data family and kernel, the (k, n) shapes
// of the table (sorted by k, then n; the script's halves are alternate shapes of this order) and the m it measures.
struct GpuTable {
    const char* preset;
    const char* family;
    moe::GemmKernel kernel;
    std::vector<std::pair<int, int>> shapes;  // (k, n)
};

std::vector<GpuTable> gpu_tables() {
    // AIC's grid (bench_data/README.md, "gemm/<family>/<engine>_cuda_graph.csv"): k x n, every m of GEMM_M
    std::vector<std::pair<int, int>> aic;
    for (int k : {512, 1024, 2048, 4096, 7168, 16384})
        for (int n : {512, 1024, 2048, 4096, 7168, 16384, 65536}) aic.push_back({k, n});
    const moe::GemmKernel deepgemm_any{GemmFormat::fp8_block, GemmEngine::any};
    const moe::GemmKernel deepgemm_sglang{GemmFormat::fp8_block, GemmEngine::sglang};
    return {
        // bench_data/gemm/h800/data.csv (InferSim), its 10 shapes
        {"h800", "h800", deepgemm_any,
         {{1536, 24576}, {2048, 7168}, {7168, 576}, {7168, 1536}, {7168, 4096}, {7168, 36864}, {16384, 512},
          {16384, 7168}, {18432, 7168}, {65536, 128}}},
        // bench_data/gemm/h20/data.csv (InferSim), its 34 shapes
        {"h20", "h20", deepgemm_any,
         {{512, 2048},   {512, 4096},   {512, 7168},   {512, 12288},  {512, 32768},  {864, 9216},   {1024, 4096},
          {1024, 5120},  {1536, 24576}, {1824, 2048},  {2048, 576},   {2048, 864},   {2048, 2048},  {2048, 3648},
          {2048, 5120},  {2048, 6144},  {2048, 12288}, {2560, 2560},  {2560, 6656},  {2560, 7680},  {3328, 2560},
          {3328, 5120},  {4096, 2048},  {4096, 6144},  {4096, 9216},  {4096, 24576}, {5120, 6656},  {5120, 7168},
          {5120, 10240}, {5120, 51200}, {7168, 576},   {7168, 1536},  {12288, 4096}, {25600, 5120}}},
        {"h100-sxm", "h100", deepgemm_sglang, aic},
        {"h200", "h200", deepgemm_sglang, aic},
        {"b200", "b200", deepgemm_sglang, aic},
    };
}

// FP8 inputs and weights, BF16 out (kernels::gemm): the roofline a table's util is relative to
double roof_s(double m, double k, double n, const moe::GpuSpec& g, double ce, double me) {
    const moe::kernels::Cost c = moe::kernels::gemm(m, k, n, 1, 1);
    return std::max(c.flops / (g.dense_tflops_fp8 * 1e12 * ce), c.bytes / (g.hbm_bandwidth_GBps * 1e9 * me));
}

// The measured time of a table point as the model reads it (InferSim's latency less gemm_table_overhead_us; AIC's
// CUDA-graph latency as it is), us; 0 where the table measures no point at m.
double table_point_us(const GpuTable& t, double m, int k, int n) {
    const moe::TableHit h = moe::builtin_tables().gemm(t.family, m, k, n, t.kernel);
    if (!h.found || h.source != moe::Source::measured) return 0;
    return roof_s(m, k, n, moe_test::preset_gpu(t.preset), 1, 1) / h.util * 1e6;
}

// The GEMM fallback (core/step/op_time.cpp time_op, no table): max(floor, compute at ce, memory at me), us.
double fallback_us(const GpuTable& t, double m, int k, int n, double ce, double me) {
    const moe::Calibration& cal = moe::builtin_tables().calibration;
    return std::max(cal.kernel_floor_us, roof_s(m, k, n, moe_test::preset_gpu(t.preset), ce, me) * 1e6);
}

// Median |predicted / measured - 1| of the fallback at (ce, me) over every measured point of the shapes of one half
// (half 0: the even positions in the sorted shape list, 1: the odd ones).
double held_out_median(const GpuTable& t, int half, double ce, double me, int& points) {
    std::vector<double> errs;
    for (std::size_t i = std::size_t(half); i < t.shapes.size(); i += 2)
        for (double m = 8; m <= 131072; m *= 2) {
            const auto [k, n] = t.shapes[i];
            const double meas = table_point_us(t, m, k, n);
            if (meas > 0) errs.push_back(std::fabs(fallback_us(t, m, k, n, ce, me) / meas - 1.0));
        }
    points = int(errs.size());
    if (errs.empty()) return NAN;
    std::sort(errs.begin(), errs.end());
    const std::size_t h = errs.size() / 2;
    return errs.size() % 2 ? errs[h] : 0.5 * (errs[h - 1] + errs[h]);
}

}  // namespace

TEST_CASE("GPU fields gemm_efficiency / gemm_hbm_efficiency / grouped_gemm_efficiency / attn_efficiency: help, range errors naming the field, JSON round trip") {
    // the four fallback fractions a GPU may carry (0: the calibration's), each a fraction in [0, 1]
    const char* keys[] = {"gemm_efficiency", "gemm_hbm_efficiency", "grouped_gemm_efficiency", "attn_efficiency"};
    int described = 0;
    for (const moe::GpuFieldDesc& f : moe::gpu_fields())
        for (const char* key : keys)
            if (std::string(f.key) == key) {
                ++described;
                CHECK(f.min == 0);
                CHECK(f.max == 1);
                CHECK(std::string(f.help).find("0: the calibration") != std::string::npos);
            }
    CHECK(described == 4);
    for (const char* key : keys)
        for (const char* bad_value : {"1.5", "-0.1"}) {
            moe::ParseResult bad = moe::parse_scenario(std::string(R"({"model":"qwen3-8b","hardware":{"base":"h800",")") + key +
                                                           "\":" + bad_value + "}}",
                                                       moe::builtin_catalog());
            REQUIRE_FALSE(bad.ok());
            CHECK(bad.errors[0].path == std::string("hardware.") + key);
        }
    moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-8b","hardware":{"base":"l40s","gemm_efficiency":0.6,
        "gemm_hbm_efficiency":0.8,"grouped_gemm_efficiency":0.65,"attn_efficiency":0.7}})");
    CHECK(s.gpu.gemm_efficiency == 0.6);
    CHECK(s.gpu.gemm_hbm_efficiency == 0.8);
    CHECK(s.gpu.grouped_gemm_efficiency == 0.65);
    CHECK(s.gpu.attn_efficiency == 0.7);
    const nlohmann::json j = moe::gpu_spec_to_json(s.gpu);
    moe::Issues errs;
    const moe::GpuSpec back = moe::parse_gpu_spec(j, "hardware", errs);
    CHECK(errs.empty());
    CHECK(back.gemm_efficiency == 0.6);
    CHECK(back.gemm_hbm_efficiency == 0.8);
    CHECK(back.grouped_gemm_efficiency == 0.65);
    CHECK(back.attn_efficiency == 0.7);
    // a GPU without values of its own keeps the calibration's (the source says so: presets/hardware/README.md)
    CHECK(moe_test::preset_gpu("l40s").gemm_efficiency == 0);
    CHECK(moe_test::preset_gpu("h20-141g").gemm_hbm_efficiency == 0);
}

TEST_CASE("the GEMM fallback takes the GPU's own efficiencies (H800, tables off)") {
    // DeepSeek-V3 on one H800, prefill of 4,096 tokens (attn.o_proj: N=7168, K=16384, compute-bound) and of 64
    // (moe.shared_up: N=4096, K=7168, weight-streaming), every table off: the op is max(FLOPs / (1978.9 TFLOPS x
    // gemm_efficiency 0.737), bytes / (3350 GB/s x gemm_hbm_efficiency 0.747)) (presets/hardware/h800.json).
    moe::Tables none;
    none.calibration = moe::builtin_tables().calibration;
    for (int m : {4096, 64}) {
        const std::string tokens = std::to_string(m);
        const char* name = m == 4096 ? "attn.o_proj" : "moe.shared_up";
        // the op's time and the closed form at (ce, me)
        auto op_us = [&](const std::string& hw, double ce, double me) {
            const moe::Estimate e = moe::estimate(
                moe_test::scenario(R"({"model":"deepseek-v3","hardware":)" + hw + R"(,"parallel":{"tp":1,"dp":1,"ep":1},
                "workload":{"phase":"prefill","prefill_tokens":)" + tokens + R"(,"prompt_len":)" + tokens + R"(},"runtime":{"a2a_backend":"none"}})"),
                none);
            const moe::OpRecord* op = moe_test::find_op(e, name, moe::Phase::prefill, "");
            REQUIRE(op != nullptr);
            CHECK(op->source == moe::Source::analytical);
            const double want = std::max(op->flops / (1978.9e12 * ce), (op->weight_bytes + op->activation_bytes) / (3350e9 * me));
            return std::pair{op->time_us, want * 1e6};
        };
        INFO(name);
        const auto [own, want] = op_us(R"("h800")", 0.737, 0.747);
        CHECK(own == doctest::Approx(want).epsilon(1e-9));
        // 0 = the calibration's gemm_compute_eff 0.5944 / hbm_bw_eff 0.9
        const auto [dflt, want_dflt] = op_us(R"({"base":"h800","gemm_efficiency":0,"gemm_hbm_efficiency":0})", 0.5944, 0.9);
        CHECK(dflt == doctest::Approx(want_dflt).epsilon(1e-9));
        CHECK(dflt != doctest::Approx(own));
    }
}

TEST_CASE("held out: each GPU's own GEMM fallback efficiencies against the calibration's, on the other half of its table") {
    // scripts/derive_gpu_eff.py: each table's (k, n) shapes sorted and split alternately into halves A (even
    // positions) and B; the values derived on one half, the fallback tested on every measured point of the other.
    // Cited points (the measured time the model reads; AIC rows in /work/shared/anchors/aic/perf, 1-based lines):
    //   h800 bench_data/gemm/h800/data.csv line 2: m=16, k=7168, n=1536, 16.443 us - 3.9752 us overhead = 12.468 us
    //   h100_sxm/sglang-0.5.14/gemm/gemm_perf.csv.gz line 64759: deepgemm fp8_block m=64, n=4096, k=7168, 15.890 us
    //     and line 51351: m=16384, n=7168, k=16384, 3,202.16 us (1,201.7 TFLOPS, 0.607 of 1,978.9)
    //   h200_sxm/... line 64758: m=64, n=4096, k=7168, 13.492 us; line 51336: m=16384, 3,233.24 us
    //   b200_sxm/... line 54128: m=64, n=4096, k=7168, 27.461 us; line 102721: m=16384, 1,467.35 us
    const std::vector<GpuTable> tables = gpu_tables();
    CHECK(table_point_us(tables[0], 16, 7168, 1536) == doctest::Approx(12.468).epsilon(1e-3));
    CHECK(table_point_us(tables[2], 64, 7168, 4096) == doctest::Approx(15.890).epsilon(1e-3));
    CHECK(table_point_us(tables[2], 16384, 16384, 7168) == doctest::Approx(3202.16).epsilon(1e-3));
    CHECK(table_point_us(tables[3], 64, 7168, 4096) == doctest::Approx(13.492).epsilon(1e-3));
    CHECK(table_point_us(tables[3], 16384, 16384, 7168) == doctest::Approx(3233.24).epsilon(1e-3));
    CHECK(table_point_us(tables[4], 64, 7168, 4096) == doctest::Approx(27.461).epsilon(1e-3));
    CHECK(table_point_us(tables[4], 16384, 16384, 7168) == doctest::Approx(1467.35).epsilon(1e-3));

    // per GPU: the preset's values (the script on the whole table), the values the script derives on half A and
    // on half B, and the held-out median |error| it prints (own, global) for A -> B and B -> A
    struct GpuWant {
        double ce, me;                  // preset (whole table)
        double ce_a, me_a, ce_b, me_b;  // derived on half A, on half B
        int points_b, points_a;         // measured points of half B, of half A
        double own_b, global_b, own_a, global_a;
    };
    const GpuWant wants[] = {
        {0.737, 0.747, 0.726, 0.724, 0.737, 0.793, 55, 55, 0.093, 0.201, 0.161, 0.227},     // h800
        {0.932, 0.478, 0.932, 0.479, 0.932, 0.475, 187, 193, 0.060, 0.457, 0.066, 0.466},   // h20
        {0.557, 0.681, 0.563, 0.659, 0.552, 0.715, 210, 210, 0.319, 0.376, 0.337, 0.372},   // h100-sxm
        {0.541, 0.592, 0.530, 0.588, 0.554, 0.646, 210, 210, 0.342, 0.407, 0.342, 0.395},   // h200
        {0.514, 0.246, 0.508, 0.248, 0.519, 0.168, 210, 210, 0.498, 0.782, 0.506, 0.766},   // b200
    };
    const moe::Calibration& cal = moe::builtin_tables().calibration;  // gemm_compute_eff 0.5944, hbm_bw_eff 0.9
    for (std::size_t i = 0; i < tables.size(); ++i) {
        const GpuTable& t = tables[i];
        const GpuWant& w = wants[i];
        INFO(std::string(t.preset));
        const moe::GpuSpec& g = moe_test::preset_gpu(t.preset);
        CHECK(g.gemm_efficiency == w.ce);
        CHECK(g.gemm_hbm_efficiency == w.me);
        int nb = 0, na = 0, nx = 0;
        const double own_b = held_out_median(t, 1, w.ce_a, w.me_a, nb);
        const double own_a = held_out_median(t, 0, w.ce_b, w.me_b, na);
        const double global_b = held_out_median(t, 1, cal.gemm_compute_eff, cal.hbm_bw_eff, nx);
        const double global_a = held_out_median(t, 0, cal.gemm_compute_eff, cal.hbm_bw_eff, nx);
        MESSAGE(std::string(t.preset) << ": held out A->B " << own_b << " own, " << global_b << " global; B->A " << own_a << " own, "
                         << global_a << " global (" << nb << " / " << na << " points)");
        moe_test::check_held_out(w, nb, na, own_b, global_b, own_a, global_a);
        // the GPU's own values, fitted on the other half, beat the one global pair on every GPU, both ways
        CHECK(own_b < global_b);
        CHECK(own_a < global_a);
    }
}
