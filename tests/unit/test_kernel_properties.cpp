// test_kernel_properties.cpp — properties every kernel time must have, over every model preset x GPU preset x EP
// 1..64 x phase (issue 25): no operator faster than its GPU's peak FLOP/s or HBM bandwidth; a compute-bound expert
// GEMM with >= 4,096 rows per expert reaches >= 30% of peak; at fixed tokens per GPU, the compute part of a step
// does not grow with EP when the all-to-all delivers each rank only its own tokens (DeepEP). These are the checks
// that would have caught the MoE-table misreading (EP32 routed experts at 2% of the roofline, 32x too slow).
#include "test_helpers.h"

#include <algorithm>
#include <string>
#include <vector>

using moe::Dtype;
using moe::Phase;
using namespace moe_test;

namespace {

// GPUs behind an NVLink switch or in a rack (the CUDA kernels the tables measure); meshes and unified-memory chips
// have their own tests (test_topology.cpp).
std::vector<std::string> switch_gpus() {
    std::vector<std::string> out;
    for (const moe::CatalogEntry& h : moe::builtin_catalog().hardware()) {
        const moe::GpuSpec* g = moe::builtin_catalog().gpu(h.id);
        if (g && (g->topology == moe::Topology::switch_ || g->topology == moe::Topology::rack)) out.push_back(h.id);
    }
    return out;
}

std::vector<std::string> moe_models() {
    std::vector<std::string> out;
    for (const moe::CatalogEntry& m : moe::builtin_catalog().models()) {
        const moe::ModelSpec* s = moe::builtin_catalog().model(m.id);
        if (s && s->is_moe()) out.push_back(m.id);
    }
    return out;
}

// A scenario of one phase: EP over attention-DP ranks (tp 1), `tokens` per GPU (a prefill chunk or a decode batch).
bool make(const std::string& model, const std::string& gpu, int ep, Phase ph, double tokens, const char* backend,
          moe::Scenario& out) {
    const std::string json = std::string(R"({"model":")") + model + R"(","hardware":")" + gpu +
                             R"(","parallel":{"tp":1,"dp":)" + std::to_string(ep) + R"(,"ep":)" + std::to_string(ep) +
                             R"(},"workload":{"phase":")" + (ph == Phase::prefill ? "prefill" : "decode") +
                             R"(","batch":)" + std::to_string(int(ph == Phase::decode ? tokens : 1)) +
                             R"(,"prefill_tokens":)" + std::to_string(int(ph == Phase::prefill ? tokens : 4096)) +
                             R"(,"prompt_len":4096,"context_len":4096},"runtime":{"a2a_backend":")" + backend +
                             R"(","two_batch_overlap":false}})";
    moe::ParseResult r = moe::parse_scenario(json, moe::builtin_catalog());
    if (!r.ok()) return false;  // EP does not divide the experts, a format the GPU lacks, ...
    out = r.scenario;
    return true;
}

}  // namespace

TEST_CASE("kernel properties: no operator above its GPU's peak FLOP/s or HBM bandwidth (every MoE model x GPU x EP x phase)") {
    const std::vector<std::string> gpus = switch_gpus(), models = moe_models();
    REQUIRE(gpus.size() >= 10);
    REQUIRE(models.size() >= 10);
    int estimates = 0, ops = 0;
    for (const std::string& gpu : gpus)
        for (const std::string& model : models)
            for (int ep = 1; ep <= 64; ep *= 2)
                for (Phase ph : {Phase::prefill, Phase::decode}) {
                    moe::Scenario s;
                    const char* be = ep == 1 ? "auto" : ph == Phase::prefill ? "deepep_normal" : "deepep_low_latency";
                    if (!make(model, gpu, ep, ph, ph == Phase::prefill ? 8192 : 64, be, s)) continue;
                    const moe::Estimate e = moe::estimate(s, moe::builtin_tables());
                    if (!e.ok) continue;
                    ++estimates;
                    const moe::GpuSpec& g = s.gpu;
                    for (const moe::OpRecord& o : e.ops) {
                        if (!(o.time_us > 0) || (o.engine != moe::Engine::tensor && o.engine != moe::Engine::hbm)) continue;
                        ++ops;
                        const double t = o.time_us * 1e-6;
                        INFO(model << " on " << gpu << " ep" << ep << (ph == Phase::prefill ? " prefill " : " decode ")
                                   << std::string(o.name) << " " << o.time_us << " us from " << std::string(o.table));
                        CHECK(o.flops / t <= g.peak_tflops(o.compute_dtype) * 1e12 * 1.0001);
                        CHECK((o.weight_bytes + o.activation_bytes) / t <= g.hbm_bandwidth_GBps * 1e9 * 1.0001);
                    }
                }
    MESSAGE(estimates << " estimates, " << ops << " operators checked");
    CHECK(estimates > 1000);
}

