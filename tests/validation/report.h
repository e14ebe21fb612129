// report.h — results of a validation run, their summary, and the report written to docs/validation.md and the
// README's validation section.
//
//   std::vector<val::Result> rs = val::evaluate(cases, val::tables_with(cal));
//   val::Summary s = val::summarise(rs, /*reference_model=*/false, /*set=*/"", /*without_gaps=*/false);
//   std::string md = val::report_markdown(rs, fit_report, cases, cal);
#pragma once
#include <string>
#include <vector>

#include "cases.h"
#include "fit.h"

namespace val {

constexpr double kMedianGate = 0.10;    // issue 7: median |error| <= 10% over the public set
constexpr double kMaxGate = 0.25;       //          and no case beyond 25%
constexpr double kExplainAbove = 0.10;  //          each miss over 10% explained

struct Result {
    const Case* c;
    double predicted;
    double error;  // predicted / measured - 1 (NaN when the model produced nothing)
    bool pass;     // |error| <= tolerance (or, with a policy-normalised reference, |normalised_error| <= tolerance)
    double normalised = 0, normalised_error = 0;  // Case::policy_normalised and predicted against it (NaN if none)
};

struct Summary {
    int count = 0, passed = 0, gaps = 0;
    double median_abs = 0, max_abs = 0;
    std::string worst;
};

struct GroupStats {
    double fit_median = 0, loo_median = 0, loo_max = 0;
};

std::vector<Result> evaluate(const std::vector<Case>& cases, const moe::Tables& tables);
double median(std::vector<double> v);
// Over the public cases (or the InferSim cross-check), one set or all (""), with or without model-gap cases.
Summary summarise(const std::vector<Result>& rs, bool reference_model, const std::string& set, bool without_gaps);
std::vector<std::string> sets_in_order(const std::vector<Result>& rs, bool reference_model);
GroupStats group_stats(const FitGroupReport& g);

std::string num(double v);
std::string pct(double v, bool sign);
std::string result_word(const Result& r);

std::string report_markdown(const std::vector<Result>& rs, const FitReport& fr, const std::vector<Case>& cases,
                            const moe::Calibration& shipped);
std::string readme_section(const std::vector<Result>& rs);

}  // namespace val
