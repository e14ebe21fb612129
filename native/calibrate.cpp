// calibrate.cpp — fitting engine constants to measured serving runs (see calibrate.h).
//
// [SECTION] prediction and loss
// [SECTION] the search
// [SECTION] quantiles and the band
// [SECTION] calibrate(): fit, held-out predictions, bootstrap, warnings
// [SECTION] the engines file
#include "calibrate.h"

#include "core/serving/simulate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

namespace calib {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] prediction and loss
// ---------------------------------------------------------------------------------------------------------------

const std::vector<Param>& params() {
    static const std::vector<Param> v = [] {
        std::vector<Param> out;
        for (const moe::EngineConstantInfo& i : moe::fitted_engine_constants())
            out.push_back({i.name, i.field, i.lo, i.hi, (i.hi - i.lo) / 12.0});
        return out;
    }();
    return v;
}

// The serving set comes from two benchmark harnesses (serving_runs.cpp, length_spread_of): InferenceMAX's sa-bench
// client against the engine's own server, and AIConfigurator's own collection. Their clients (and whatever frontend
// sits in front of the engine) spend different time per request before the first token arrives; the model prices
// the engine, so the validator estimates, per engine, what AIConfigurator's collection adds to each TTFT
// (`client_ms`, not a product constant: a user's scenario has none of it; calibrate passes 0).
void predict(runs::Run& r, const moe::EngineConstants& trial, double client_ms) {
    // (the trial constants as the run's scenario runs them: engine_constants()'s view, moe::as_run)
    const moe::EngineConstants k = moe::as_run(trial, r.scenario);
    const moe::ServingResult s = r.sim ? moe::simulate(r.scenario, r.surface, k) : moe::serving_model(r.scenario, r.steps, k);
    r.pred_ttft = s.ttft_ms + (r.aic_client ? client_ms : 0.0);
    r.pred_tpot = s.tpot_ms;
    char b[256];
    std::snprintf(b, sizeof b, "prefill=%.4g queue=%.4g wave=%.4g ovh=%.4g dec=%.4g pf=%.4g run=%.4g kv=%.4g", s.ttft_prefill_ms,
                  s.ttft_queue_ms, s.ttft_first_wave_ms, s.ttft_overhead_ms, s.tpot_decode_ms, s.tpot_prefill_ms, s.running_batch,
                  s.kv_transfer_ms);
    r.parts = b;
}

namespace {
// loss() with each run counted `w[i]` times (the bootstrap's resamples); w null: once each.
double weighted_loss(std::vector<runs::Run*>& rows, const moe::EngineConstants& k, double client_ms, const std::vector<double>* w) {
    // rows split over two threads (the simulation takes ~0.3 ms a row); each sums its own part
    auto part = [&](size_t begin, size_t end, double* out) {
        double sum = 0;
        for (size_t i = begin; i < end; ++i) {
            runs::Run* r = rows[i];
            predict(*r, k, client_ms);
            const double a = std::log(std::max(1e-3, r->pred_ttft) / r->ttft), b = std::log(std::max(1e-3, r->pred_tpot) / r->tpot);
            // capped: a row off by more than 50% (a run the model does not describe) pulls no harder than that
            const double e = std::min(std::fabs(a), kLossCap) + std::min(std::fabs(b), kLossCap);
            if (w) sum += (*w)[i] * e;
            else sum += e;
        }
        *out = sum;
    };
    double s0 = 0, s1 = 0;
    const size_t half = rows.size() / 2;
    if (!rows.empty() && rows[0]->sim && rows.size() >= 64) {
        std::thread t1(part, half, rows.size(), &s1);
        part(0, half, &s0);
        t1.join();
    } else {
        part(0, rows.size(), &s0);
    }
    if (rows.empty()) return 0;
    if (!w) return (s0 + s1) / rows.size();
    double total = 0;
    for (double x : *w) total += x;
    return total > 0 ? (s0 + s1) / total : 0;
}
}  // namespace

double loss(std::vector<runs::Run*>& rows, const moe::EngineConstants& k, double client_ms) {
    return weighted_loss(rows, k, client_ms, nullptr);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] the search
// ---------------------------------------------------------------------------------------------------------------

