// moe-validate — the model against published measurements and against InferSim (DESIGN §7).
//
//   moe-validate                                      print predicted vs measured per case; exit 1 on a miss
//   moe-validate --write docs/validation.md --readme README.md      regenerate the report and the README summary
//   moe-validate --fit [--write-calibration presets/calibration.json]     refit the constants, leave-one-out
//   moe-validate --check-csv tests/validation/public_measurements.csv --check-runs tests/validation/infersim_runs
//   moe-validate --check-fit                          the shipped calibration is what the fit produces
//   moe-validate --calibration FILE                   evaluate with another calibration.json (before rebuilding)
//   moe-validate --serving [...]                     the serving set (tests/validation/serving.h)
//   moe-validate --strict                             model-gap cases out of tolerance fail too
//
// Exit status: 0 all good, 1 a check failed (each named on stderr), 2 bad usage or unreadable input.
//
// [SECTION] evaluation and the pass rules
// [SECTION] console output
// [SECTION] calibration: reading, writing, reproducibility
// [SECTION] coverage checks (CSV rows, InferSim outputs)
// [SECTION] main
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cases.h"
#include "fit.h"
#include "report.h"
#include "serving.h"
#include "native/serving_runs.h"

namespace val {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] evaluation and the pass rules
// ---------------------------------------------------------------------------------------------------------------

