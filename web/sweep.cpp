// sweep.cpp — sweeps for the charts and the CSV download (see sweep.h).
#include "sweep.h"
#include "core/serving/serving.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace web {

const std::vector<SweepAxisInfo>& sweep_axes() {
    static const std::vector<SweepAxisInfo> axes = {
        {SweepAxis::batch, "batch", "batch", "sequences", "Concurrent decode sequences per attention-DP rank (workload.batch)."},
        {SweepAxis::context, "context", "context", "tokens", "KV length seen by a decode step (workload.context_len)."},
        {SweepAxis::ep, "ep", "EP", "GPUs", "Expert parallelism (parallel.ep), with DP attention scaled along so the experts' TP stays as it is."},
        {SweepAxis::prefill_tokens, "prefill", "prefill chunk", "tokens", "Tokens in one prefill forward per attention-DP rank (workload.prefill_tokens)."},
        {SweepAxis::concurrency, "concurrency", "concurrency", "requests", "Serving: closed-loop clients (serving.concurrency; aggregated per replica, disaggregated for the deployment)."},
        {SweepAxis::decode_batch, "decode_batch", "decode batch", "requests", "Serving, disaggregated: the most requests a decode DP rank runs at once (serving.decode.batch)."},
        {SweepAxis::isl, "isl", "input length", "tokens", "Serving: input tokens per request (serving.isl)."},
        {SweepAxis::osl, "osl", "output length", "tokens", "Serving: output tokens per request (serving.osl)."},
    };
    return axes;
}

bool is_serving_axis(SweepAxis a) {
    return a == SweepAxis::concurrency || a == SweepAxis::decode_batch || a == SweepAxis::isl || a == SweepAxis::osl;
}

const SweepAxisInfo& sweep_axis_info(SweepAxis a) {
    for (const SweepAxisInfo& i : sweep_axes())
        if (i.axis == a) return i;
    return sweep_axes().front();
}

bool sweep_axis_from_key(const std::string& key, SweepAxis& out) {
    for (const SweepAxisInfo& i : sweep_axes()) {
        if (key == i.key) {
            out = i.axis;
            return true;
        }
    }
    return false;
}

namespace {

int next_pow2(double v) {
    int p = 1;
    while (p < v && p < (1 << 29)) p *= 2;
    return p;
}

// `n` distinct integers from lo to hi: geometric where the spacing allows, consecutive where it does not.
std::vector<int> geometric_integers(int lo, int hi, int n) {
    std::vector<int> out;
    if (hi < lo) std::swap(lo, hi);
    const long span = long(hi) - long(lo) + 1;
    if (span <= n) {
        for (int v = lo; v <= hi; ++v) out.push_back(v);
        return out;
    }
    out.resize(size_t(n));
    for (int i = 0; i < n; ++i)
        out[size_t(i)] = static_cast<int>(std::lround(lo * std::pow(double(hi) / lo, double(i) / (n - 1))));
    for (int i = 1; i < n; ++i) out[size_t(i)] = std::max(out[size_t(i)], out[size_t(i) - 1] + 1);
    out[size_t(n) - 1] = std::min(out[size_t(n) - 1], hi);
    for (int i = n - 2; i >= 0; --i) out[size_t(i)] = std::min(out[size_t(i)], out[size_t(i) + 1] - 1);
    return out;
}

void add_value(std::vector<int>& v, int x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) {
        v.push_back(x);
        std::sort(v.begin(), v.end());
    }
}

}  // namespace

