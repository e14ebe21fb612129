// sweep.h — `moe-roofline sweep`: a cartesian grid of scenarios streamed to CSV, one row per point.
//
//   cli::SweepOptions o;  o.axes = {"workload.batch=1:256:x2", "parallel.ep=8,16,32"};  o.output = "grid.csv";
//   int status = cli::run_sweep(base_source, catalog, o);
//
// Grid order: the first --axis is the outermost loop, the last the innermost (like nested for-loops written in the
// order given). CSV: one header line of names (axis paths, then output columns, whose names carry their unit:
// `_ms`, `_bytes`, `tokens_per_s`), then one row per point. A point whose scenario is invalid gets `status` =
// error and the message in `error`, with its number cells empty. Memory is constant: one scenario is updated in
// place, only the axes whose value changed are set again, and rows go out through a 1 MiB buffer.
// --threads N computes runs of 2048 points on N threads and writes them in order (bounded: 4 runs per thread in
// flight), so the bytes are those of one thread; --shard K/N writes the K-th contiguous part of the rows (the
// header only in part 1), so the N parts concatenated are the whole output.
#pragma once
#include <string>
#include <vector>

#include "core/scenario/catalog.h"
#include "inputs.h"
#include "parallel.h"

namespace cli {

struct SweepOptions {
    std::vector<std::string> axes;     // "PATH=VALUES"
    std::string columns;               // "a,b,c"; empty = every output column
    std::string output = "-";          // file or "-" for standard output
    bool progress = true;              // progress line on stderr after a second (MOE_ROOFLINE_PROGRESS_DELAY)
    int threads = 0;                   // 0 = every core; the output is the same for any number
    Shard shard;                       // --shard K/N: rows [(K-1)*P/N, K*P/N) of the P points; header in shard 1 only
};

// Returns the exit status; throws UsageError for bad input (before anything is written) and Interrupted.
int run_sweep(const ScenarioSource& base, const moe::Catalog& catalog, const SweepOptions& options);

}  // namespace cli
