// fit.h — fits the calibration constants (presets/calibration.json) on the public cases only, group by group,
// and measures overfitting by leave-one-out.
//
//   val::FitReport r = val::fit_all(cases, moe::builtin_tables().calibration);
//   r.fitted (the new Calibration), r.groups[i].params (name, before, after, bounds), r.groups[i].loo (per case)
//
// Each group varies a few constants against its own cases, minimising sum(log(predicted / measured)^2) by
// coordinate descent (a coarse scan then golden-section refinement per constant, inside physical bounds):
//   fallback: dense GEMM    gemm_compute_eff, hbm_bw_eff    DeepGEMM dense rows, analytical fallback only (no tables)
//   fallback: grouped GEMM  grouped_compute_eff             DeepGEMM grouped rows, no tables
//   fallback: attention     attn_prefill_compute_eff        FA3 causal rows + FlashMLA compute row, no tables
//   comm: DeepEP LL         nvlink_ll_eff, rdma_ll_eff, ll_latency_us          DeepEP low-latency latency rows
//   comm: DeepEP normal     nvlink_normal_eff, rdma_normal_eff               DeepEP normal bandwidth rows
//   end to end              prefill_overhead_ms, decode_overhead_ms          InferSim measured rows (with tables)
// Cases marked with a model gap are left out of the fits that use the tables (the gaps are in that path; the
// fallback groups see every row of their kernel). Groups run in that order, each starting from the previous
// groups' fitted values. Leave-one-out: refit the group
// without the case (other groups fixed), predict the case.
#pragma once
#include <string>
#include <vector>

#include "cases.h"

namespace val {

struct FitParam {
    const char* name;
    double moe::Calibration::*field;
    double lo, hi;            // physical bounds
    const char* bounds_why;   // where the bounds come from
    double before = 0, after = 0;
};

struct FitGroupReport {
    FitGroup group;
    std::string cases_text;               // which rows it was fitted on
    std::vector<FitParam> params;
    std::vector<int> case_index;          // into the cases vector
    std::vector<double> fit_error;        // relative error of each case at the full fit
    std::vector<double> loo_error;        // relative error of each case predicted by the fit without it
    std::vector<std::vector<double>> loo_values;  // per case: the constants refitted without it
    bool uses_tables = true;              // false: evaluated with the analytical fallback only
};

struct FitReport {
    moe::Calibration fitted;
    std::vector<FitGroupReport> groups;
};

// `with_loo` false skips the leave-one-out refits (faster; used by the reproducibility test).
FitReport fit_all(const std::vector<Case>& cases, const moe::Calibration& start, bool with_loo);

// Tables for evaluating a fallback group: no measured tables, only `cal`.
moe::Tables fallback_tables(const moe::Calibration& cal);
// The built-in measured tables with `cal` instead of the embedded calibration.
moe::Tables tables_with(const moe::Calibration& cal);

}  // namespace val