SweepSpec default_sweep(SweepAxis axis, const moe::Scenario& s, const moe::Estimate& e, int max_points) {
    SweepSpec spec;
    spec.axis = axis;
    const double fit_batch = e.ok ? e.memory.max_batch : 0;
    const double fit_context = e.ok ? e.memory.max_context : 0;
    switch (axis) {
        case SweepAxis::batch: {
            const int hi = std::min(1 << 16, next_pow2(std::max({256.0, 2.0 * s.workload.batch, 1.5 * fit_batch})));
            spec.values = geometric_integers(1, hi, max_points);
            break;
        }
        case SweepAxis::context: {
            const int hi = std::min(1 << 24, next_pow2(std::max({32768.0, 4.0 * s.context_len(), 1.5 * fit_context})));
            spec.values = geometric_integers(256, hi, max_points);
            break;
        }
        case SweepAxis::prefill_tokens: {
            const int hi = std::min(1 << 22, next_pow2(std::max(65536.0, 4.0 * s.workload.prefill_tokens)));
            spec.values = geometric_integers(128, hi, max_points);
            break;
        }
        case SweepAxis::concurrency: {
            const int hi = std::min(1 << 20, next_pow2(std::max(256.0, 4.0 * s.serving.concurrency)));
            spec.values = geometric_integers(1, hi, max_points);
            break;
        }
        case SweepAxis::decode_batch: {
            const int hi = std::min(1 << 16, next_pow2(std::max(256.0, 4.0 * s.serving.decode.batch)));
            spec.values = geometric_integers(1, hi, max_points);
            break;
        }
        case SweepAxis::isl: {
            const int hi = std::min(1 << 22, next_pow2(std::max(32768.0, 4.0 * s.serving.isl)));
            spec.values = geometric_integers(64, hi, max_points);
            break;
        }
        case SweepAxis::osl: {
            const int hi = std::min(1 << 20, next_pow2(std::max(16384.0, 4.0 * s.serving.osl)));
            spec.values = geometric_integers(16, hi, max_points);
            break;
        }
        case SweepAxis::ep: {
            const int world_cap = 1024;
            for (int ep = 1; ep <= world_cap; ep *= 2) spec.values.push_back(ep);
            add_value(spec.values, s.parallel.ep);
            break;
        }
    }
    spec.serving = is_serving_axis(axis) && s.serving.mode != moe::ServingMode::off;
    // The current value is not added to the grid (the chart marks it from the estimate itself), so moving it
    // (dragging the batch slider) leaves the sweep as it is and it need not be recomputed.
    return spec;
}

std::vector<std::string> sweep_axis_paths(const SweepSpec& spec) {
    switch (spec.axis) {
        case SweepAxis::batch: return {"workload.batch"};
        case SweepAxis::context: return {"workload.context_len"};
        case SweepAxis::prefill_tokens: return {"workload.prefill_tokens"};
        case SweepAxis::ep: return {"parallel.ep", "parallel.dp"};
        case SweepAxis::concurrency: return {"serving.concurrency"};
        case SweepAxis::decode_batch: return {"serving.decode.batch"};
        case SweepAxis::isl: return {"serving.isl"};
        case SweepAxis::osl: return {"serving.osl"};
    }
    return {};
}

bool sweep_point(moe::Scenario& s, const moe::Scenario& base, const SweepSpec& spec, std::size_t i, moe::Issues& issues) {
    const double x = spec.values[i];
    auto set = [&](const char* path, double v) {
        const moe::FieldDesc* f = moe::find_field(path);
        return f && moe::set_path_number(s, *f, v, issues);
    };
    // a list of request lengths replaces these fields (the CLI's sweep refuses such an axis): no points
    for (const std::string& path : sweep_axis_paths(spec))
        if (const char* list = moe::length_list_replacing(base.workload, path)) {
            const bool by_prompts = std::string_view(list) == "workload.prompt_lens";
            issues.push_back({list, by_prompts ? "sets the prefill forward's tokens: clear it to sweep them"
                                               : "sets the decode batch and its contexts: clear it to sweep them"});
            return false;
        }
    switch (spec.axis) {
        case SweepAxis::batch: return set("workload.batch", x);
        case SweepAxis::context: return set("workload.context_len", x);
        case SweepAxis::prefill_tokens: return set("workload.prefill_tokens", x);
        case SweepAxis::concurrency: return set("serving.concurrency", x);
        case SweepAxis::decode_batch: return set("serving.decode.batch", x);
        case SweepAxis::isl: return set("serving.isl", x);
        case SweepAxis::osl: return set("serving.osl", x);
        case SweepAxis::ep: {
            // keep moe_tp = tp*dp/ep: dp = ep * moe_tp / tp
            const long moe_tp = std::max(1, base.moe_tp());
            const long num = long(x) * moe_tp;
            if (num % base.parallel.tp != 0) {
                issues.push_back({"parallel.dp", "no whole DP size keeps the experts' TP at " + std::to_string(moe_tp)});
                return false;
            }
            return set("parallel.ep", x) && set("parallel.dp", double(num / base.parallel.tp));
        }
    }
    return false;
}

