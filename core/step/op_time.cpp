// op_time.cpp — the one function that turns an operator record into time: a roofline over the measured tables or the analytical fallback, and the record builders for GEMMs and memory passes.
// Part of the step model; core/estimate_detail.h lists the files and what each computes.
#include <cstdint>
#include <cstring>

#include "core/base/set_cache.h"
#include "core/step/estimate_detail.h"

namespace moe::detail {

// The one function that turns a record into time: a roofline max(flops/peak, bytes/bw), divided by the efficiency
// measured for this kernel (same GPU: reproduces the measurement; another GPU: rescaled through the roofline), or
// the analytical fallback's efficiencies when no table covers it.
void time_op(const Ctx& c, OpRecord& op, Dtype compute, const TableHit& hit, double eff_compute, double eff_bw,
             double dequant_elems) {
    const double peak = c.peak_flops[int(compute)];
    const double bytes = op.weight_bytes + op.activation_bytes;
    op.compute_dtype = c.compute_of_dtype[int(compute)];
    const double t_c = op.flops / peak, t_m = bytes / c.bw;
    double t;
    // `bound` names the side that sets the time, after each side's efficiency: an op whose compute at its
    // efficiency outlasts its memory traffic is compute-bound even when its memory roof is the higher one (the M2
    // Max's routed experts, 2.97 ms of compute at a tile-filled efficiency against a 1.8 ms memory roof, were
    // labelled memory-bound).
    op.bound = t_c >= t_m ? Bound::compute : Bound::memory;
    if (hit.found && hit.util > 0) {
        if (hit.compute_only) {  // the kernel's loads overlap its matmuls: memory at the streaming efficiency
            const double tc = t_c / hit.util, tm = t_m / c.cal.hbm_bw_eff;
            t = std::max(tc, tm);
            op.bound = tc >= tm ? Bound::compute : Bound::memory;
            op.efficiency = tc >= tm ? hit.util : c.cal.hbm_bw_eff;
        } else {
            t = std::max(t_c, t_m) / hit.util;
            op.efficiency = hit.util;
        }
        op.source = hit.source;
        op.table = hit.table;
    } else {
        const double tc = t_c / eff_compute, tm = t_m / eff_bw;
        t = std::max(tc, tm);
        op.bound = tc >= tm ? Bound::compute : Bound::memory;
        op.efficiency = op.bound == Bound::compute ? eff_compute : eff_bw;
        op.source = Source::analytical;
    }
    // W4A16: the dequantisation runs on the ALUs beside the tensor cores and overlaps the MMAs and the loads: a third
    // roof, at the issue rate calibration.dequant_flops_per_weight already accounts for (no efficiency on top).
    // (Without elements to dequantise t_dq is 0 or NaN, never above t: skipped, the same result.)
    if (dequant_elems > 0) {
        const double t_dq = dequant_elems * c.cal.dequant_flops_per_weight / c.peak_flops[int(Dtype::bf16)];
        if (t_dq > t) {
            t = t_dq;
            op.bound = Bound::compute;
        }
    }
    op.engine = op.bound == Bound::compute ? Engine::tensor : Engine::hbm;
    op.time_us = std::max(t * 1e6, c.cal.kernel_floor_us);
}

OpRecord make_op(const char* name, Phase ph, double flops, double wbytes, double abytes) {
    OpRecord op;
    op.name = name;
    op.phase = ph;
    op.flops = flops;
    op.weight_bytes = wbytes;
    op.activation_bytes = abytes;
    return op;
}

namespace {
// A GEMM shape's plan: what its record needs besides M, found once per shape while the GemmEnv holds (the format it
// computes in, its table keys, and the first family with a table for it with that family's pick: Tables::gemm_pick),
// and the records of its last few M (a record depends on the shape, the format, M and the GemmEnv alone).
struct GemmPlan {
    Dtype comp = Dtype::bf16;
    int k_key = 0, n_key = 0;
    GemmKernel kernel;
    int family = -1;             // index into Ctx::families of the first family with a table, -1 for none
    Tables::GemmPick pick;
    // The records at the last few M (by M's bits): a shape recurs at a phase's tokens (the prefill chunk, the decode
    // batch, the MTP drafts' batch), and a prefill GEMM at the same chunk is costed once whatever the prompt.
    SetCache<std::uint64_t, OpRecord, 1, 4> results;
};
// A shape: its K and N bits and its weight format.
struct GemmShape {
    std::uint64_t K = 0, N = 0;
    Dtype w = Dtype::bf16;
    bool operator==(const GemmShape& o) const { return K == o.K && N == o.N && w == o.w; }
};
// 16 sets of 4 shapes by the shape's hash (a shape evicted takes its records with it)
thread_local SetCache<GemmShape, GemmPlan, 16, 4> plans;
GemmPlan& gemm_plan(const Ctx& c, double K, double N, Dtype w);
OpRecord gemm_op_uncached(const Ctx& c, const GemmPlan& plan, const char* name, Phase ph, double M, double K, double N, Dtype w);
// the same double, bit for bit (0.0 and -0.0 differ)
inline bool same_bits(double a, double b) {
    std::uint64_t x, y;
    std::memcpy(&x, &a, sizeof x);
    std::memcpy(&y, &b, sizeof y);
    return x == y;
}

// Everything a GEMM's record depends on besides its shape and format (gemm_op_uncached, time_op, Tables::gemm): the
// table set and its calibration, the families looked up in, and the GPU's peaks, bandwidth and fallback efficiencies.
struct GemmEnv {
    std::uint64_t gen = 0;  // Tables::generation(): never 0 for a table set, so a fresh thread matches no estimate
    Calibration cal;
    double tflops_bf16 = 0, tflops_fp8 = 0, tflops_fp4 = 0, compute_eff = 0, hbm_eff = 0, bw = 0;
    const char* families[4] = {nullptr, nullptr, nullptr, nullptr};
    bool own_tables = false;
    GemmEngine engine = GemmEngine::sglang;
    bool fp8_block = false;
};
static_assert(sizeof(Calibration) % sizeof(double) == 0, "Calibration holds doubles only (compared bytewise)");

// The per-thread plans' hash: a shape's bits and format mixed, then scrambled so that the top bits pick the set.
inline std::uint64_t shape_bits(std::uint64_t k, std::uint64_t n, Dtype w) {
    return (k * 0xC2B2AE3D27D4EB4Full) ^ (n * 0x165667B19E3779F9ull) ^ std::uint64_t(w) * 0x27D4EB2F165667C5ull;
}
inline std::uint64_t mix64(std::uint64_t h) {
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 29);
}
}  // namespace