namespace {
moe::EngineConstants search(std::vector<runs::Run*>& rows, moe::EngineConstants k, double& client_ms, const FitOptions& o,
                            const std::vector<double>* w) {
    if (rows.empty()) return k;
    const std::vector<Param>& ps = params();
    const int np = int(ps.size());
    const int n = o.fit_client ? np + 1 : np;  // coordinate np: the client time
    std::vector<double> steps(size_t(np) + 1);
    for (int i = 0; i < np; ++i) steps[i] = ps[i].step;
    steps[np] = kClientStep;
    double best = weighted_loss(rows, k, client_ms, w);
    // a trial: constant i (np: the client time) set to v
    auto trial = [&](int i, double v, moe::EngineConstants& t, double& c) {
        t = k;
        c = client_ms;
        if (i == np) c = std::clamp(v, 0.0, kClientHi);
        else t.*ps[i].field = std::clamp(v, ps[i].lo, ps[i].hi);
    };
    auto value = [&](int i) { return i == np ? client_ms : k.*ps[i].field; };
    // A coordinate sweep over each constant's whole range first (9 points each): a constant whose effect only
    // shows past a threshold (the host-bound decode step) is found even from a start where it changes nothing.
    if (o.coarse_sweep)
        for (int i = 0; i < n; ++i) {
            const double lo = i == np ? 0.0 : ps[i].lo, hi = i == np ? kClientHi : ps[i].hi;
            for (int g = 0; g <= 8; ++g) {
                moe::EngineConstants t;
                double c;
                trial(i, lo + (hi - lo) * g / 8.0, t, c);
                const double l = weighted_loss(rows, t, c, w);
                if (l < best - 1e-12) {
                    best = l;
                    k = t;
                    client_ms = c;
                }
            }
        }
    for (int round = 0; round < 200; ++round) {
        bool moved = false;
        for (int i = 0; i < n; ++i) {
            for (double dir : {1.0, -1.0}) {
                moe::EngineConstants t;
                double c;
                trial(i, value(i) + dir * steps[i], t, c);
                if ((i == np ? c : t.*ps[i].field) == value(i)) continue;
                const double l = weighted_loss(rows, t, c, w);
                if (l < best - 1e-12) {
                    best = l;
                    k = t;
                    client_ms = c;
                    moved = true;
                    break;
                }
            }
        }
        if (!moved) {
            bool any = false;
            for (int i = 0; i < n; ++i) {
                steps[i] *= 0.5;
                any = any || steps[i] > (i == np ? kClientStep : ps[i].step) / 8;
            }
            if (!any) break;
        }
    }
    return k;
}
}  // namespace

moe::EngineConstants fit_engine(std::vector<runs::Run*>& rows, moe::EngineConstants k, double& client_ms, const FitOptions& o) {
    return search(rows, k, client_ms, o, nullptr);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] quantiles and the band
// ---------------------------------------------------------------------------------------------------------------

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double at = q * double(v.size() - 1);
    const size_t i = size_t(std::floor(at));
    if (i + 1 >= v.size()) return v.back();
    return v[i] + (at - double(i)) * (v[i + 1] - v[i]);
}

void set_band(const std::vector<const runs::Run*>& held_out, moe::EngineConstants& k) {
    std::vector<double> a, b, c;
    for (const runs::Run* r : held_out) {
        if (!r->skip.empty() || !(r->pred_ttft > 0) || !(r->pred_tpot > 0)) continue;
        a.push_back(std::log(r->ttft / r->pred_ttft));
        b.push_back(std::log(r->tpot / r->pred_tpot));
        // a closed loop of fixed clients: throughput = clients x OSL / E2E, so measured / predicted throughput is
        // predicted / measured E2E (E2E = TTFT + (OSL - 1) x TPOT)
        const double e2e = r->ttft + (r->osl - 1) * r->tpot, pe2e = r->pred_ttft + (r->osl - 1) * r->pred_tpot;
        c.push_back(std::log(pe2e / e2e));
    }
    // four digits, as the file is written (and clamped to the parser's range)
    auto q = [](const std::vector<double>& v, double p) {
        char s[32];
        std::snprintf(s, sizeof s, "%.4g", std::clamp(quantile(v, p), -5.0, 5.0));
        return std::strtod(s, nullptr);
    };
    k.ttft_log_error_p10 = q(a, 0.1);
    k.ttft_log_error_p90 = q(a, 0.9);
    k.tpot_log_error_p10 = q(b, 0.1);
    k.tpot_log_error_p90 = q(b, 0.9);
    k.throughput_log_error_p10 = q(c, 0.1);
    k.throughput_log_error_p90 = q(c, 0.9);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] calibrate(): fit, held-out predictions, bootstrap, warnings
// ---------------------------------------------------------------------------------------------------------------

