// fit.cpp — coordinate-descent fit of the calibration constants and leave-one-out (see fit.h).
#include "fit.h"

#include <algorithm>
#include <cmath>

namespace val {

moe::Tables fallback_tables(const moe::Calibration& cal) {
    moe::Tables t;
    t.calibration = cal;
    return t;
}

moe::Tables tables_with(const moe::Calibration& cal) {
    moe::Tables t = moe::builtin_tables();
    t.calibration = cal;
    return t;
}

namespace {

struct GroupDef {
    FitGroup group;
    bool uses_tables;
    bool shape_only;  // fit the shape (the spread of log errors about their mean), not the level
    std::vector<FitParam> params;
    const char* cases_text;
};

std::vector<GroupDef> group_defs() {
    using C = moe::Calibration;
    return {
        {FitGroup::fallback_gemm, false, false,
         {{"gemm_compute_eff", &C::gemm_compute_eff, 0.3, 1.0, "a fraction of peak"}},
         "DeepGEMM dense FP8 GEMM rows (M=64/128 decode, M=4096 prefill 2025-04-09; 18 shapes) with the analytical fallback only, "
         "as the default of a GPU without its own hardware.gemm_efficiency (H800's own pair cleared)"},
        {FitGroup::fallback_grouped, false, false,
         {{"grouped_compute_eff", &C::grouped_compute_eff, 0.3, 1.0, "a fraction of peak"}},
         "DeepGEMM grouped FP8 GEMM rows (2 contiguous + 3 masked layouts, up+down combined) with the analytical fallback only"},
        {FitGroup::fallback_attn, false, false,
         {{"attn_prefill_compute_eff", &C::attn_prefill_compute_eff, 0.3, 1.0, "a fraction of peak"}},
         "FlashAttention-3 causal forward rows (18, UNVERIFIED chart reads) and FlashMLA's compute-bound peak, analytical fallback only"},
        {FitGroup::comm_ll, true, false,
         {{"nvlink_ll_eff", &C::nvlink_ll_eff, 0.3, 1.0, "a fraction of the link"},
          {"rdma_ll_eff", &C::rdma_ll_eff, 0.3, 1.0, "a fraction of the link"},
          {"ll_latency_us", &C::ll_latency_us, 0.0, 100.0, "below the smallest published latency, 77 us"}},
         "DeepEP low-latency dispatch/combine latency rows, EP8..256 (12, V1 final)"},
        {FitGroup::comm_normal, true, false,
         {{"nvlink_normal_eff", &C::nvlink_normal_eff, 0.3, 1.0, "a fraction of the link"},
          {"rdma_normal_eff", &C::rdma_normal_eff, 0.3, 1.0, "a fraction of the link"}},
         "DeepEP normal-kernel bottleneck bandwidth rows, EP8 intranode and EP16/32/64 internode (8, V1 final)"},
        {FitGroup::gemm_tables, true, false,
         {{"gemm_table_overhead_us", &C::gemm_table_overhead_us, 0.0, 12.0, "below the shortest table latency, ~13 us"},
          {"gemm_tile_fixed_iters", &C::gemm_tile_fixed_iters, 0.0, 6.0, "a tile's fixed cost, at most a few k-iterations"}},
         "DeepGEMM dense FP8 GEMM rows (18: M=64/128/4096) against the bench_data/gemm/h800 tables: the per-call overhead "
         "in the table latencies (identified by the small-M shapes) and the per-tile fixed cost that moves a measured "
         "shape to an unmeasured one (identified by N=2112 and N=32768/K=512)"},
        {FitGroup::attn_tables, true, true,
         {{"attn_tile_fixed_iters", &C::attn_tile_fixed_iters, 0.0, 6.0, "a CTA's fixed cost, at most a few KV-block iterations"},
          {"attn_softmax_exposed", &C::attn_softmax_exposed, 0.0, 4.0, "exp plus a few FP32 ops per score, in exp units"}},
         "FlashAttention-3 causal forward rows (18, UNVERIFIED chart reads) against the bench_data/mha/prefill/h100 tables, "
         "fitting the shape across sequence length and head dim, not the level (the tables' 2025 build runs ~20% above "
         "the chart's 2024 one at long sequences; the level is the tables')"},
        {FitGroup::e2e, true, false,
         {{"prefill_overhead_ms", &C::prefill_overhead_ms, 0.0, 30.0, "at most InferSim's fixed 30 ms per TTFT"},
          {"decode_overhead_ms", &C::decode_overhead_ms, 0.0, 5.0, "at most InferSim's fixed 5 ms per TPOT"},
          {"hbm_bw_eff", &C::hbm_bw_eff, 0.5, 0.9, "at most FlashMLA's 3000 of 3350 GB/s, the fastest HBM streaming in the public set"}},
         "InferSim README measured tokens/s/GPU (6: DeepSeek-V3 H800 prefill/decode, Qwen3-30B-A3B and Qwen3-8B H20 prefill/decode)"},
    };
}

struct Objective {
    const std::vector<Case>& cases;
    const std::vector<int>& idx;  // cases in the objective
    bool uses_tables;
    mutable moe::Tables tables;   // calibration replaced per evaluation
    bool shape_only = false;