TEST_CASE("kernel properties: a compute-bound expert GEMM with >= 4,096 rows per expert runs at >= 30% of peak") {
    // DeepSeek-V3 (and the other large MoE presets) prefill at 16K tokens per GPU: rows per expert = tokens x top-k /
    // experts x ... per GPU = 16384 x 8 / 256 x 32 / 32 = 512 at EP1, i.e. every local expert sees 16384 x 8 / 256 =
    // 512 rows per GPU's tokens times ep / ep: the rows per expert are tokens x dp x top-k / E.
    int checked = 0;
    for (const std::string& gpu : switch_gpus())
        for (const std::string& model : moe_models())
            for (int ep = 1; ep <= 64; ep *= 2) {
                const moe::ModelSpec* m = moe::builtin_catalog().model(model);
                const double tokens = 16384;
                const double rows = tokens * ep * m->top_k / m->num_experts;
                if (rows < 4096) continue;
                moe::Scenario s;
                if (!make(model, gpu, ep, Phase::prefill, tokens, ep == 1 ? "auto" : "deepep_normal", s)) continue;
                const moe::Estimate e = moe::estimate(s, moe::builtin_tables());
                if (!e.ok) continue;
                const moe::OpRecord* o = find_op(e, "moe.routed_experts", Phase::prefill);
                if (!o || o->bound != moe::Bound::compute) continue;
                const double achieved = o->flops / (o->time_us * 1e-6) / (s.gpu.peak_tflops(o->compute_dtype) * 1e12);
                // Measured below the bar, kept as measured (bench_data/README.md): SGLang's fused Triton MoE for
                // Mixtral's 8 x 14336 BF16 experts (AIC h100 moe_perf, 16384 tokens: 57.62 ms = 0.20 of 989 TFLOPS;
                // b200 40.0 ms = 0.13), and SGLang 0.5.10's DeepEP MoE on B200 past its last measured column (EP32 at
                // 524288: 0.30-0.35 of the 4.5 PFLOPS FP8 peak, extrapolated linearly to EP64's 1,048,576).
                const std::string table = o->table;
                if (table.find("sglang.csv") != std::string::npos && model == "mixtral-8x7b") {
                    CHECK(achieved >= 0.10);
                    continue;
                }
                if (table.find("b200/sglang_deepep_prefill.csv") != std::string::npos && ep == 64) {
                    CHECK(achieved >= 0.25);
                    continue;
                }
                ++checked;
                INFO(model << " on " << gpu << " ep" << ep << ": " << rows << " rows per expert, " << o->time_us
                           << " us, " << achieved << " of peak, from " << std::string(o->table));
                CHECK(achieved >= 0.30);
            }
    MESSAGE(checked << " compute-bound expert GEMMs checked");
    CHECK(checked > 20);
}

TEST_CASE("kernel properties: at fixed tokens per GPU the compute of a step does not grow with EP (DeepEP)") {
    // With DeepEP a rank receives its own token-expert pairs only: the same pairs per GPU at any EP (balanced
    // routing), fewer local experts to read. What may grow, physically, is bounded: the rows per expert double with
    // each doubling of EP and are padded to the kernel's M tile (Marlin's W4A16 MoE picks 8..64-row blocks by its
    // rule, which reads the received tokens x top_k over the local experts: Kimi-K2.5 decode at 128 per GPU goes from
    // 43 rows in one 64-row block at EP16 to 85 rows in two at EP32), and a DeepEP rank receives more distinct token
    // rows as a token's picks spread over more ranks (tokens x (1 - (1 - 1/ep)^top_k) x ep rows, 3h bytes each: at most ~2% of the MoE layer per doubling).
    // The misreading this guards against grew the routed experts 32x from EP1 to EP32; the bar is 10% per doubling.
    int chains = 0;
    double worst = 0;
    for (const char* gpu : {"h100-sxm", "h200", "b200", "h800", "h20", "gb200"})
        for (const std::string& model : moe_models())
            for (Phase ph : {Phase::prefill, Phase::decode}) {
                double prev = 0;
                int prev_ep = 0;
                for (int ep = 2; ep <= 64; ep *= 2) {
                    moe::Scenario s;
                    if (!make(model, gpu, ep, ph, ph == Phase::prefill ? 16384 : 128,
                              ph == Phase::prefill ? "deepep_normal" : "deepep_low_latency", s))
                        continue;
                    const moe::Estimate e = moe::estimate(s, moe::builtin_tables());
                    if (!e.ok) continue;
                    const moe::PhaseResult& p = ph == Phase::prefill ? e.prefill : e.decode;
                    // W4A16 experts (Marlin, dequantised in the kernel) pad each expert's rows to a 8..64-row block
                    // chosen by its rule: one doubling can move from one snug block to two padded ones (e.g. 43 rows
                    // in 48 -> 85 rows in 128), at most 128/85 x 43/48 = 1.35x on the experts' tensor work.
                    // (any 4-bit expert format the GPU runs as W4A16: int4, and MXFP4 / NVFP4 dequantised on Hopper,
                    // which ops_ffn.cpp tiles the same way, e.g. Kimi-K3's MXFP4 experts on H20)
                    const moe::OpRecord* rx = find_op(e, "moe.routed_experts", ph);
                    const bool four_bit = e.experts_dtype == Dtype::int4 || e.experts_dtype == Dtype::mxfp4 ||
                                          e.experts_dtype == Dtype::nvfp4;
                    const bool marlin = four_bit && rx && rx->compute_dtype == Dtype::bf16;
                    if (prev > 0) {
                        INFO(model << " on " << std::string(gpu) << (ph == Phase::prefill ? " prefill" : " decode") << ": ep"
                                   << prev_ep << " " << prev << " ms -> ep" << ep << " " << p.compute_ms << " ms");
                        CHECK(p.compute_ms <= prev * (marlin ? 1.35 : 1.10));
                        if (!marlin) worst = std::max(worst, p.compute_ms / prev);
                        ++chains;
                    }
                    prev = p.compute_ms;
                    prev_ep = ep;
                }
            }
    MESSAGE(chains << " EP doublings checked; largest growth of the step's compute per doubling (W4A16 aside): x" << worst);
    CHECK(chains > 50);
}
