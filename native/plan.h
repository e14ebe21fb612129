// plan.h — `moe-roofline plan`: the Pareto front of a model's deployments on a GPU budget under an SLA
// (DESIGN §9; the search itself is core/plan.h).
//
//   cli::PlanOptions o;  o.request.gpus = 64;  o.request.sla.tpot_ms = 30;  o.format = "table";
//   int status = cli::run_plan(base_source, catalog, o);
//
// Output rows: the front, best output tokens/s per GPU first (--objective cost: cheapest per million output tokens
// first), each with its GPU, engine, USD per million output tokens and J per output token; with --all, then every other point in the space's
// order with why it is not on the front (dominated, does not fit, misses TTFT / TPOT / tokens/s per user,
// invalid). Each front row carries its page link and the chosen engine's launch command. Table and CSV have a
// preamble (shard 1 only), one block per row, and a summary (the last shard only), so --shard K/N outputs
// concatenate to the unsharded output byte for byte. The search runs on --threads cores; the output does not
// depend on their number. Memory does not grow with the space: the points stream through batches into the
// counts and the front (moe::PlanEnumerator, moe::PlanFront); --all walks the space again and streams its rows.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "core/scenario/catalog.h"
#include "core/plan/plan.h"
#include "inputs.h"
#include "parallel.h"

namespace cli {

// The page the links of `plan` and `url` point at unless --base says otherwise (scripts/run.sh serves it there).
inline constexpr const char* kDefaultBase = "http://127.0.0.1:8080/";

struct PlanOptions {
    moe::PlanRequest request;
    bool engine_given = false;         // --engine: the plan's engine (else the scenario's runtime.engine)
    std::string space_file;            // --space FILE ("" = the default space)
    std::string format = "table";      // table | csv | json
    bool all = false;                  // list every point, not only the front
    int threads = 0;                   // 0 = every core
    Shard shard;
    std::string base_url;              // page links
    std::FILE* out = stdout;           // where the rows go (the Python module: a temporary file)
    std::string* csv_summary = nullptr;  // --format csv: the summary line here instead of on stderr
    bool ttft_default = false;         // no --ttft-ms: moe::kDefaultServingTtftMs with the serving layer on
    // issue 28: one front over several GPUs and engines (--hardware h200,b200 --engine sglang,vllm): a search per
    // (hardware, engine) pair, their fronts merged under request.objective. Empty: the scenario's hardware, and
    // request.engine. Two or more pairs: no --all (its second walk is per search).
    std::vector<std::string> hardware;
    std::vector<moe::ServingEngine> engines;
};

// Returns the exit status; throws UsageError for bad input (before anything is printed).
int run_plan(const ScenarioSource& base, const moe::Catalog& catalog, const PlanOptions& options);

}  // namespace cli