std::vector<Result> evaluate(const std::vector<Case>& cases, const moe::Tables& tables) {
    std::vector<Result> out;
    for (const Case& c : cases) {
        moe::Estimate e = run(c, tables);
        const double p = e.ok ? c.extract(e) : std::nan("");
        const double err = p / c.measured - 1.0;
        Result r{&c, p, err, std::isfinite(err) && std::fabs(err) <= c.tolerance, std::nan(""), std::nan("")};
        if (c.policy_normalised) {
            r.normalised = c.policy_normalised(tables.calibration);
            r.normalised_error = p / r.normalised - 1.0;
            r.pass = r.pass || (std::isfinite(r.normalised_error) && std::fabs(r.normalised_error) <= c.tolerance);
        }
        out.push_back(r);
    }
    return out;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Summary summarise(const std::vector<Result>& rs, bool reference_model, const std::string& set, bool without_gaps) {
    Summary s;
    std::vector<double> a;
    for (const Result& r : rs) {
        if (r.c->reference_model != reference_model || (!set.empty() && r.c->set != set)) continue;
        if (without_gaps && !r.c->model_gap.empty()) continue;
        const double e = std::isfinite(r.error) ? std::fabs(r.error) : 1e9;
        a.push_back(e);
        s.count++;
        s.passed += r.pass;
        s.gaps += !r.c->model_gap.empty();
        if (e >= s.max_abs) { s.max_abs = e; s.worst = r.c->id; }
    }
    s.median_abs = median(a);
    return s;
}

std::vector<std::string> sets_in_order(const std::vector<Result>& rs, bool reference_model) {
    std::vector<std::string> sets;
    for (const Result& r : rs)
        if (r.c->reference_model == reference_model && std::find(sets.begin(), sets.end(), r.c->set) == sets.end())
            sets.push_back(r.c->set);
    return sets;
}

// The gate: every case in tolerance, the public set's median and maximum within issue 7's bounds, and a written
// cause for each miss over 10%. Cases with a named model gap are exempt from their own tolerance unless `strict`;
// issue 7's bounds (median <= 10%, none beyond 25%) hold over every public case, gap or not. Returns the failures,
// one line each.
std::vector<std::string> gate(const std::vector<Result>& rs, bool strict) {
    std::vector<std::string> f;
    char b[512];
    for (const Result& r : rs) {
        const bool exempt = !strict && !r.c->model_gap.empty() && std::isfinite(r.error);
        if (!r.pass && !exempt) {
            std::snprintf(b, sizeof b, "%s: predicted %.4g %s vs %s %.4g (%+.1f%%), tolerance %.0f%%", r.c->id.c_str(), r.predicted,
                          r.c->unit.c_str(), r.c->reference_model ? "InferSim" : "measured", r.c->measured, 100 * r.error,
                          100 * r.c->tolerance);
            f.push_back(b);
        }
        if (std::isfinite(r.error) && std::fabs(r.error) > kExplainAbove && r.c->miss_note.empty() && r.c->model_gap.empty())
            f.push_back(r.c->id + ": error over 10% without a written cause (Case::miss_note)");
    }
    const Summary pub = summarise(rs, false, "", false);
    if (pub.median_abs > kMedianGate) {
        std::snprintf(b, sizeof b, "public set: median |error| %.1f%% > 10%%", 100 * pub.median_abs);
        f.push_back(b);
    }
    if (pub.max_abs > kMaxGate) {
        std::snprintf(b, sizeof b, "public set: %s is %.1f%% off (> 25%%)", pub.worst.c_str(), 100 * pub.max_abs);
        f.push_back(b);
    }
    return f;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] console output
// ---------------------------------------------------------------------------------------------------------------

std::string num(double v) {
    char b[64];
    if (!std::isfinite(v)) return "n/a";
    const double a = std::fabs(v);
    std::snprintf(b, sizeof b, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
    return b;
}
std::string pct(double v, bool sign) {
    char b[64];
    if (!std::isfinite(v)) return "n/a";
    std::snprintf(b, sizeof b, sign ? "%+.1f%%" : "%.1f%%", 100 * v);
    return b;
}
std::string result_word(const Result& r) {
    const bool raw_pass = std::isfinite(r.error) && std::fabs(r.error) <= r.c->tolerance;
    if (r.pass && !raw_pass) return "pass (policy-normalised)";
    if (r.c->model_gap.empty()) return r.pass ? "pass" : "MISS";
    return r.pass ? "pass (gap)" : "gap";
}

// One CSV line as cells: the serving runs' reader (native/serving_runs), RFC 4180 quotes, a trailing CR dropped.
using runs::split_csv_line;

namespace {

void print_results(const std::vector<Result>& rs) {
    for (bool ref : {false, true}) {
        for (const std::string& set : sets_in_order(rs, ref)) {
            std::printf("\n%s\n", set.c_str());
            std::printf("  %-48s %10s %10s %8s %5s  %s\n", "case", "measured", "predicted", "error", "tol", "result");
            for (const Result& r : rs) {
                if (r.c->reference_model != ref || r.c->set != set) continue;
                std::printf("  %-48s %10s %10s %8s %4.0f%%  %-10s %s\n", r.c->id.c_str(), num(r.c->measured).c_str(),
                            num(r.predicted).c_str(), pct(r.error, true).c_str(), 100 * r.c->tolerance, result_word(r).c_str(),
                            r.c->unit.c_str());
                if (std::isfinite(r.normalised))
                    std::printf("  %-48s %10s %10s %8s  (InferSim's per-op times, our overlap policy and overhead)\n", "",
                                num(r.normalised).c_str(), "", pct(r.normalised_error, true).c_str());
            }
        }
    }
    const Summary all = summarise(rs, false, "", false), nogap = summarise(rs, false, "", true), ref = summarise(rs, true, "", false);
    std::printf("\npublic set: %d cases, %d within tolerance, median |error| %s, max %s (%s)\n", all.count, all.passed,
                pct(all.median_abs, false).c_str(), pct(all.max_abs, false).c_str(), all.worst.c_str());
    std::printf("public set without the %d model-gap cases: %d cases, %d within tolerance, median |error| %s, max %s (%s)\n", all.gaps,
                nogap.count, nogap.passed, pct(nogap.median_abs, false).c_str(), pct(nogap.max_abs, false).c_str(), nogap.worst.c_str());
    std::printf("InferSim cross-check: %d cases, %d within tolerance, median |error| %s, max %s (%s)\n", ref.count, ref.passed,
                pct(ref.median_abs, false).c_str(), pct(ref.max_abs, false).c_str(), ref.worst.c_str());
}

void print_fit(const FitReport& fr, const std::vector<Case>& cases) {
    for (const FitGroupReport& g : fr.groups) {
        std::printf("\n[%s] %s%s\n", fit_group_name(g.group), g.cases_text.c_str(), g.uses_tables ? "" : " (no tables)");
        for (const FitParam& p : g.params)
            std::printf("  %-26s %10.4g -> %10.4g   bounds [%g, %g]\n", p.name, p.before, p.after, p.lo, p.hi);
        for (size_t k = 0; k < g.case_index.size(); ++k) {
            const Case& c = cases[size_t(g.case_index[k])];
            const double l = k < g.loo_error.size() ? g.loo_error[k] : std::nan("");
            std::printf("    %-46s fit %8s   leave-one-out %8s\n", c.id.c_str(), pct(g.fit_error[k], true).c_str(), pct(l, true).c_str());
        }
        const GroupStats s = group_stats(g);
        std::printf("  median |error|: fit %s, leave-one-out %s (max %s)\n", pct(s.fit_median, false).c_str(),
                    pct(s.loo_median, false).c_str(), pct(s.loo_max, false).c_str());
    }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] calibration: reading, writing, reproducibility
// ---------------------------------------------------------------------------------------------------------------

bool read_file(const std::string& path, std::string& out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    std::ostringstream ss;
    ss << f.rdbuf();
    out = ss.str();
    return true;
}

bool write_file(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary);
        if (!f) return false;
        f << text;
        if (!f.good()) return false;
    }
    return std::rename(tmp.c_str(), path.c_str()) == 0;
}

std::string fitted_source(const FitGroupReport& g, const FitParam& p) {
    const GroupStats s = group_stats(g);
    char b[400];
    std::snprintf(b, sizeof b, "; fit median |error| %.1f%%, leave-one-out median %.1f%% (max %.1f%%); bounds [%g, %g]: %s", 100 * s.fit_median,
                  100 * s.loo_median, 100 * s.loo_max, p.lo, p.hi, p.bounds_why);
    std::string out = std::string("fitted by moe-validate --fit on ") + g.cases_text + b;
    const double eps = 1e-3 * (p.hi - p.lo);
    if (p.after >= p.hi - eps || p.after <= p.lo + eps)
        out += std::string("; AT ITS ") + (p.after >= p.hi - eps ? "UPPER" : "LOWER") +
               " BOUND: the rows pull it further, a residual this constant cannot express (docs/validation.md)";
    return out;
}

// Rewrites the fitted constants' values and sources in calibration.json, keeping every other entry and the order.
bool write_calibration(const std::string& path, const FitReport& fr) {
    std::string text;
    if (!read_file(path, text)) {
        std::fprintf(stderr, "moe-validate: cannot read %s\n", path.c_str());
        return false;
    }
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        std::fprintf(stderr, "moe-validate: %s is not a JSON object\n", path.c_str());
        return false;
    }
    for (const FitGroupReport& g : fr.groups) {
        for (const FitParam& p : g.params) {
            const double v = std::round(p.after * 1e4) / 1e4;  // four decimals: well inside the fit's precision
            j[p.name] = {{"value", v}, {"source", fitted_source(g, p)}};
        }
    }
    std::string out = "{\n";
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
        out += first ? "" : ",\n";
        first = false;
        out += "  " + nlohmann::ordered_json(it.key()).dump() + ": " + it.value().dump();
    }
    out += "\n}\n";
    if (!write_file(path, out)) {
        std::fprintf(stderr, "moe-validate: cannot write %s\n", path.c_str());
        return false;
    }
    return true;
}

