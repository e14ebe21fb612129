// Tile and roofline-side models that move a measured kernel to a shape the tables lack: DeepGEMM's tiling for dense
// GEMMs and the compute/HBM split of an MLA decode table point.
#include "test_helpers.h"
#include "core/data/kernels.h"

using moe::Phase;
using moe_test::find_op;
using moe_test::run;

TEST_CASE("DeepGEMM tiling: k-iterations per tile and the last wave") {
    using moe::kernels::gemm_tile_efficiency;
    // memory-bound: only the pipeline fill counts; K=512 is 4 k-iterations of 128, so 4 / (4 + 1.9)
    CHECK(gemm_tile_efficiency(4096, 32768, 512, 1.9, 132, false) == doctest::Approx(4.0 / 5.9));
    // compute-bound, M=4096 N=7168 K=7168: BLOCK_M 128 gives 32 row blocks; BLOCK_N 112 gives 64 column blocks,
    // 2048 tiles = 15.5 waves -> 16; BLOCK_N 120 -> 60 x 32 = 1920 tiles = 14.5 -> 15 waves; 128 -> 56 x 32 = 1792 =
    // 13.6 -> 14 waves (last wave 76 of 132). Useful tile-iterations 4096*7168*7168/(128*128*128) = 100352 against
    // 132 SMs x 14 waves x (56 + 1.9) iterations.
    CHECK(gemm_tile_efficiency(4096, 7168, 7168, 1.9, 132, true) == doctest::Approx(100352.0 / (132 * 14 * 57.9)));
    // more k-iterations per tile amortise the fixed cost
    CHECK(gemm_tile_efficiency(64, 7168, 16384, 1.9, 132, false) > gemm_tile_efficiency(64, 7168, 2048, 1.9, 132, false));
}

TEST_CASE("MLA decode on another head count: the compute and HBM sides of the table point") {
    // The H800 MLA decode table is 128 heads: at 128 heads per GPU (tp 1) the table is read as measured; at 16 heads
    // per GPU (tp 8) the kernel streams the latent cache at the best fraction the H800 decode-attention tables reach
    // (0.96 of 3350 GB/s), which FlashMLA's README puts at 'up to 3000 GB/s' (FlashMLA README @9241ae3e).
    auto core = [](int tp) {
        moe::Estimate e = run(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"tp":)" + std::to_string(tp) +
                              R"(,"dp":)" + std::to_string(8 / tp) + R"(,"ep":8},"workload":{"phase":"decode","batch":128,"context_len":8192},)"
                              R"("runtime":{"a2a_backend":"deepep_low_latency"}})");
        const moe::OpRecord* op = find_op(e, "attn.core", Phase::decode, "");
        REQUIRE(op);
        return *op;
    };
    const moe::OpRecord full = core(1), sharded = core(8);
    CHECK(full.source == moe::Source::measured);  // batch 128, KV 8192 is a grid point
    CHECK(sharded.source == moe::Source::transferred);
    CHECK(sharded.bound == moe::Bound::memory);
    const double GBps = sharded.activation_bytes / (sharded.time_us * 1e-6) / 1e9;
    CHECK(GBps > 2700);
    CHECK(GBps < 3350);
}

// Review findings: the masked tables' uniform-load conversion must not make small batches slower than larger ones
// (the converted rows read every local expert), and the MLA split must use the query's KV bytes.
TEST_CASE("masked grouped GEMM: expert time grows with the batch") {
    double last = 0;
    for (int b : {1, 2, 4, 8, 12, 16, 20, 24, 32, 48, 64, 96, 128}) {
        moe::Estimate e = run(R"({"model":"qwen3-30b-a3b","hardware":"h20","workload":{"phase":"decode","batch":)" +
                              std::to_string(b) + R"(},"runtime":{"expert_layout":"masked"}})");
        const moe::OpRecord* op = find_op(e, "moe.routed_experts", Phase::decode);
        REQUIRE(op);
        INFO("batch " << b);
        CHECK(op->time_us >= last * 0.999);
        last = op->time_us;
    }
}

TEST_CASE("MLA decode with an FP8 cache: fewer heads are not faster per FLOP") {
    auto tflops = [](int tp) {
        moe::Estimate e = run(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"tp":)" + std::to_string(tp) +
                              R"(,"dp":)" + std::to_string(8 / tp) + R"(,"ep":8},"workload":{"phase":"decode","batch":64,)"
                              R"("context_len":4096},"precision":{"kv_cache":"fp8"},"runtime":{"a2a_backend":"deepep_low_latency"}})");
        const moe::OpRecord* op = find_op(e, "attn.core", Phase::decode, "");
        REQUIRE(op);
        CHECK(op->source == moe::Source::transferred);  // the H800 MLA table has a BF16 cache only
        return op->flops / (op->time_us * 1e-6) / 1e12;
    };
    const double t1 = tflops(1), t2 = tflops(2);
    CHECK(t2 <= t1 * 1.001);
    CHECK(t1 < 660);  // FlashMLA's compute-bound peak on H800 (FlashMLA README @9241ae3e)
}

TEST_CASE("tile fill: expected M tiles of binomial rows, against the exact sum") {
    using moe::kernels::expected_tiles_even;
    using moe::kernels::expected_tiles_random;
    // Reference values: sum over x of Bin(N, p)(x) * ceil(x / tile), every x from 0 to N (Python, math.lgamma).
    CHECK(expected_tiles_random(136, 0.125, 32) == doctest::Approx(1.000123).epsilon(1e-5));   // mean 17
    CHECK(expected_tiles_random(256, 0.125, 32) == doctest::Approx(1.453067).epsilon(1e-5));   // mean 32
    CHECK(expected_tiles_random(304, 0.125, 32) == doctest::Approx(1.829559).epsilon(1e-4));   // mean 38
    CHECK(expected_tiles_random(2350, 0.125, 32) == doctest::Approx(9.665664).epsilon(1e-4));  // normal law
    CHECK(expected_tiles_random(16384, 0.0625, 128) == doctest::Approx(8.491695).epsilon(1e-3));
    CHECK(expected_tiles_random(32, 1.0 / 64, 128) == doctest::Approx(0.395859).epsilon(1e-5));  // P(X >= 1)
    // one-row tiles: exactly the mean, whatever the spread
    CHECK(expected_tiles_random(64, 0.25, 1) == doctest::Approx(16.0));
    // every token picks the expert: no spread
    CHECK(expected_tiles_random(64, 1.0, 32) == doctest::Approx(2.0));
    // even rows: one tile up to 32, two from 33, linear between whole counts
    CHECK(expected_tiles_even(32.0, 32) == doctest::Approx(1.0));
    CHECK(expected_tiles_even(32.0 + 1e-12, 32) == doctest::Approx(1.0));
    CHECK(expected_tiles_even(33.0, 32) == doctest::Approx(2.0));
    CHECK(expected_tiles_even(32.5, 32) == doctest::Approx(1.5));
    CHECK(expected_tiles_even(8.00001, 1) == doctest::Approx(8.00001));
}