namespace {
const char* const kEngineNames[] = {"sglang", "vllm", "trtllm"};

struct Medians {
    double ttft, tpot;
};
Medians medians_of(const std::vector<runs::Run*>& rs) {
    std::vector<double> a, b;
    for (const runs::Run* r : rs) {
        a.push_back(std::fabs(r->pred_ttft / r->ttft - 1));
        b.push_back(std::fabs(r->pred_tpot / r->tpot - 1));
    }
    return {median(a), median(b)};
}
std::string sig3(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}
}  // namespace

CalibrationReport calibrate(std::vector<runs::Run>& rows, const moe::EngineSet& start, const CalibrateOptions& o,
                            void (*progress)(const std::string&)) {
    CalibrationReport rep;
    rep.set = start;
    const std::vector<Param>& ps = params();
    const FitOptions fit_o{/*fit_client=*/false, /*coarse_sweep=*/true};
    for (int e = 0; e < 3; ++e) {
        std::vector<runs::Run*> mine;
        for (runs::Run& r : rows)
            if (r.skip.empty() && r.backend == kEngineNames[e]) mine.push_back(&r);
        if (mine.empty()) continue;
        EngineReport er;
        er.engine = kEngineNames[e];
        er.runs = int(mine.size());
        const int n = er.runs;
        auto say = [&](const std::string& what) {
            if (progress) progress(er.engine + ": " + what);
        };
        const moe::EngineConstants& k0 = start.engines[e];
        for (runs::Run* r : mine) predict(*r, k0, 0);
        const Medians before = medians_of(mine);
        er.before_ttft = before.ttft;
        er.before_tpot = before.tpot;
        say("fitting on " + std::to_string(n) + " runs");
        double c = 0;
        const moe::EngineConstants fitted = fit_engine(mine, k0, c, fit_o);
        const double l0 = loss(mine, fitted, 0);  // (leaves the fit's predictions in the runs)
        const Medians in_sample = medians_of(mine);
        er.fit_ttft = in_sample.ttft;
        er.fit_tpot = in_sample.tpot;
        // Held out: leave-one-out up to 10 runs, else k-fold (run i in fold i mod k: interleaved, deterministic);
        // each fold's constants fitted from the starting constants on the other runs only.
        er.folds = o.folds > 0 ? std::min(o.folds, n) : (n <= 10 ? n : 5);
        std::vector<double> held_ttft(size_t(n), NAN), held_tpot(size_t(n), NAN);
        if (n >= 2)
            for (int f = 0; f < er.folds; ++f) {
                say("held-out fold " + std::to_string(f + 1) + " of " + std::to_string(er.folds));
                std::vector<runs::Run*> train;
                for (int i = 0; i < n; ++i)
                    if (i % er.folds != f) train.push_back(mine[size_t(i)]);
                double cf = 0;
                const moe::EngineConstants kf = fit_engine(train, k0, cf, fit_o);
                for (int i = f; i < n; i += er.folds) {
                    predict(*mine[size_t(i)], kf, 0);
                    held_ttft[size_t(i)] = mine[size_t(i)]->pred_ttft;
                    held_tpot[size_t(i)] = mine[size_t(i)]->pred_tpot;
                }
            }
        // Bootstrap: resample the runs with replacement, refit from the fit (a local search), keep each constant.
        er.bootstrap = o.bootstrap;
        std::vector<std::vector<double>> draws(ps.size());
        std::mt19937_64 rng(o.seed + std::uint64_t(e));
        for (int b = 0; b < o.bootstrap; ++b) {
            if (b % 5 == 0) say("bootstrap " + std::to_string(b + 1) + " of " + std::to_string(o.bootstrap));
            std::vector<double> w(size_t(n), 0.0);
            for (int i = 0; i < n; ++i) w[size_t(rng() % std::uint64_t(n))] += 1;
            double cb = 0;
            const moe::EngineConstants kb = search(mine, fitted, cb, FitOptions{false, false}, &w);
            for (size_t p = 0; p < ps.size(); ++p) draws[p].push_back(kb.*ps[p].field);
        }
        // Each constant: its interval, how much the loss cares, and whether the runs pin it.
        for (size_t p = 0; p < ps.size(); ++p) {
            const Param& pr = ps[p];
            ConstantReport cr;
            cr.name = pr.name;
            cr.lo = pr.lo;
            cr.hi = pr.hi;
            cr.shipped = k0.*pr.field;
            cr.fitted = fitted.*pr.field;
            if (!draws[p].empty()) {
                cr.ci_lo = quantile(draws[p], 0.05);
                cr.ci_hi = quantile(draws[p], 0.95);
            }
            double worst = 0;
            for (double v : {pr.lo, pr.hi}) {
                moe::EngineConstants t = fitted;
                t.*pr.field = v;
                worst = std::max(worst, std::fabs(loss(mine, t, 0) - l0));
            }
            cr.flat = l0 > 0 ? worst / l0 : 0;
            const double range = pr.hi - pr.lo;
            if (cr.flat < 0.01)
                cr.warning = "not pinned: the loss changes by " + sig3(100 * cr.flat) + "% over its whole range (these runs do not exercise it)";
            else if (!draws[p].empty() && cr.ci_hi - cr.ci_lo > 0.5 * range)
                cr.warning = "not pinned: its 90% interval spans " + sig3(100 * (cr.ci_hi - cr.ci_lo) / range) + "% of its range";
            else if (cr.fitted <= pr.lo + 0.005 * range || cr.fitted >= pr.hi - 0.005 * range)
                cr.warning = std::string("at the ") + (cr.fitted <= pr.lo + 0.005 * range ? "low" : "high") +
                             " end of its range: the runs would take it further than the physical range allows";
            er.constants.push_back(cr);
        }
        // Held-out predictions back into the runs: the typical errors and the band come from them.
        er.calibrated = fitted;
        std::vector<const runs::Run*> held;
        for (int i = 0; i < n; ++i) {
            runs::Run* r = mine[size_t(i)];
            r->pred_ttft = held_ttft[size_t(i)];
            r->pred_tpot = held_tpot[size_t(i)];
            if (std::isfinite(r->pred_ttft)) held.push_back(r);
        }
        if (!held.empty()) {
            std::vector<runs::Run*> hv;
            for (const runs::Run* r : held) hv.push_back(const_cast<runs::Run*>(r));
            const Medians hm = medians_of(hv);
            er.held_ttft = hm.ttft;
            er.held_tpot = hm.tpot;
            er.calibrated.ttft_typical_error = std::strtod(sig3(hm.ttft).c_str(), nullptr);
            er.calibrated.tpot_typical_error = std::strtod(sig3(hm.tpot).c_str(), nullptr);
            set_band(held, er.calibrated);
        }
        rep.set.engines[e] = er.calibrated;
        rep.engines.push_back(std::move(er));
    }
    return rep;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] the engines file