// The shipped constants are the fit's: refitting from them moves none by more than 1% of its bound range
// (four-decimal rounding in the file and the optimiser's tolerance are far below that).
std::vector<std::string> check_fit(const std::vector<Case>& cases, const moe::Calibration& shipped) {
    std::vector<std::string> f;
    const FitReport fr = fit_all(cases, shipped, false);
    for (const FitGroupReport& g : fr.groups)
        for (const FitParam& p : g.params) {
            const double shipped_v = shipped.*p.field;
            if (std::fabs(p.after - shipped_v) > 0.01 * (p.hi - p.lo)) {
                char b[256];
                std::snprintf(b, sizeof b, "calibration.%s: shipped %.4g but the fit gives %.4g (run moe-validate --fit "
                                           "--write-calibration presets/calibration.json and rebuild)", p.name, shipped_v, p.after);
                f.push_back(b);
            }
        }
    return f;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] coverage checks
// ---------------------------------------------------------------------------------------------------------------


// Every CSV line is pinned by exactly one case (with the same value) or matched by an exclusion.
std::vector<std::string> check_csv(const std::string& path, const std::vector<Case>& cases) {
    std::vector<std::string> f;
    std::string text;
    if (!read_file(path, text)) return {"cannot read " + path};
    std::vector<std::string> lines;
    std::istringstream ss(text);
    for (std::string l; std::getline(ss, l);) lines.push_back(l);
    if (lines.empty()) return {path + ": empty"};
    const std::vector<std::string> head = split_csv_line(lines[0]);
    auto col = [&](const char* name) {
        for (size_t i = 0; i < head.size(); ++i)
            if (head[i] == name) return int(i);
        return -1;
    };
    const int c_metric = col("metric"), c_value = col("value");
    if (c_metric < 0 || c_value < 0) return {path + ": no metric/value columns"};
    const std::vector<Exclusion> ex = exclusions();
    int pinned = 0, excluded = 0;
    for (size_t i = 1; i < lines.size(); ++i) {
        if (lines[i].empty()) continue;
        const int line = int(i) + 1;
        const std::vector<std::string> cells = split_csv_line(lines[i]);
        if (int(cells.size()) <= std::max(c_metric, c_value)) { f.push_back(path + ":" + std::to_string(line) + ": short row"); continue; }
        const double value = std::atof(cells[size_t(c_value)].c_str());
        int hits = 0;
        for (const Case& c : cases)
            for (const auto& [l, v] : c.rows)
                if (l == line) {
                    ++hits;
                    if (std::fabs(v - value) > 1e-9 * std::max(1.0, std::fabs(value)))
                        f.push_back(c.id + ": pins " + num(v) + " for CSV line " + std::to_string(line) + ", the CSV says " + cells[size_t(c_value)]);
                }
        int exhits = 0;
        for (const Exclusion& e : ex)
            if (line >= e.first_line && line <= e.last_line &&
                (e.metric_contains.empty() || cells[size_t(c_metric)].find(e.metric_contains) != std::string::npos))
                ++exhits;
        if (hits + exhits == 0) f.push_back("CSV line " + std::to_string(line) + " (" + cells[size_t(c_metric)] + ") is neither a case nor excluded");
        if (hits + exhits > 1) f.push_back("CSV line " + std::to_string(line) + " is claimed " + std::to_string(hits + exhits) + " times");
        pinned += hits > 0;
        excluded += exhits > 0;
    }
    for (const Case& c : cases)
        for (const auto& [l, v] : c.rows)
            if (l < 2 || l > int(lines.size())) f.push_back(c.id + ": CSV line " + std::to_string(l) + " does not exist");
    std::printf("%s: %zu rows, %d pinned by cases, %d excluded with a reason\n", path.c_str(), lines.size() - 1, pinned, excluded);
    return f;
}

