// serving_runs.h — measured serving runs in reference/serving_public.csv's columns, each as a scenario the serving
// layer can predict (DESIGN §8.3). Shared by `moe-roofline calibrate` and `moe-validate --serving`.
//
//   std::string err;
//   std::vector<runs::Run> rs = runs::load_runs("runs.csv", catalog, moe::builtin_tables(), {}, err);
//   for (runs::Run& r : rs) if (r.skip.empty()) ... r.scenario, r.ttft, r.tpot ...
//
// Columns (the header names them, any order; others are ignored): id, backend, model_path, system, mode, isl, osl,
// gemm_quant_mode, moe_quant_mode, batch_size, tp_size, pp_size, attention_dp_size, moe_tp_size, moe_ep_size,
// silicon_ttft_ms, silicon_tpot_ms; disaggregated rows also prefill_* / decode_* (batch_size, num_workers, tp_size,
// pp_size, attention_dp_size, moe_ep_size); silicon_data_source optional (its benchmark client, docs/cli.md).
#pragma once
#include <string>
#include <vector>

#include "core/scenario/catalog.h"
#include "core/serving/serving.h"
#include "core/serving/surface.h"

namespace runs {

struct Run {
    int line = 0;                // line of the file (1: the header)
    std::string id, model, family, system, backend, mode;
    int isl = 0, osl = 0;
    double ttft = 0, tpot = 0;   // measured
    std::string skip;            // why the run cannot be evaluated ("" = it can)
    bool repeat = false;         // the same measurement as an earlier kept row of another source (skip says which):
                                 // counted once, so not a run the model failed to evaluate either
    bool layout_fixed = false;   // the layout columns were not taken as written (serving_runs.cpp, agg_layout(); for
                                 // disaggregated dump rows, inferencemax_disagg_recipe())
    bool aic_client = false;     // measured by AIConfigurator's own collection (not InferenceMAX's sa-bench client)
    std::string source;          // where the run comes from, for the validator's table by source (source_label())
    std::string build;           // the engine build that ran it: the container image the source names
                                 // (lmsysorg/sglang:v0.5.9-cu130), else backend and backend_version (build_label())
    bool sim = true;             // predicted by the simulation (surface), else the closed form (steps)
    moe::Scenario scenario;
    moe::ServingSteps steps;
    moe::StepSurface surface;
    double pred_ttft = NAN, pred_tpot = NAN;  // with the constants under test
    std::string parts;                        // the predicted parts, for moe-validate --rows
};

struct LoadOptions {
    bool simulate = true;  // build each run's step surface (the simulation); false: the closed form's steps only
    // strict (calibrate): a cell that is not a number, a short row or an unknown engine is an error naming the line
    // and column, and model_path / system may also be our preset ids. Not strict (the validator): such runs are
    // skipped with a reason.
    bool strict = false;
};

// One CSV line as cells (RFC 4180 quotes; a trailing CR dropped).
std::vector<std::string> split_csv_line(const std::string& line);

// The runs of CSV `text` (`name` in messages). Empty with `err` set on a missing column (or, strict, a bad cell).
std::vector<Run> parse_runs(const std::string& text, const std::string& name, const moe::Catalog& cat,
                            const moe::Tables& tables, const LoadOptions& o, std::string& err);
// parse_runs() of a file.
std::vector<Run> load_runs(const std::string& path, const moe::Catalog& cat, const moe::Tables& tables,
                           const LoadOptions& o, std::string& err);

}  // namespace runs
