// sweep.h — one-axis sweeps of the current scenario for the page's charts and its CSV download. Pure logic (no
// ImGui): run in the recompute step, never while drawing.
//
//   web::SweepSpec spec = web::default_sweep(web::SweepAxis::batch, scenario, estimate, 256);
//   web::SweepData d;  web::run_sweep(scenario, spec, moe::builtin_tables(), d);
//   d.x[i], d.value(col, i) for every numeric output column (NaN where a phase is not computed or a point is invalid)
//   std::string csv = web::sweep_csv(scenario, spec, tables);   // the same text as `moe-roofline sweep`
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/moe.h"

namespace web {

// The step axes (batch, context, ep, prefill_tokens) and the serving axes (DESIGN §8: serving.concurrency,
// serving.decode.batch, serving.isl, serving.osl), whose points are evaluated with the serving layer.
enum class SweepAxis : std::uint8_t { batch, context, ep, prefill_tokens, concurrency, decode_batch, isl, osl };
bool is_serving_axis(SweepAxis a);

struct SweepAxisInfo {
    SweepAxis axis;
    const char* key;    // in the page's URL (&x=batch)
    const char* label;  // on the chart's x axis
    const char* unit;
    const char* help;
};
const std::vector<SweepAxisInfo>& sweep_axes();
const SweepAxisInfo& sweep_axis_info(SweepAxis a);
bool sweep_axis_from_key(const std::string& key, SweepAxis& out);

struct SweepSpec {
    SweepAxis axis = SweepAxis::batch;
    std::vector<int> values;  // x of each point (for ep: the EP size; dp follows, see sweep_point)
    bool force_decode = false;  // the throughput/interactivity sweep: a prefill-only scenario is evaluated as decode
    bool serving = false;       // evaluate() (step model + serving layer) instead of estimate(): the serving.* columns
                                // are filled and `fits` is serving.fits; the step-level sweeps skip the serving layer
};

// The default points of an axis around the current scenario: `max_points` distinct integers, geometric (dense where
// they are small), over a range that holds the current value and the largest batch / context that fits.
SweepSpec default_sweep(SweepAxis axis, const moe::Scenario& s, const moe::Estimate& e, int max_points);

// Applies point i to a copy of the base scenario (for ep: parallel.ep = x and parallel.dp scaled so the experts'
// tensor parallelism tp*dp/ep stays as in the base). False with issues if a value is refused.
bool sweep_point(moe::Scenario& s, const moe::Scenario& base, const SweepSpec& spec, std::size_t i, moe::Issues& issues);
// The axis columns of the CSV for this spec (paths), and their cells for point i.
std::vector<std::string> sweep_axis_paths(const SweepSpec& spec);

struct SweepData {
    SweepSpec spec;
    std::vector<double> x;
    std::vector<double> values;       // numeric output column c (index into numeric_columns()) at point i: [c * n + i]
    std::vector<unsigned char> ok;    // estimate status ok
    std::vector<unsigned char> fits;  // memory.fits (serving sweeps: serving.fits)
    double compute_ms = 0;            // wall time of run_sweep (wasm compute)
    std::size_t size() const { return x.size(); }
    double value(std::size_t column, std::size_t i) const { return values[column * x.size() + i]; }
    void clear() { *this = SweepData(); }
};

// The number and boolean output columns, in output_columns() order (what a sweep stores and a chart can show).
const std::vector<const moe::Column*>& numeric_columns();
int numeric_column_index(const std::string& name);  // -1 if not a numeric column

void run_sweep(const moe::Scenario& base, const SweepSpec& spec, const moe::Tables& tables, SweepData& out);
// CSV as `moe-roofline sweep` writes it: a header of axis paths and every output column, one row per point.
std::string sweep_csv(const moe::Scenario& base, const SweepSpec& spec, const moe::Tables& tables);

}  // namespace web