    double operator()(const moe::Calibration& cal) const {
        tables.calibration = cal;
        double s = 0, sum = 0;
        for (int i : idx) {
            const double p = predict(cases[size_t(i)], tables);
            if (!(p > 0) || !std::isfinite(p)) return 1e30;
            const double l = std::log(p / cases[size_t(i)].measured);
            s += l * l;
            sum += l;
        }
        // shape only: sum of squared deviations from the mean log error
        if (shape_only && !idx.empty()) s -= sum * sum / double(idx.size());
        return s;
    }
};

// Coordinate descent: per constant, a scan of the whole bound range then golden-section refinement around the
// best scan point; sweeps until no constant moves the objective.
void descend(const Objective& f, moe::Calibration& cal, const std::vector<FitParam>& params) {
    double best = f(cal);
    for (int sweep = 0; sweep < 40; ++sweep) {
        const double start = best;
        for (const FitParam& p : params) {
            double& x = cal.*p.field;
            const int n = 16;
            double bx = x, bv = best;
            for (int i = 0; i <= n; ++i) {
                x = p.lo + (p.hi - p.lo) * i / n;
                const double v = f(cal);
                if (v < bv) { bv = v; bx = x; }
            }
            double a = std::max(p.lo, bx - (p.hi - p.lo) / n), b = std::min(p.hi, bx + (p.hi - p.lo) / n);
            const double g = 0.5 * (std::sqrt(5.0) - 1.0);
            double c = b - g * (b - a), d = a + g * (b - a);
            x = c;
            double fc = f(cal);
            x = d;
            double fd = f(cal);
            for (int it = 0; it < 40 && b - a > 1e-6 * (p.hi - p.lo); ++it) {
                if (fc < fd) { b = d; d = c; fd = fc; c = b - g * (b - a); x = c; fc = f(cal); }
                else { a = c; c = d; fc = fd; d = a + g * (b - a); x = d; fd = f(cal); }
            }
            const double xm = fc < fd ? c : d, vm = std::min(fc, fd);
            if (vm < bv) { bv = vm; bx = xm; }
            x = bx;
            best = bv;
        }
        if (start - best <= 1e-12 * std::max(1.0, start)) break;
    }
}

}  // namespace

FitReport fit_all(const std::vector<Case>& all_cases, const moe::Calibration& start, bool with_loo) {
    FitReport rep;
    rep.fitted = start;
    // The fallback groups fit the calibration's defaults, the efficiencies of a GPU without values of its own: their
    // cases run with the preset's own fallback efficiencies (hardware.gemm_efficiency, gemm_hbm_efficiency: H800's,
    // from its InferSim table, scripts/derive_gpu_eff.py; grouped_gemm_efficiency, attn_efficiency:
    // scripts/derive_gpu_eff_fallbacks.py) cleared, as if the GPU had none.
    std::vector<Case> as_default = all_cases;
    for (Case& c : as_default) {
        moe::GpuSpec& g = c.scenario.gpu;
        g.gemm_efficiency = g.gemm_hbm_efficiency = g.grouped_gemm_efficiency = g.attn_efficiency = 0;
    }
    for (const GroupDef& gd : group_defs()) {
        const std::vector<Case>& cases = gd.uses_tables ? all_cases : as_default;
        FitGroupReport g;
        g.group = gd.group;
        g.cases_text = gd.cases_text;
        g.params = gd.params;
        g.uses_tables = gd.uses_tables;
        for (size_t i = 0; i < cases.size(); ++i)
            if ((cases[i].fit == gd.group || cases[i].fit2 == gd.group) && !cases[i].reference_model && (!gd.uses_tables || cases[i].model_gap.empty()))
                g.case_index.push_back(int(i));
        for (FitParam& p : g.params) p.before = rep.fitted.*p.field;
        moe::Tables base = gd.uses_tables ? tables_with(rep.fitted) : fallback_tables(rep.fitted);
        Objective f{cases, g.case_index, gd.uses_tables, base, gd.shape_only};
        moe::Calibration cal = rep.fitted;
        descend(f, cal, g.params);
        for (FitParam& p : g.params) p.after = cal.*p.field;
        moe::Tables t = gd.uses_tables ? tables_with(cal) : fallback_tables(cal);
        for (int i : g.case_index) g.fit_error.push_back(predict(cases[size_t(i)], t) / cases[size_t(i)].measured - 1.0);
        if (with_loo) {
            for (size_t k = 0; k < g.case_index.size(); ++k) {
                std::vector<int> rest;
                for (size_t j = 0; j < g.case_index.size(); ++j)
                    if (j != k) rest.push_back(g.case_index[j]);
                Objective fk{cases, rest, gd.uses_tables, base, gd.shape_only};
                moe::Calibration ck = cal;
                descend(fk, ck, g.params);
                moe::Tables tk = gd.uses_tables ? tables_with(ck) : fallback_tables(ck);
                const Case& c = cases[size_t(g.case_index[k])];
                g.loo_error.push_back(predict(c, tk) / c.measured - 1.0);
                std::vector<double> vals;
                for (const FitParam& p : g.params) vals.push_back(ck.*p.field);
                g.loo_values.push_back(vals);
            }
        }
        rep.fitted = cal;
        rep.groups.push_back(std::move(g));
    }
    return rep;
}

}  // namespace val