const std::vector<const moe::Column*>& numeric_columns() {
    static const std::vector<const moe::Column*> cols = [] {
        std::vector<const moe::Column*> v;
        for (const moe::Column& c : moe::output_columns())
            if (c.type != moe::ColumnType::text) v.push_back(&c);
        return v;
    }();
    return cols;
}

int numeric_column_index(const std::string& name) {
    const auto& cols = numeric_columns();
    for (std::size_t i = 0; i < cols.size(); ++i)
        if (name == cols[i]->name) return static_cast<int>(i);
    return -1;
}

void run_sweep(const moe::Scenario& base, const SweepSpec& spec, const moe::Tables& tables, SweepData& out) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto& cols = numeric_columns();
    const std::size_t n = spec.values.size();
    out.spec = spec;
    out.x.assign(spec.values.begin(), spec.values.end());
    out.values.assign(cols.size() * n, std::numeric_limits<double>::quiet_NaN());
    out.ok.assign(n, 0);
    out.fits.assign(n, 0);
    const int fits_col = numeric_column_index(spec.serving ? "serving.fits" : "memory.fits");
    moe::Scenario s = base;
    if (spec.force_decode && s.workload.phase == moe::PhaseSel::prefill) s.workload.phase = moe::PhaseSel::decode;
    const moe::Scenario start = s;
    moe::Issues issues;
    for (std::size_t i = 0; i < n; ++i) {
        issues.clear();
        if (spec.axis == SweepAxis::ep) s = start;  // dp and ep both move
        if (!sweep_point(s, start, spec, i, issues)) continue;
        // The serving layer costs a few step evaluations per point: only the sweeps that show it pay for it.
        const moe::Estimate e = spec.serving ? moe::evaluate(s, tables) : moe::estimate(s, tables);
        if (!e.ok) continue;
        out.ok[i] = 1;
        for (std::size_t c = 0; c < cols.size(); ++c) out.values[c * n + i] = cols[c]->number(e);
        out.fits[i] = fits_col >= 0 && out.values[size_t(fits_col) * n + i] != 0;
    }
    out.compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}


std::string sweep_csv(const moe::Scenario& base, const SweepSpec& spec, const moe::Tables& tables) {
    std::string out;
    const std::vector<std::string> paths = sweep_axis_paths(spec);
    for (std::size_t i = 0; i < paths.size(); ++i) out += (i ? "," : "") + paths[i];
    for (const moe::Column& c : moe::output_columns()) out += std::string(",") + c.name;
    out += '\n';
    moe::Scenario s = base;
    if (spec.force_decode && s.workload.phase == moe::PhaseSel::prefill) s.workload.phase = moe::PhaseSel::decode;
    const moe::Scenario start = s;
    moe::Issues issues;
    for (std::size_t i = 0; i < spec.values.size(); ++i) {
        issues.clear();
        if (spec.axis == SweepAxis::ep) s = start;
        const bool set = sweep_point(s, start, spec, i, issues);
        out += std::to_string(spec.values[i]);
        if (spec.axis == SweepAxis::ep) out += "," + std::to_string(s.parallel.dp);
        moe::Estimate e;
        if (set) {
            e = moe::evaluate(s, tables);
        } else {
            e.errors = issues;
        }
        for (const moe::Column& c : moe::output_columns()) {
            out += ',';
            if (c.type == moe::ColumnType::text) moe::append_csv_cell(out, c.text(e));
            else if (set) out += moe::format_value(c, e);
        }
        out += '\n';
    }
    return out;
}

}  // namespace web