// A dense GEMM (M x K) x (K x N) with weights in `w`. Its record depends on the shape and format and on the estimate's
// GemmEnv alone, never on the name or phase: results are kept per thread across estimates while the GemmEnv stays
// the same (a GEMM of the same shape and format times the same: the attention of the MoE and dense layer groups, of
// windowed and full layers, and every estimate's prefill GEMMs at the same chunk whatever the prompt length).
OpRecord gemm_op(const Ctx& c, const char* name, Phase ph, double M, double K, double N, Dtype w) {
    thread_local GemmEnv env;
    if (!c.gemm_env_checked) {
        // once per estimate: a different GemmEnv empties the plans (compared in place, copied only when it changed)
        const bool same = env.gen == c.t.generation() && std::memcmp(&env.cal, &c.t.calibration, sizeof(Calibration)) == 0 &&
                          same_bits(env.tflops_bf16, c.g.dense_tflops_bf16) && same_bits(env.tflops_fp8, c.g.dense_tflops_fp8) &&
                          same_bits(env.tflops_fp4, c.g.dense_tflops_fp4) &&
                          same_bits(env.compute_eff, c.g.gemm_compute_eff_or(0)) &&
                          same_bits(env.hbm_eff, c.g.gemm_hbm_eff_or(0)) && same_bits(env.bw, c.bw) &&
                          env.families[0] == c.families[0] && env.families[1] == c.families[1] &&
                          env.families[2] == c.families[2] && env.families[3] == c.families[3] &&
                          env.own_tables == c.own_tables && env.engine == c.gemm_engine && env.fp8_block == c.fp8_block;
        if (!same) {
            env.gen = c.t.generation();
            env.cal = c.t.calibration;
            env.tflops_bf16 = c.g.dense_tflops_bf16;
            env.tflops_fp8 = c.g.dense_tflops_fp8;
            env.tflops_fp4 = c.g.dense_tflops_fp4;
            env.compute_eff = c.g.gemm_compute_eff_or(0);
            env.hbm_eff = c.g.gemm_hbm_eff_or(0);
            env.bw = c.bw;
            for (int i = 0; i < 4; ++i) env.families[i] = c.families[i];
            env.own_tables = c.own_tables;
            env.engine = c.gemm_engine;
            env.fp8_block = c.fp8_block;
            plans.clear();
        }
        c.gemm_env_checked = true;
    }
    GemmPlan& plan = gemm_plan(c, K, N, w);
    std::uint64_t m;
    std::memcpy(&m, &M, 8);
    if (const OpRecord* r = plan.results.find(m)) {
        OpRecord op = *r;
        op.name = name;
        op.phase = ph;
        return op;
    }
    const OpRecord op = gemm_op_uncached(c, plan, name, ph, M, K, N, w);
    plan.results.insert(m) = op;
    return op;
}

