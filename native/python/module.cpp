// module.cpp — the `moe_roofline` Python module's native part (`_moe_roofline`, pybind11 from Debian): the CLI's own
// code paths, so a notebook gets the CLI's numbers to the last digit. native/python/moe_roofline/__init__.py wraps
// it (dicts, pandas DataFrames, ValueError).
//
//   _moe_roofline.evaluate(scenario_json_or_id, ["workload.batch=64"], engines)  -> JSON text of `eval --format json`
//   _moe_roofline.sweep(scenario_json_or_id, sets, axes, columns, threads, csv_path, engines)  -> writes `sweep`'s CSV
//   _moe_roofline.plan(scenario, sets, gpus, ttft_ms, tpot_ms, min_tps_user, engine, space_file, all, threads,
//                      base_url, csv_path, hardware, objective, engines, sla_at)  -> writes `plan --format csv`'s rows,
//                      returns its summary line
// engines: "" (shipped), a calibration's JSON text or its path (the CLI's --engines), in force for that call only.
//   _moe_roofline.presets(kind)  -> [(id, description)]
//
// A scenario argument is JSON object text ("{...}", model / hardware paths relative to the working directory), a
// preset scenario id or a path to a scenario file, as the CLI's SCENARIO. Bad input raises ValueError with the
// message the CLI prints after "moe-roofline: ".
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/moe.h"
#include "native/calibrate_cli.h"
#include "native/inputs.h"
#include "native/output.h"
#include "native/plan.h"
#include "native/sweep.h"

namespace py = pybind11;

namespace {

const moe::Catalog& catalog() {
    static const moe::Catalog cat = cli::load_catalog("");
    return cat;
}

cli::ScenarioSource source(const std::string& scenario, const std::vector<std::string>& sets) {
    std::size_t i = 0;
    while (i < scenario.size() && (scenario[i] == ' ' || scenario[i] == '\n' || scenario[i] == '\t')) ++i;
    cli::ScenarioSource src =
        i < scenario.size() && scenario[i] == '{'
            ? cli::scenario_source_from_json(cli::parse_json(scenario, "scenario"), "scenario", "", catalog())
            : cli::load_scenario_source(scenario, catalog());
    for (const std::string& s : sets) cli::apply_set(src, s, catalog());
    return src;
}

// engines: "" (the shipped constants), JSON object text, or a path to a calibration file (--engines).
moe::EngineSet engines_of(const std::string& engines) {
    std::size_t i = 0;
    while (i < engines.size() && (engines[i] == ' ' || engines[i] == '\n' || engines[i] == '\t')) ++i;
    return i < engines.size() && engines[i] == '{' ? cli::engines_from_text(engines, "engines") : cli::load_engines_file(engines);
}

// Runs f, turning the CLI's user errors into ValueError (pybind11 maps std::invalid_argument to it).
template <class F>
auto guarded(F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const cli::UsageError& e) {
        throw std::invalid_argument(e.what());
    } catch (const cli::Interrupted&) {
        throw std::invalid_argument("interrupted");
    }
}

std::string evaluate(const std::string& scenario, const std::vector<std::string>& sets, const std::string& engines) {
    return guarded([&] {
        py::gil_scoped_release unlocked;
        const moe::EngineSet set = engines.empty() ? moe::EngineSet() : engines_of(engines);
        const cli::EnginesScope scope(engines.empty() ? nullptr : &set);
        // as `moe-roofline eval --format json`: an invalid scenario is an error (the CLI's exit 2)
        moe::ParseResult r = moe::scenario_from_json(source(scenario, sets).json, catalog());
        if (!r.ok()) throw cli::UsageError(cli::join_issues(r.errors));
        const moe::Estimate e = moe::evaluate(r.scenario, moe::builtin_tables());
        if (!e.ok) throw cli::UsageError(cli::join_issues(e.errors));
        return moe::estimate_to_json(e).dump(2);
    });
}

void sweep(const std::string& scenario, const std::vector<std::string>& sets, const std::vector<std::string>& axes,
           const std::string& columns, int threads, const std::string& csv_path, const std::string& engines) {
    guarded([&] {
        py::gil_scoped_release unlocked;
        const moe::EngineSet set = engines.empty() ? moe::EngineSet() : engines_of(engines);
        const cli::EnginesScope scope(engines.empty() ? nullptr : &set);
        cli::SweepOptions o;
        o.axes = axes;
        o.columns = columns;
        o.output = csv_path;
        o.progress = false;
        o.threads = threads;
        const int status = cli::run_sweep(source(scenario, sets), catalog(), o);
        if (status != 0) throw cli::UsageError("sweep failed (status " + std::to_string(status) + ")");
        return 0;
    });
}

