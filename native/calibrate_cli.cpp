// calibrate_cli.cpp — `moe-roofline calibrate` and --engines (see calibrate_cli.h).
#include "calibrate_cli.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>

#include "calibrate.h"
#include "core/base/embedded.h"
#include "core/data/tables.h"
#include "inputs.h"
#include "output.h"
#include "serving_runs.h"

namespace cli {
namespace {

std::string pct(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.1f%%", 100 * v);
    return std::isfinite(v) ? b : "-";
}
std::string num(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.4g", v);
    return std::isfinite(v) ? b : "-";
}
std::string times(double log_ratio) {  // "x0.87"
    char b[64];
    std::snprintf(b, sizeof b, "x%.2f", std::exp(log_ratio));
    return b;
}

const moe::EmbeddedFile* shipped_engines_file() {
    for (const moe::EmbeddedFile& f : moe::embedded_files())
        if (std::string_view(f.path) == "presets/engines.json") return &f;
    return nullptr;
}

void progress_line(const std::string& s) { std::fprintf(stderr, "calibrate: %s\n", s.c_str()); }

}  // namespace

moe::EngineSet engines_from_text(const std::string& text, const std::string& origin) {
    moe::EngineSet set;
    moe::Issues errors;
    if (!moe::engines_from_text(text, set, errors)) throw UsageError(origin + ": " + join_issues(errors));
    return set;
}

moe::EngineSet load_engines_file(const std::string& path) {
    std::string text;
    try {
        text = read_file(path);
    } catch (const UsageError& e) {
        throw UsageError(std::string("--engines: ") + e.what());
    }
    return engines_from_text(text, "--engines " + path);
}

int run_calibrate(const moe::Catalog& catalog, const CalibrateCliOptions& o) {
    if (o.output.empty()) throw UsageError("calibrate: -o ENGINES.json is required");
    if (o.bootstrap < 0 || o.bootstrap > 1000) throw UsageError("--bootstrap: must be in 0..1000");
    if (o.folds < 0 || o.folds == 1 || o.folds > 100) throw UsageError("--folds: must be 0 (automatic) or in 2..100");
    runs::LoadOptions lo;
    lo.strict = true;
    std::string err;
    std::vector<runs::Run> rows = runs::parse_runs(read_file(o.runs), o.runs, catalog, moe::builtin_tables(), lo, err);
    if (!err.empty()) throw UsageError(err);
    if (rows.empty()) throw UsageError(o.runs + ": no runs (a header line, then one run per line)");
    std::map<std::string, int> per_engine;
    std::map<std::string, std::vector<int>> skipped;
    for (const runs::Run& r : rows) {
        if (r.skip.empty()) per_engine[r.backend]++;
        else skipped[r.skip].push_back(r.line);
    }
    std::printf("%s: %zu runs, %d evaluated", o.runs.c_str(), rows.size(), int(rows.size()) - [&] {
        int n = 0;
        for (const auto& [why, lines] : skipped) n += int(lines.size());
        return n;
    }());
    for (const auto& [e, n] : per_engine) std::printf("; %s %d", e.c_str(), n);
    std::printf("\n");
    for (const auto& [why, lines] : skipped) {
        std::string at;
        for (size_t i = 0; i < lines.size() && i < 5; ++i) at += (i ? ", " : "") + std::to_string(lines[i]);
        if (lines.size() > 5) at += ", ...";
        std::printf("  not evaluated: %zu runs (line %s): %s\n", lines.size(), at.c_str(), why.c_str());
    }
    for (const auto& [e, n] : per_engine)
        if (n < 2) throw UsageError(o.runs + ": " + e + " has " + std::to_string(n) + " evaluated run; calibrate needs at least 2 per engine (and about 10 per constant to pin them)");
    if (per_engine.empty()) throw UsageError(o.runs + ": no run can be evaluated (the reasons are listed above)");

    calib::CalibrateOptions co;
    co.bootstrap = o.bootstrap;
    co.folds = o.folds;
    const calib::CalibrationReport rep =
        calib::calibrate(rows, moe::builtin_engines(), co, o.quiet ? nullptr : &progress_line);

    int warnings = 0;
    for (const calib::EngineReport& er : rep.engines) {
        std::printf("\n%s: %d runs; held out by %s; %d bootstrap resamples\n", er.engine.c_str(), er.runs,
                    er.folds == er.runs ? "leave-one-out" : (std::to_string(er.folds) + "-fold cross-validation (run i in fold i mod " + std::to_string(er.folds) + ")").c_str(),
                    er.bootstrap);
        std::printf("  %-34s %8s %8s\n", "median |error|", "TTFT", "TPOT");
        std::printf("  %-34s %8s %8s\n", "shipped constants", pct(er.before_ttft).c_str(), pct(er.before_tpot).c_str());
        std::printf("  %-34s %8s %8s\n", "calibrated, in sample", pct(er.fit_ttft).c_str(), pct(er.fit_tpot).c_str());
        std::printf("  %-34s %8s %8s\n", "calibrated, held out", pct(er.held_ttft).c_str(), pct(er.held_tpot).c_str());
        std::printf("  %-32s %14s %10s %10s %22s\n", "constant", "range", "shipped", "calibrated", "90% interval");
        for (const calib::ConstantReport& c : er.constants) {
            const std::string range = num(c.lo) + " .. " + num(c.hi);
            const std::string ci = std::isfinite(c.ci_lo) ? num(c.ci_lo) + " .. " + num(c.ci_hi) : "-";
            std::printf("  %-32s %14s %10s %10s %22s\n", c.name, range.c_str(), num(c.shipped).c_str(), num(c.fitted).c_str(), ci.c_str());
        }
        for (const calib::ConstantReport& c : er.constants)
            if (!c.warning.empty()) {
                std::printf("  warning: %s %s\n", c.name, c.warning.c_str());
                std::fprintf(stderr, "moe-roofline: warning: %s.%s %s\n", er.engine.c_str(), c.name, c.warning.c_str());
                ++warnings;
            }
        const moe::EngineConstants& k = er.calibrated;
        auto band = [](double p10, double p90) { return times(p10) + " .. " + times(p90); };
        std::printf("  band (p10 .. p90 of measured / predicted, held out): TTFT %s, TPOT %s, throughput %s\n",
                    band(k.ttft_log_error_p10, k.ttft_log_error_p90).c_str(), band(k.tpot_log_error_p10, k.tpot_log_error_p90).c_str(),
                    band(k.throughput_log_error_p10, k.throughput_log_error_p90).c_str());
    }

    if (!o.test.empty()) {  // runs kept out of the fit: shipped against calibrated constants
        std::vector<runs::Run> test = runs::parse_runs(read_file(o.test), o.test, catalog, moe::builtin_tables(), lo, err);
        if (!err.empty()) throw UsageError(err);
        for (const calib::EngineReport& er : rep.engines) {
            std::vector<double> st, sp, ct, cp;
            for (runs::Run& r : test) {
                if (!r.skip.empty() || r.backend != er.engine) continue;
                calib::predict(r, moe::engine_constants(moe::builtin_engines(), r.scenario), 0);
                st.push_back(std::fabs(r.pred_ttft / r.ttft - 1));
                sp.push_back(std::fabs(r.pred_tpot / r.tpot - 1));
                calib::predict(r, moe::engine_constants(rep.set, r.scenario), 0);
                ct.push_back(std::fabs(r.pred_ttft / r.ttft - 1));
                cp.push_back(std::fabs(r.pred_tpot / r.tpot - 1));
            }
            if (st.empty()) continue;
            std::printf("\n%s: %zu test runs of %s (not in the fit), median |error|: shipped TTFT %s TPOT %s; calibrated TTFT %s TPOT %s\n",
                        er.engine.c_str(), st.size(), o.test.c_str(), pct(calib::median(st)).c_str(), pct(calib::median(sp)).c_str(),
                        pct(calib::median(ct)).c_str(), pct(calib::median(cp)).c_str());
        }
    }

    const moe::EmbeddedFile* f = shipped_engines_file();
    const nlohmann::json shipped = f ? nlohmann::json::parse(f->data, f->data + f->size, nullptr, false) : nlohmann::json::object();
    const nlohmann::json out = calib::engines_json(shipped.is_discarded() ? nlohmann::json::object() : shipped, rep, o.runs);
    // the file must load back as it will be used (--engines): a check of our own writer
    engines_from_text(out.dump(), "calibrate: the written file");
    OutputFile file(o.output);
    file.buffer() = out.dump(2) + "\n";
    file.commit();
    std::string names;
    for (const calib::EngineReport& er : rep.engines) names += (names.empty() ? "" : ", ") + er.engine;
    std::printf("\nwrote %s (%s calibrated; the other engines as shipped)%s\n", o.output.c_str(),
                names.c_str(), warnings ? "; see the warnings above" : "");
    std::fflush(stdout);
    return 0;
}

}  // namespace cli