// The InferSim cross-check values equal the 'Throughput (TGS...)' lines of InferSim's outputs.
std::vector<std::string> check_runs(const std::string& dir, const std::vector<Case>& cases) {
    std::vector<std::string> f;
    int checked = 0;
    for (const Case& c : cases) {
        if (!c.reference_model) continue;
        const std::string prefix = "reference/infersim_runs/";
        const size_t a = c.citation.find(prefix), b = c.citation.find(".txt");
        if (a == std::string::npos || b == std::string::npos) { f.push_back(c.id + ": citation names no run file"); continue; }
        const std::string file = c.citation.substr(a + prefix.size(), b + 4 - a - prefix.size());
        std::string text;
        if (!read_file(dir + "/" + file, text)) { f.push_back(c.id + ": cannot read " + dir + "/" + file); continue; }
        // Prefill and decode sections each end with one throughput line; take the one of the case's phase.
        const bool prefill = c.id.find(".prefill.") != std::string::npos;
        const size_t sec = text.find(prefill ? "Prefilling" : "Decoding");
        const size_t t = sec == std::string::npos ? sec : text.find("Throughput (TGS", sec);
        if (t == std::string::npos) { f.push_back(c.id + ": no throughput line in " + file); continue; }
        const size_t colon = text.find(':', text.find(')', t));
        const double v = std::atof(text.c_str() + colon + 1);
        if (std::fabs(v - c.measured) > 0.5) f.push_back(c.id + ": pins " + num(c.measured) + ", " + file + " says " + num(v));
        for (const auto& [label, pinned] : c.infersim_ops) {
            const size_t at = text.find(label, sec);
            if (at == std::string::npos || at > t) { f.push_back(c.id + ": no '" + label + "' in " + file); continue; }
            const double x = std::atof(text.c_str() + at + label.size());
            if (std::fabs(x - pinned) > 0.005) f.push_back(c.id + ": pins " + label + " " + num(pinned) + ", " + file + " says " + num(x));
        }
        ++checked;
    }
    std::printf("%s: %d InferSim outputs checked\n", dir.c_str(), checked);
    return f;
}

}  // namespace
}  // namespace val

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] main
// ---------------------------------------------------------------------------------------------------------------

