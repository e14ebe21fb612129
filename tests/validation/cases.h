// cases.h — the validation cases: published measurements (tests/validation/public_measurements.csv, a copy of
// shared/reference/public_measurements.csv) and InferSim's own outputs, each as a scenario, the number to compare,
// a tolerance and a citation.
//
//   std::vector<val::Case> cases = val::build_cases();
//   double p = val::predict(cases[0], moe::builtin_tables());   // NaN when the op is missing
//   double err = p / cases[0].measured - 1;
//
// A case pins the published value(s) with the CSV line(s) they come from, so `moe-validate --check-csv` can prove
// that every row of the CSV is either a case or excluded with a reason (exclusions()).
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/moe.h"

namespace val {

// Where a case's constants may be fitted (fit.cpp). `none`: the case checks the model but fits nothing.
enum class FitGroup { none, fallback_gemm, fallback_grouped, fallback_attn, comm_ll, comm_normal, gemm_tables, attn_tables, e2e };
const char* fit_group_name(FitGroup g);

struct Case {
    std::string id;         // stable short id: "deepep.ll.dispatch.ep8"
    std::string set;        // section of the report: "DeepEP low-latency", "DeepGEMM dense GEMM", ...
    std::string what;       // one line: what is compared
    std::string citation;   // where the number is published
    std::vector<std::pair<int, double>> rows;  // (CSV line, value) pinned by this case; empty for InferSim runs
    double measured = 0;    // the value compared against (a row's value, or combined from `rows`)
    std::string unit;       // "us", "GB/s", "TFLOPS", "tokens/s/GPU"
    double tolerance = 0;   // relative: |predicted/measured - 1| <= tolerance
    bool reference_model = false;  // InferSim cross-check (not a measurement; reported and summarised apart)
    FitGroup fit = FitGroup::none;
    FitGroup fit2 = FitGroup::none;  // a second group the case also fits (e.g. fallback efficiency and table overhead)
    std::string caveat;     // shown beside the case (e.g. "UNVERIFIED chart read")
    std::string miss_note;  // likely cause when |error| > 10% (required then: the test fails without it)
    // Set when the case needs something the model does not have yet (named exactly): the case is reported and
    // counted in the summary, but leaving its tolerance does not fail the test (moe-validate --strict: it does),
    // and it is not used to fit constants (a fit would bend the constants to cover the missing mechanism).
    std::string model_gap;
    moe::Scenario scenario;
    std::function<double(const moe::Estimate&)> extract;  // predicted value from the estimate (NaN if absent)

    // Reference-model cases whose TGS difference is mostly a deliberate overlap-policy difference: InferSim's own
    // per-operator times (pinned from its output; `--check-runs` verifies them) composed with our overlap policy and
    // our per-step overhead. The case passes if either comparison is within tolerance; both are reported.
    std::vector<std::pair<std::string, double>> infersim_ops;  // ("Attn core latency (us):", 184.48), ...
    std::function<double(const moe::Calibration&)> policy_normalised;
};

// Rows of the CSV that are not cases, with the reason.
struct Exclusion {
    int first_line, last_line;  // inclusive CSV line numbers (header = line 1)
    std::string reason;
    // Only lines whose `metric` column contains this text (empty: all lines in the range).
    std::string metric_contains;
};

std::vector<Case> build_cases();
std::vector<Exclusion> exclusions();

// Runs the case's scenario with `tables` (and its calibration) and extracts the predicted value.
double predict(const Case& c, const moe::Tables& tables);
moe::Estimate run(const Case& c, const moe::Tables& tables);

// Expected number of distinct destinations per token in DeepEP's own benchmarks (the byte counts behind its
// published bandwidths; see cases.cpp).
double deepep_intranode_ranks(int ranks, int experts, int top_k);
double deepep_internode_nodes(int nodes, int experts, int top_k, int topk_groups);

}  // namespace val
