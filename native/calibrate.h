// calibrate.h — fitting the engine constants to measured serving runs (issue 28): the loss, the bounded search over
// moe::fitted_engine_constants(), held-out predictions, bootstrap intervals and the band's quantiles. Shared by
// `moe-roofline calibrate` (native/calibrate_cli.cpp) and `moe-validate --serving` (tests/validation/serving.cpp).
//
//   std::vector<runs::Run*> mine = ...;                       // one engine's evaluable runs
//   double client_ms = 0;
//   moe::EngineConstants k = calib::fit_engine(mine, start, client_ms, calib::FitOptions{});
//   calib::CalibrationReport rep = calib::calibrate(all_runs, moe::builtin_engines(), calib::CalibrateOptions{});
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/serving/engine.h"
#include "serving_runs.h"

namespace calib {

// A constant the fit moves: core's list (each a physical quantity with its range, docs/serving.md "Serving"), with
// the search's first step (a twelfth of the range).
struct Param {
    const char* name;
    double moe::EngineConstants::*field;
    double lo, hi, step;
};
const std::vector<Param>& params();

// The validator's benchmark-client time per request (AIConfigurator's collection; not a product constant): one more
// coordinate of the validator's search, in [0, kClientHi] ms.
constexpr double kClientHi = 400, kClientStep = 20;
// Each run's |log error| is capped at this in the loss (a run the model does not describe pulls no harder).
constexpr double kLossCap = 0.4;

// r.pred_ttft / r.pred_tpot with constants k (client_ms added to the TTFT of AIConfigurator-client runs).
void predict(runs::Run& r, const moe::EngineConstants& k, double client_ms);
// Mean capped |log error| of TTFT plus TPOT over the runs (predictions left in them); on two threads.
double loss(std::vector<runs::Run*>& rows, const moe::EngineConstants& k, double client_ms);

struct FitOptions {
    bool fit_client = true;   // search the client time too (the validator); calibrate: no client, 0
    bool coarse_sweep = true; // first a 9-point sweep of each constant over its whole range; false: a local search
                              // from the start (the bootstrap's refits, warm-started at the fit)
};
// Deterministic pattern search inside the ranges: each round tries +/- step on every coordinate and keeps what
// lowers the loss; steps halve when nothing does, down to an eighth of the first.
moe::EngineConstants fit_engine(std::vector<runs::Run*>& rows, moe::EngineConstants k, double& client_ms,
                                const FitOptions& o = FitOptions());

double median(std::vector<double> v);
double quantile(std::vector<double> v, double q);  // linear between order statistics; 0 when empty

// The band of held-out predictions (r.pred_* of each run): p10 / p90 of log(measured / predicted) TTFT and TPOT,
// and of log(predicted E2E / measured E2E) for throughput; into k's *_log_error_p10/_p90.
void set_band(const std::vector<const runs::Run*>& held_out, moe::EngineConstants& k);

struct CalibrateOptions {
    int bootstrap = 30;          // resamples for the intervals (0: none)
    int folds = 0;               // 0: leave-one-out up to 10 runs, else 5-fold
    std::uint64_t seed = 28;     // the resampling's seed (the output does not depend on anything else)
};

struct ConstantReport {
    const char* name = "";
    double lo = 0, hi = 0;       // its range
    double shipped = 0, fitted = 0;
    double ci_lo = NAN, ci_hi = NAN;  // 90% bootstrap interval (5th and 95th percentiles of the refits)
    double flat = 0;             // the loss's relative change over the whole range, others at the fit
    std::string warning;         // why the runs do not pin it ("" = they do)
};
struct EngineReport {
    std::string engine;
    int runs = 0, folds = 0, bootstrap = 0;
    // median |error|: shipped constants, fitted (in sample), held out (each run predicted by a fit without it)
    double before_ttft = NAN, before_tpot = NAN, fit_ttft = NAN, fit_tpot = NAN, held_ttft = NAN, held_tpot = NAN;
    std::vector<ConstantReport> constants;
    moe::EngineConstants calibrated;  // fitted constants, typical errors and band from the held-out predictions
};
struct CalibrationReport {
    std::vector<EngineReport> engines;
    moe::EngineSet set;               // `start` with each calibrated engine replaced
};
// Fits each engine with evaluable runs among `rows`, starting from `start`'s constants. `progress` (may be null)
// gets a line per stage.
CalibrationReport calibrate(std::vector<runs::Run>& rows, const moe::EngineSet& start, const CalibrateOptions& o,
                            void (*progress)(const std::string&) = nullptr);
// presets/engines.json's format: `shipped` (that file's JSON) with each calibrated engine's fitted constants,
// typical errors and band replaced, each {"value", "source"}; `source` names where they came from.
nlohmann::json engines_json(const nlohmann::json& shipped, const CalibrationReport& rep, const std::string& source);

}  // namespace calib
