// module.cpp — the `moe_roofline` Python module's native part (`_moe_roofline`, pybind11 from Debian): the CLI's own
// code paths, so a notebook gets the CLI's numbers to the last digit. native/python/moe_roofline/__init__.py wraps
// it (dicts, pandas DataFrames, ValueError).
//
//   _moe_roofline.evaluate(scenario_json_or_id, ["workload.batch=64"])  -> JSON text of `eval --format json`
//   _moe_roofline.sweep(scenario_json_or_id, sets, axes, columns, threads, csv_path)  -> writes `sweep`'s CSV
//   _moe_roofline.presets(kind)  -> [(id, description)]
//
// A scenario argument is JSON object text ("{...}", model / hardware paths relative to the working directory), a
// preset scenario id or a path to a scenario file, as the CLI's SCENARIO. Bad input raises ValueError with the
// message the CLI prints after "moe-roofline: ".
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "core/moe.h"
#include "native/inputs.h"
#include "native/output.h"
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

std::string evaluate(const std::string& scenario, const std::vector<std::string>& sets) {
    return guarded([&] {
        py::gil_scoped_release unlocked;
        // as `moe-roofline eval --format json`: an invalid scenario is an error (the CLI's exit 2)
        moe::ParseResult r = moe::scenario_from_json(source(scenario, sets).json, catalog());
        if (!r.ok()) throw cli::UsageError(cli::join_issues(r.errors));
        const moe::Estimate e = moe::evaluate(r.scenario, moe::builtin_tables());
        if (!e.ok) throw cli::UsageError(cli::join_issues(e.errors));
        return moe::estimate_to_json(e).dump(2);
    });
}

void sweep(const std::string& scenario, const std::vector<std::string>& sets, const std::vector<std::string>& axes,
           const std::string& columns, int threads, const std::string& csv_path) {
    guarded([&] {
        py::gil_scoped_release unlocked;
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
    m.def("evaluate", &evaluate, py::arg("scenario"), py::arg("sets"));
    m.def("sweep", &sweep, py::arg("scenario"), py::arg("sets"), py::arg("axes"), py::arg("columns"),
          py::arg("threads"), py::arg("csv_path"));
    m.def("presets", &presets, py::arg("kind"));
}