namespace {

// (valid only after gemm_op's GemmEnv check of this estimate: a changed GemmEnv empties the plans)
GemmPlan& gemm_plan(const Ctx& c, double K, double N, Dtype w) {
    std::uint64_t k, n;
    std::memcpy(&k, &K, 8);
    std::memcpy(&n, &N, 8);
    const GemmShape shape{k, n, w};
    const std::uint64_t hash = mix64(shape_bits(k, n, w));
    if (GemmPlan* p = plans.find(shape, hash)) return *p;
    GemmPlan& p = plans.insert(shape, hash);
    p.results.clear();  // another shape's records
    p.comp = compute_of(c.g, w, c.s.precision.fp4_compute);
    // The tables key shapes by int; wider GEMMs (only absurd configs reach 2^31) look up the widest measured shapes.
    p.k_key = int(std::min(K, 1e9));
    p.n_key = int(std::min(N, 1e9));
    // the kernel: FP8 per tensor or block-scaled as the weights are, NVFP4 (and the other 4-bit formats on FP4
    // tensor cores) NVFP4's, each the engine's own
    p.kernel.format = p.comp == Dtype::fp8 ? (c.fp8_block ? GemmFormat::fp8_block : GemmFormat::fp8)
                      : is_fp4_like(p.comp) ? GemmFormat::nvfp4
                                            : GemmFormat::bf16;
    p.kernel.engine = c.gemm_engine;
    // lookup()'s order: the first family whose tables have the shape (a pick without a table: gemm() finds none)
    p.family = -1;
    for (int i = 0; i < 4 && c.families[i]; ++i) {
        c.t.gemm_pick(c.family_views[i], p.k_key, p.n_key, p.kernel, p.pick);
        if (p.pick.best) {
            p.family = i;
            break;
        }
    }
    return p;
}

OpRecord gemm_op_uncached(const Ctx& c, const GemmPlan& plan, const char* name, Phase ph, double M, double K, double N, Dtype w) {
    const Dtype comp = plan.comp;
    // activations in the compute format: FP8, or NVFP4 with its scales (W4A4); BF16 otherwise
    const double act_b = comp == Dtype::fp8 ? 1.0 : comp == Dtype::nvfp4 ? bytes_with_scales(comp) : 2.0;
    kernels::Cost k = kernels::gemm(M, K, N, act_b, bytes_with_scales(w));
    const double dequant = dequantised(c.g, w) ? K * N * std::ceil(M / kDequantRowsPerTile) : 0.0;
    OpRecord op = make_op(name, ph, k.flops, K * N * bytes_with_scales(w), k.bytes - K * N * bytes_with_scales(w));
    // lookup(c, gemm) with the family found and its pick kept: Tables::gemm(f, M, ...) is gemm_at(its pick, M, ...)
    TableHit hit;
    if (plan.family >= 0) {
        hit = c.t.gemm_at(plan.pick, M, plan.k_key, plan.n_key);
        if (!(plan.family == 0 && c.own_tables)) hit.source = Source::transferred;
    }
    // off the tables: the GPU's own fallback efficiencies where its preset has them (GpuSpec::gemm_efficiency)
    time_op(c, op, comp, hit, c.g.gemm_compute_eff_or(c.cal.gemm_compute_eff), c.g.gemm_hbm_eff_or(c.cal.hbm_bw_eff), dequant);
    return op;
}
}  // namespace

OpRecord memory_op(const Ctx& c, const char* name, Phase ph, double bytes) {
    OpRecord op = make_op(name, ph, 0, 0, bytes);
    time_op(c, op, Dtype::bf16, TableHit{}, 1.0, c.cal.hbm_bw_eff);
    return op;
}

}  // namespace moe::detail