int main(int argc, char** argv) {
    using namespace val;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--serving") == 0) return serving_main(argc, argv);
    std::string write_path, readme_path, calib_in, calib_out, csv_path, runs_dir;
    bool do_fit = false, do_check_fit = false, strict = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&](std::string& dst) {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "moe-validate: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            dst = argv[++i];
        };
        if (a == "--write") next(write_path);
        else if (a == "--readme") next(readme_path);
        else if (a == "--calibration") next(calib_in);
        else if (a == "--write-calibration") next(calib_out);
        else if (a == "--check-csv") next(csv_path);
        else if (a == "--check-runs") next(runs_dir);
        else if (a == "--fit") do_fit = true;
        else if (a == "--check-fit") do_check_fit = true;
        else if (a == "--strict") strict = true;
        else if (a == "-h" || a == "--help") {
            std::puts("usage: moe-validate [--write docs/validation.md] [--readme README.md] [--strict]\n"
                      "                    [--fit [--write-calibration presets/calibration.json]] [--check-fit]\n"
                      "                    [--check-csv CSV] [--check-runs DIR] [--calibration FILE]");
            return 0;
        } else {
            std::fprintf(stderr, "moe-validate: unknown option %s (see --help)\n", a.c_str());
            return 2;
        }
    }
    if (!calib_out.empty() && !do_fit) {
        std::fprintf(stderr, "moe-validate: --write-calibration needs --fit\n");
        return 2;
    }
    moe::Calibration cal = moe::builtin_tables().calibration;
    if (!calib_in.empty()) {
        std::string text;
        if (!read_file(calib_in, text)) {
            std::fprintf(stderr, "moe-validate: cannot read %s\n", calib_in.c_str());
            return 2;
        }
        moe::Issues errs;
        if (!moe::parse_calibration(nlohmann::json::parse(text, nullptr, false), cal, errs)) {
            std::fprintf(stderr, "moe-validate: %s: %s\n", calib_in.c_str(), errs.empty() ? "invalid" : errs[0].text().c_str());
            return 2;
        }
    }

    const std::vector<Case> cases = build_cases();
    std::vector<std::string> fails;

    // Coverage and reproducibility checks run alone (their own ctest entries).
    if (!csv_path.empty() || !runs_dir.empty() || do_check_fit) {
        if (!csv_path.empty()) for (auto& s : check_csv(csv_path, cases)) fails.push_back(s);
        if (!runs_dir.empty()) for (auto& s : check_runs(runs_dir, cases)) fails.push_back(s);
        if (do_check_fit) {
            for (auto& s : check_fit(cases, cal)) fails.push_back(s);
            if (fails.empty()) std::printf("calibration: refitting reproduces every fitted constant\n");
        }
        for (const std::string& s : fails) std::fprintf(stderr, "FAIL %s\n", s.c_str());
        return fails.empty() ? 0 : 1;
    }

    const std::vector<Result> rs = evaluate(cases, tables_with(cal));
    print_results(rs);

    FitReport fr;
    const bool need_fit = do_fit || !write_path.empty();
    if (need_fit) {
        fr = fit_all(cases, cal, true);
        if (do_fit) print_fit(fr, cases);
        if (!calib_out.empty()) {
            if (!write_calibration(calib_out, fr)) return 2;
            std::printf("\nwrote %s (rebuild to embed it)\n", calib_out.c_str());
        }
    }
    if (!write_path.empty()) {
        // keep the serving set's section (moe-validate --serving --write) where it is
        std::string report = report_markdown(rs, fr, cases, cal), old;
        if (read_file(write_path, old)) {
            const size_t a = old.find("<!-- serving-validation:begin -->"), b = old.find("<!-- serving-validation:end -->");
            if (a != std::string::npos && b != std::string::npos && b > a)
                report += "\n" + old.substr(a, b - a) + "<!-- serving-validation:end -->\n";
        }
        if (!write_file(write_path, report)) {
            std::fprintf(stderr, "moe-validate: cannot write %s\n", write_path.c_str());
            return 2;
        }
        std::printf("wrote %s\n", write_path.c_str());
    }
    if (!readme_path.empty()) {
        std::string text;
        if (!read_file(readme_path, text)) {
            std::fprintf(stderr, "moe-validate: cannot read %s\n", readme_path.c_str());
            return 2;
        }
        const std::string begin = "<!-- validation:begin -->", end = "<!-- validation:end -->";
        const size_t a = text.find(begin), b = text.find(end);
        if (a == std::string::npos || b == std::string::npos || b < a) {
            std::fprintf(stderr, "moe-validate: %s has no %s ... %s section\n", readme_path.c_str(), begin.c_str(), end.c_str());
            return 2;
        }
        text = text.substr(0, a + begin.size()) + "\n" + readme_section(rs) + text.substr(b);
        if (!write_file(readme_path, text)) {
            std::fprintf(stderr, "moe-validate: cannot write %s\n", readme_path.c_str());
            return 2;
        }
        std::printf("updated the validation section of %s\n", readme_path.c_str());
    }
    fails = gate(rs, strict);
    for (const std::string& s : fails) std::fprintf(stderr, "FAIL %s\n", s.c_str());
    return fails.empty() ? 0 : 1;
}