// `moe-roofline plan SCENARIO --gpus N ... --format csv` into csv_path; returns the summary line the CLI prints on
// stderr. 0 for a limit: none.
std::string plan(const std::string& scenario, const std::vector<std::string>& sets, int gpus, double ttft_ms, bool ttft_default,
                 double tpot_ms, double min_tokens_per_s_per_user, const std::string& engine,
                 const std::string& space_file, bool all, int threads, const std::string& base_url,
                 const std::string& csv_path, const std::vector<std::string>& hardware, const std::string& objective,
                 const std::string& engines, const std::string& sla_at) {
    return guarded([&] {
        py::gil_scoped_release unlocked;
        const moe::EngineSet set = engines.empty() ? moe::EngineSet() : engines_of(engines);
        const cli::EnginesScope scope(engines.empty() ? nullptr : &set);
        if (!sla_at.empty() && sla_at != "mean" && sla_at != "p90")
            throw cli::UsageError("--sla-at: '" + sla_at.substr(0, 40) + "' is not mean or p90");
        if (gpus < 1 || gpus > 65536) throw cli::UsageError("--gpus: " + std::to_string(gpus) + " is not in 1..65536");
        for (const auto& [name, v] : {std::pair<const char*, double>{"--ttft-ms", ttft_ms}, {"--tpot-ms", tpot_ms},
                                      {"--min-tokens-per-s-per-user", min_tokens_per_s_per_user}})
            if (!(v >= 0) || !std::isfinite(v)) throw cli::UsageError(std::string(name) + ": must be a positive number");
        cli::PlanOptions o;
        o.ttft_default = ttft_default;  // no limit given: the CLI's serving default (moe::kDefaultServingTtftMs)
        o.request.gpus = gpus;
        o.request.sla.ttft_ms = ttft_ms;
        o.request.sla.tpot_ms = tpot_ms;
        o.request.sla.min_tokens_per_s_per_user = min_tokens_per_s_per_user;
        o.request.sla.at_p90 = sla_at == "p90";
        // engine: one name or a comma list (issue 28: one search per GPU and engine, one front)
        for (std::size_t at = 0; at < engine.size();) {
            const std::size_t comma = std::min(engine.find(',', at), engine.size());
            const std::string name = engine.substr(at, comma - at);
            at = comma + 1;
            if (name.empty()) continue;
            moe::ServingEngine k;
            if (!moe::parse_serving_engine(name, k))
                throw cli::UsageError("--engine: '" + name.substr(0, 40) + "' is not sglang, vllm or trtllm");
            if (std::find(o.engines.begin(), o.engines.end(), k) == o.engines.end()) o.engines.push_back(k);
        }
        if (!o.engines.empty()) {
            o.request.engine = o.engines.front();
            o.engine_given = true;
            if (o.engines.size() == 1) o.engines.clear();
        }
        for (const std::string& h : hardware) {
            if (!catalog().gpu(h)) throw cli::UsageError("--hardware: '" + h.substr(0, 40) + "' is not a hardware preset (moe-roofline presets hardware)");
            if (std::find(o.hardware.begin(), o.hardware.end(), h) == o.hardware.end()) o.hardware.push_back(h);
        }
        if (!objective.empty() && !moe::parse_plan_objective(objective, o.request.objective))
            throw cli::UsageError("--objective: '" + objective.substr(0, 40) + "' is not throughput or cost");
        o.space_file = space_file;
        o.format = "csv";
        o.out = nullptr;  // set below
        o.all = all;
        o.threads = threads;
        o.base_url = base_url.empty() ? cli::kDefaultBase : base_url;
        std::string summary;
        o.csv_summary = &summary;
        std::FILE* f = std::fopen(csv_path.c_str(), "wb");
        if (!f) throw cli::UsageError(csv_path + ": cannot write");
        o.out = f;
        int status = 0;
        try {
            status = cli::run_plan(source(scenario, sets), catalog(), o);
        } catch (...) {
            std::fclose(f);
            throw;
        }
        (void)status;
        if (std::fclose(f) != 0) throw cli::UsageError(csv_path + ": cannot write");
        return summary;
    });
}

std::vector<std::pair<std::string, std::string>> presets(const std::string& kind) {
    const moe::Catalog& c = catalog();
    const std::vector<moe::CatalogEntry>* list = kind == "models"      ? &c.models()
                                                 : kind == "hardware"  ? &c.hardware()
                                                 : kind == "scenarios" ? &c.scenarios()
                                                                       : nullptr;
    if (!list) throw std::invalid_argument("presets: kind '" + kind + "' is not models, hardware or scenarios");
    std::vector<std::pair<std::string, std::string>> out;
    for (const moe::CatalogEntry& e : *list) out.emplace_back(e.id, e.description);
    return out;
}

}  // namespace

PYBIND11_MODULE(_moe_roofline, m) {
    m.doc() = "MoE Roofline's native core (use the moe_roofline package)";
    m.def("evaluate", &evaluate, py::arg("scenario"), py::arg("sets"), py::arg("engines"));
    m.def("sweep", &sweep, py::arg("scenario"), py::arg("sets"), py::arg("axes"), py::arg("columns"),
          py::arg("threads"), py::arg("csv_path"), py::arg("engines"));
    m.def("plan", &plan, py::arg("scenario"), py::arg("sets"), py::arg("gpus"), py::arg("ttft_ms"), py::arg("ttft_default"),
          py::arg("tpot_ms"),
          py::arg("min_tokens_per_s_per_user"), py::arg("engine"), py::arg("space_file"), py::arg("all"),
          py::arg("threads"), py::arg("base_url"), py::arg("csv_path"), py::arg("hardware"), py::arg("objective"),
          py::arg("engines"), py::arg("sla_at"));
    m.def("presets", &presets, py::arg("kind"));
}