// ---------------------------------------------------------------------------------------------------------------

nlohmann::json engines_json(const nlohmann::json& shipped, const CalibrationReport& rep, const std::string& source) {
    nlohmann::json j = shipped.is_object() ? shipped : nlohmann::json::object();
    std::string engines;
    for (const EngineReport& er : rep.engines) engines += (engines.empty() ? "" : ", ") + er.engine;
    j["_comment"] = "Serving engines' constants (core/serving/engine.h), calibrated by `moe-roofline calibrate` on " + source +
                    " for " + engines + "; the other engines as shipped (presets/engines.json).";
    auto four = [](double v) {
        char b[32];
        std::snprintf(b, sizeof b, "%.4g", v);
        return std::strtod(b, nullptr);
    };
    for (const EngineReport& er : rep.engines) {
        nlohmann::json& o = j[er.engine];
        const std::string fitted = "fitted by moe-roofline calibrate on " + source + " (" + std::to_string(er.runs) + " runs)";
        for (const ConstantReport& c : er.constants) {
            o[c.name] = {{"value", four(c.fitted)}, {"source", fitted}};
            if (std::isfinite(c.ci_lo)) o[c.name]["interval_90"] = {four(c.ci_lo), four(c.ci_hi)};
            if (!c.warning.empty()) o[c.name]["warning"] = c.warning;
        }
        const std::string held = "held-out predictions of " + source + " (" +
                                 (er.folds == er.runs ? std::string("leave-one-out") : std::to_string(er.folds) + "-fold") + ")";
        const moe::EngineConstants& k = er.calibrated;
        const std::pair<const char*, double> measured[] = {
            {"ttft_typical_error", k.ttft_typical_error},       {"tpot_typical_error", k.tpot_typical_error},
            {"ttft_log_error_p10", k.ttft_log_error_p10},       {"ttft_log_error_p90", k.ttft_log_error_p90},
            {"tpot_log_error_p10", k.tpot_log_error_p10},       {"tpot_log_error_p90", k.tpot_log_error_p90},
            {"throughput_log_error_p10", k.throughput_log_error_p10}, {"throughput_log_error_p90", k.throughput_log_error_p90}};
        for (const auto& [name, v] : measured)
            o[name] = {{"value", v},
                       {"source", std::string(std::string(name).find("typical") != std::string::npos ? "median |error| of the "
                                                                                                     : "10th / 90th percentile of log(measured / predicted) over the ") +
                                      held}};
    }
    return j;
}

}  // namespace calib
