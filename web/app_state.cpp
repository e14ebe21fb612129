// app_state.cpp — the page's logic outside of drawing: fragment in and out, edits, loading files, recompute with
// the sweeps, the test hook.
#include "app_state.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace web {

namespace {

constexpr std::size_t kMaxUserJson = 4 << 20;  // a dropped or pasted file larger than this is refused
constexpr int kSweepPoints = 256;
constexpr int kFrontierPoints = 64;
constexpr int kServingSweepPoints = 128;  // the Sweep chart on a serving axis (each point runs the serving layer)
constexpr int kServingPoints = 64;        // the Serving tab's charts

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string clip(const std::string& s, std::size_t n = 300) { return s.size() <= n ? s : s.substr(0, n) + "\u2026"; }

// "k=v&k=v" -> value of key (first), or "" when absent.
std::string fragment_param(std::string_view frag, std::string_view key) {
    while (!frag.empty()) {
        const std::size_t amp = frag.find('&');
        const std::string_view part = frag.substr(0, amp);
        if (part.size() > key.size() && part.substr(0, key.size()) == key && part[key.size()] == '=')
            return std::string(part.substr(key.size() + 1));
        if (amp == std::string_view::npos) break;
        frag.remove_prefix(amp + 1);
    }
    return {};
}

moe::Scenario defaults(const moe::Catalog& cat) { return moe::decode_fragment("", cat).scenario; }

// Nesting deeper than the core accepts is refused before parsing: printing or copying such a value recurses once
// per level (a pasted config a million levels deep overflowed the stack).
bool nested_too_deep(std::string_view text) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (char ch : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (ch == '\\') escaped = true;
            else if (ch == '"') in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '[' || ch == '{') {
            deepest = std::max(deepest, ++depth);
        } else if (ch == ']' || ch == '}') {
            --depth;
        }
    }
    return deepest > 64;
}

bool looks_like_hf_config(const nlohmann::json& j) {
    static const char* const keys[] = {"hidden_size", "num_hidden_layers", "architectures", "model_type", "text_config",
                                       "num_attention_heads", "vocab_size"};
    for (const char* k : keys)
        if (j.contains(k)) return true;
    return false;
}

}  // namespace

void load_fragment(AppState& st, std::string_view fragment) {
    if (!fragment.empty() && fragment.front() == '#') fragment.remove_prefix(1);
    st.notice.clear();
    st.notice_details.clear();
    moe::ParseResult r = moe::decode_fragment(fragment, *st.catalog);
    if (!r.ok()) {
        st.notice = "The scenario in this link could not be read; showing the defaults instead.";
        for (const moe::Issue& i : r.errors) st.notice_details.push_back(clip(i.text()));
        st.scenario = defaults(*st.catalog);
    } else {
        st.scenario = std::move(r.scenario);
    }
    // The view: unknown or malformed values are ignored (they only choose what the charts show).
    st.view = ViewState();
    SweepAxis axis;
    if (sweep_axis_from_key(fragment_param(fragment, "x"), axis)) {
        st.view.sweep_axis = axis;
        st.view.sweep_axis_set = true;
    }
    const std::string y = fragment_param(fragment, "y");
    if (numeric_column_index(y) >= 0) st.view.sweep_y = y;
    const std::string ph = fragment_param(fragment, "ph");
    if (ph == "prefill") st.view.phase = PhaseView::prefill;
    if (ph == "decode") st.view.phase = PhaseView::decode;
    // A pinned scenario A travels as &a=<the same encoding as s>.
    st.a = Pinned();
    const std::string a = fragment_param(fragment, "a");
    if (!a.empty() && r.ok()) {
        moe::ParseResult ra = moe::decode_fragment("s=" + a, *st.catalog);
        if (ra.ok()) {
            st.a.active = true;
            st.a.scenario = std::move(ra.scenario);
        } else {
            st.notice = "The pinned scenario A in this link could not be read; it was left out.";
            for (const moe::Issue& i : ra.errors) st.notice_details.push_back(clip(i.text()));
        }
    }
    st.a_dirty = st.a.active;
    // The plan's settings: a link that has them opens the Plan tab and runs the search.
    const std::string plan = fragment_param(fragment, "plan");
    if (!plan.empty()) {
        PlanSettings p;
        if (plan_settings_from_text(plan, p)) {
            st.plan.settings = p;
            st.plan.in_url = true;
            st.plan.run_requested = true;
            st.requested_tab = 5;
        }
    }
    st.edit_errors.clear();
    st.edit_error_path.clear();
    st.dirty = true;
    st.sweep_dirty = true;
    st.fragment_dirty = false;  // keep the user's link as it is until they edit
    st.last_fragment = std::string(fragment);
}

std::string build_fragment(const AppState& st) {
    std::string f = moe::encode_fragment(st.scenario);
    if (st.a.active) f += "&a=" + moe::encode_fragment(st.a.scenario).substr(2);
    if (st.view.sweep_axis_set) f += std::string("&x=") + sweep_axis_info(st.view.sweep_axis).key;
    if (!st.view.sweep_y.empty()) f += "&y=" + st.view.sweep_y;
    if (st.view.phase == PhaseView::prefill) f += "&ph=prefill";
    if (st.view.phase == PhaseView::decode) f += "&ph=decode";
    if (st.plan.in_url) f += "&plan=" + plan_settings_text(st.plan.settings);
    return f;
}

bool edit_field(AppState& st, std::string_view path, const nlohmann::json& value) {
    moe::Issues errs;
    moe::Scenario next = st.scenario;
    if (!moe::set_path(next, path, value, *st.catalog, errs)) {
        st.edit_errors = std::move(errs);
        st.edit_error_path = std::string(path);
        return false;
    }
    follow_serving_edit(st.scenario, next, path, *st.tables);
    st.scenario = std::move(next);
    st.edit_errors.clear();
    st.edit_error_path.clear();
    st.dirty = true;
    st.fragment_dirty = true;
    return true;
}

void set_scenario(AppState& st, moe::Scenario s) {
    st.scenario = std::move(s);
    st.edit_errors.clear();
    st.edit_error_path.clear();
    st.dirty = true;
    st.fragment_dirty = true;
}

bool apply_model_config(AppState& st, std::string_view text) {
    st.config_errors.clear();
    if (text.size() > kMaxUserJson) {
        st.config_errors.push_back("the file is larger than 4 MB; a config.json is a few kB");
        return false;
    }
    if (nested_too_deep(text)) {
        st.config_errors.push_back("nested deeper than 64 levels: not a config.json");
        return false;
    }
    nlohmann::json j;
    moe::JsonTextError bad;
    if (!moe::parse_json_text(text, j, bad) && bad.number_out_of_range) {  // 1e999: say where, as the CLI does
        st.config_errors.push_back(clip(bad.message));
        return false;
    }
    if (j.is_discarded() || !j.is_object()) {
        st.config_errors.push_back("not a JSON object: paste the whole config.json");
        return false;
    }
    moe::Issues errs;
    moe::Scenario next = st.scenario;
    if (!moe::set_path(next, "model", j, *st.catalog, errs)) {
        for (const moe::Issue& i : errs) st.config_errors.push_back(clip(i.text()));
        return false;
    }
    set_scenario(st, std::move(next));
    return true;
}

std::string load_trace_text(AppState& st, std::string_view text, const std::string& name, bool csv) {
    nlohmann::json list;
    std::string error;
    moe::Issues errs;
    moe::Scenario next = st.scenario;
    if (!moe::trace_text_to_json(text, csv, "workload.trace: " + name, list, error)) errs.push_back({"workload.trace", error});
    else if (moe::set_path(next, "workload.trace", list, *st.catalog, errs)) {
        if (next.serving.mode == moe::ServingMode::off) next.serving.mode = moe::ServingMode::aggregated;  // a trace is served
        const moe::Issues cross = moe::validate_scenario(next);
        errs.insert(errs.end(), cross.begin(), cross.end());
    }
    if (!errs.empty()) {
        st.notice = "The trace " + name + " cannot be used:";
        st.notice_details.clear();
        for (const moe::Issue& i : errs) st.notice_details.push_back(clip(i.path == "workload.trace" && i.message.rfind("workload.trace", 0) == 0 ? i.message : i.text()));
        return "";
    }
    set_scenario(st, std::move(next));
    st.notice.clear();
    st.notice_details.clear();
    st.last_action = "load:trace";
    return "Serving the " + std::to_string(st.scenario.serving.trace.size()) + " requests of " + name;
}

std::string load_user_json(AppState& st, std::string_view text, const std::string& origin) {
    // A link (pasted): anything with "#s=" or starting with "s=".
    const std::size_t hash = text.find("#s=");
    if (hash != std::string_view::npos || text.substr(0, 2) == "s=") {
        std::string frag(hash != std::string_view::npos ? text.substr(hash) : text);
        while (!frag.empty() && (frag.back() == '\n' || frag.back() == '\r' || frag.back() == ' ')) frag.pop_back();
        load_fragment(st, frag);
        st.fragment_dirty = st.notice.empty();
        st.last_action = "load:link";
        return st.notice.empty() ? "Loaded the scenario of the link" : "";
    }
    if (text.size() > kMaxUserJson) {
        st.notice = "The " + origin + " is larger than 4 MB: not a scenario or a config.json.";
        st.notice_details.clear();
        return "";
    }
    // issue 29: a request trace (a .csv or .jsonl file, the CLI's workload.trace formats) becomes the scenario's trace
    const auto ends = [&](std::string_view suffix) {
        return origin.size() >= suffix.size() && origin.compare(origin.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (origin.rfind("file ", 0) == 0 && (ends(".csv") || ends(".jsonl"))) return load_trace_text(st, text, origin.substr(5), ends(".csv"));
    if (nested_too_deep(text)) {
        st.notice = "The " + origin + " is nested deeper than 64 levels: not a scenario or a config.json.";
        st.notice_details.clear();
        return "";
    }
    nlohmann::json j;
    moe::JsonTextError bad;
    if (!moe::parse_json_text(text, j, bad) && bad.number_out_of_range) {
        st.notice = "The " + origin + " has a number out of range: " + clip(bad.message);
        st.notice_details.clear();
        return "";
    }
    if (j.is_discarded() || !j.is_object()) {
        st.notice = "The " + origin + " is not a JSON object: expected a scenario or an HF config.json.";
        st.notice_details.clear();
        return "";
    }
    // issue 28: a calibration (moe-roofline calibrate -o FILE, presets/engines.json's format): the engine constants
    // every number of the page uses from now on
    if (!j.contains("model") && (j.contains("sglang") || j.contains("vllm") || j.contains("trtllm"))) {
        moe::EngineSet set;
        moe::Issues errors;
        if (!moe::engines_from_text(std::string(text), set, errors)) {
            st.notice = "The " + origin + " is not a calibration the page can use:";
            st.notice_details.clear();
            for (const moe::Issue& i : errors) st.notice_details.push_back(clip(i.text()));
            return "";
        }
        moe::use_engines(&set);
        st.calibration = origin.rfind("file ", 0) == 0 ? origin.substr(5) : origin;
        st.notice.clear();
        st.notice_details.clear();
        engines_changed(st);
        st.last_action = "load:calibration";
        return "Engine constants from " + st.calibration;
    }
    if (looks_like_hf_config(j) && !j.contains("model")) {
        st.config_text = j.dump(2);
        if (!apply_model_config(st, st.config_text)) {
            st.config_box_open = true;
            st.notice = "The " + origin + " looks like an HF config.json but cannot be used as a model:";
            st.notice_details = st.config_errors;
            return "";
        }
        st.notice.clear();
        st.notice_details.clear();
        st.last_action = "load:config";
        return "Model set from the " + origin;
    }
    moe::ParseResult r = moe::scenario_from_json(j, *st.catalog);
    if (!r.ok()) {
        st.notice = "The " + origin + " is not a valid scenario; nothing was changed:";
        st.notice_details.clear();
        for (const moe::Issue& i : r.errors) st.notice_details.push_back(clip(i.text()));
        return "";
    }
    st.notice.clear();
    st.notice_details.clear();
    set_scenario(st, std::move(r.scenario));
    st.last_action = "load:scenario";
    return "Scenario loaded from the " + origin;
}

void set_view_phase(AppState& st, PhaseView p) {
    if (st.view.phase == p) return;
    st.view.phase = p;
    st.sweep_dirty = true;
    st.fragment_dirty = true;
    st.publish_pending = true;
}

void set_sweep_axis(AppState& st, SweepAxis a) {
    if (st.view.sweep_axis_set && st.view.sweep_axis == a) return;
    st.view.sweep_axis = a;
    st.view.sweep_axis_set = true;
    st.view.sweep_y.clear();
    st.sweep_dirty = true;
    st.fragment_dirty = true;
}

void set_sweep_y(AppState& st, const std::string& column) {
    if (numeric_column_index(column) < 0 || st.view.sweep_y == column) return;
    st.view.sweep_y = column;
    st.fragment_dirty = true;
    st.publish_pending = true;
    st.sweep_dirty = true;  // a serving column needs the serving layer at every point (recomputed only then)
}

void pin_current(AppState& st) {
    st.a.active = true;
    st.a.scenario = st.scenario;
    st.a.estimate = st.estimate;
    st.a.steps = st.steps;
    st.a.sweep = st.sweep;
    st.a.frontier = st.frontier;
    st.a.serving = st.serving;
    st.a_dirty = false;
    st.fragment_dirty = true;
    st.publish_pending = true;
}

void unpin(AppState& st) {
    st.a = Pinned();
    st.fragment_dirty = true;
    st.publish_pending = true;
}

void swap_pinned(AppState& st) {
    if (!st.a.active) return;
    std::swap(st.a.scenario, st.scenario);
    st.a_dirty = true;
    st.dirty = true;
    st.sweep_dirty = true;
    st.fragment_dirty = true;
}

moe::Phase shown_phase(const AppState& st) {
    const moe::Estimate& e = shown_estimate(st);
    if (st.view.phase == PhaseView::prefill && e.prefill.computed) return moe::Phase::prefill;
    if (st.view.phase == PhaseView::decode && e.decode.computed) return moe::Phase::decode;
    if (e.decode.computed) return moe::Phase::decode;
    if (e.prefill.computed) return moe::Phase::prefill;
    // nothing computed (an invalid scenario): what the scenario asks for
    if (st.view.phase == PhaseView::prefill || st.scenario.workload.phase == moe::PhaseSel::prefill) return moe::Phase::prefill;
    return moe::Phase::decode;
}

std::string sweep_y_column(const AppState& st) {
    if (!st.view.sweep_y.empty()) return st.view.sweep_y;
    const bool prefill = shown_phase(st) == moe::Phase::prefill;
    switch (chart_sweep_axis(st)) {
        case SweepAxis::batch: return prefill ? "prefill.tokens_per_s_per_gpu" : "decode.tpot_ms";
        case SweepAxis::context: return prefill ? "prefill.ttft_ms" : "decode.tpot_ms";
        case SweepAxis::ep: return prefill ? "prefill.tokens_per_s_per_gpu" : "decode.tokens_per_s_per_gpu";
        case SweepAxis::prefill_tokens: return prefill ? "prefill.tokens_per_s_per_gpu" : "prefill.ttft_ms";
        case SweepAxis::concurrency:
        case SweepAxis::decode_batch: return "serving.output_tokens_per_s_per_gpu";
        case SweepAxis::isl: return "serving.ttft_ms";
        case SweepAxis::osl: return "serving.e2e_latency_ms";
    }
    return "decode.tpot_ms";
}

bool serving_on(const moe::Scenario& s) { return s.serving.mode != moe::ServingMode::off; }

// The serving charts' load axis: the clients (serving.concurrency), in both modes; disaggregated, the decode slots
// stay where the scenario puts them and clients beyond them wait for one.
SweepAxis serving_axis(const moe::Scenario&) { return SweepAxis::concurrency; }

SweepAxis chart_sweep_axis(const AppState& st) {
    if (st.view.sweep_axis_set) return st.view.sweep_axis;
    return shown_phase(st) == moe::Phase::prefill ? SweepAxis::prefill_tokens : SweepAxis::batch;
}

bool needs_recompute(const AppState& st) { return st.dirty || st.sweep_dirty || st.a_dirty; }

void engines_changed(AppState& st) {
    st.dirty = st.sweep_dirty = true;
    st.a_dirty = st.a.active;
    st.sweep_key.clear();  // the keys name the scenarios, not the constants
    st.frontier_key.clear();
    st.serving_key.clear();
}

namespace {
// What a sweep depends on: the scenario with the swept fields neutralised, and the points.
std::string sweep_key(const moe::Scenario& s, const SweepSpec& spec) {
    moe::Scenario k = s;
    switch (spec.axis) {
        case SweepAxis::batch: k.workload.batch = 1; break;
        case SweepAxis::context: k.workload.context_len = 1; break;
        case SweepAxis::prefill_tokens: k.workload.prefill_tokens = 1; break;
        case SweepAxis::ep: break;  // dp and ep move together: any change of the layout changes the sweep
        case SweepAxis::concurrency: k.serving.concurrency = 1; break;
        case SweepAxis::decode_batch: k.serving.decode.batch = 1; break;
        case SweepAxis::isl: k.serving.isl = 1; break;
        case SweepAxis::osl: k.serving.osl = 1; break;
    }
    std::string key = moe::scenario_to_json(k, true).dump();
    key += spec.force_decode ? "|d" : "|";
    key += spec.serving ? "s|" : "|";
    for (int v : spec.values) key += std::to_string(v) + ",";
    return key;
}
}  // namespace

void recompute(AppState& st) {
    const double t0 = now_ms();
    if (st.dirty) {
        const double t = now_ms();
        st.estimate = moe::evaluate(st.scenario, *st.tables);
        compute_steps(st.scenario, st.estimate, *st.tables, st.steps);
        st.perf.estimate_ms = now_ms() - t;
        update_fit(st);
        ++st.recompute_count;
    }
    const bool a_changed = st.a_dirty;
    if (st.a.active && st.a_dirty) {
        st.a.estimate = moe::evaluate(st.a.scenario, *st.tables);
        compute_steps(st.a.scenario, st.a.estimate, *st.tables, st.a.steps);
    }

    // Step axes sweep the steps shown (with serving on, the serving workload's); serving axes and serving columns
    // the deployment.
    const SweepAxis axis = chart_sweep_axis(st);
    const bool serving_y = serving_on(st.scenario) && sweep_y_column(st).rfind("serving.", 0) == 0;
    const bool sweep_deployment = is_serving_axis(axis) || serving_y;
    const moe::Scenario& sweep_base = sweep_deployment ? st.scenario : shown_scenario(st);
    SweepSpec spec = default_sweep(axis, sweep_base, sweep_deployment ? st.estimate : shown_estimate(st),
                                   is_serving_axis(axis) ? kServingSweepPoints : kSweepPoints);
    // A serving column on a step axis (e.g. serving.ttft_ms over EP) needs the serving layer at every point.
    if (serving_y) spec.serving = true;
    const std::string key = sweep_key(sweep_base, spec);
    bool sweep_changed = false;
    if (key != st.sweep_key) {
        run_sweep(sweep_base, spec, *st.tables, st.sweep);
        st.sweep_scenario = sweep_base;
        st.sweep_key = key;
        st.perf.sweep_ms = st.sweep.compute_ms;
        st.perf.sweep_points = static_cast<int>(st.sweep.size());
        sweep_changed = true;
    }
    SweepSpec fspec = default_sweep(SweepAxis::batch, shown_scenario(st), shown_estimate(st), kFrontierPoints);
    fspec.force_decode = true;
    const std::string fkey = sweep_key(shown_scenario(st), fspec);
    bool frontier_changed = false;
    if (fkey != st.frontier_key) {
        run_sweep(shown_scenario(st), fspec, *st.tables, st.frontier);
        st.frontier_key = fkey;
        st.perf.frontier_ms = st.frontier.compute_ms;
        frontier_changed = true;
    }
    // The Serving tab: TTFT and TPOT (and throughput against interactivity) over the deployment's concurrency.
    bool serving_changed = false;
    const bool serving = serving_on(st.scenario);
    if (serving) {
        const SweepSpec sspec = default_sweep(serving_axis(st.scenario), st.scenario, st.estimate, kServingPoints);
        const std::string skey = sweep_key(st.scenario, sspec);
        if (skey != st.serving_key) {
            run_sweep(st.scenario, sspec, *st.tables, st.serving);
            st.serving_key = skey;
            st.perf.serving_ms = st.serving.compute_ms;
            serving_changed = true;
        }
    } else if (!st.serving_key.empty()) {
        st.serving.clear();
        st.serving_key.clear();
    }
    // serving just turned on (or a link that serves), unless the link asked for a tab (a plan's link: Plan)
    if (serving && !st.serving_was_on && st.requested_tab < 0) st.requested_tab = 4;
    st.serving_was_on = serving;
    // A is swept over the same points as the current scenario, so the two curves share their x.
    const moe::Scenario& a_steps = st.a.steps.on ? st.a.steps.scenario : st.a.scenario;
    if (st.a.active && (a_changed || sweep_changed))
        run_sweep(sweep_deployment ? st.a.scenario : a_steps, st.sweep.spec, *st.tables, st.a.sweep);
    if (st.a.active && (a_changed || frontier_changed)) run_sweep(a_steps, st.frontier.spec, *st.tables, st.a.frontier);
    if (st.a.active && (a_changed || serving_changed)) {
        if (serving && st.a.scenario.serving.mode == st.scenario.serving.mode) run_sweep(st.a.scenario, st.serving.spec, *st.tables, st.a.serving);
        else st.a.serving.clear();
    }

    st.dirty = false;
    st.sweep_dirty = false;
    st.a_dirty = false;
    st.publish_pending = true;
    st.perf.recompute_ms = now_ms() - t0;
}

std::string current_sweep_csv(const AppState& st) { return sweep_csv(st.sweep_scenario, st.sweep.spec, *st.tables); }


std::string hook_json(const AppState& st) {
    nlohmann::json j;
    j["seq"] = st.publish_seq;
    j["recomputes"] = st.recompute_count;
    j["scenario"] = moe::scenario_to_json(st.scenario, true);
    j["results"] = moe::estimate_to_flat_json(st.estimate);
    nlohmann::json ui = nlohmann::json::object();
    for (const auto& [name, r] : st.ui) ui[name] = {{"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}};
    j["ui"] = std::move(ui);
    j["fragment"] = build_fragment(st);
    j["notice"] = st.notice;
    j["notice_details"] = st.notice_details;
    nlohmann::json errors = nlohmann::json::array();
    for (const moe::Issue& i : st.estimate.errors) errors.push_back(i.text());
    j["errors"] = std::move(errors);
    j["warnings"] = shown_warnings(st);
    j["edit_errors"] = nlohmann::json::array();
    for (const moe::Issue& i : st.edit_errors) j["edit_errors"].push_back(i.text());
    j["config_errors"] = st.config_errors;
    j["dpr"] = st.dpr;
    j["last_action"] = st.last_action;
    j["perf"] = {{"estimate_ms", st.perf.estimate_ms}, {"sweep_ms", st.perf.sweep_ms},
                 {"sweep_points", st.perf.sweep_points}, {"frontier_ms", st.perf.frontier_ms},
                 {"frontier_points", st.frontier.size()}, {"serving_ms", st.perf.serving_ms},
                 {"serving_points", st.serving.size()}, {"recompute_ms", st.perf.recompute_ms},
                 {"first_results_ms", st.perf.first_results_ms}};
    j["view"] = {{"phase", moe::phase_name(shown_phase(st))},
                 {"sweep_axis", sweep_axis_info(chart_sweep_axis(st)).key},
                 {"sweep_y", sweep_y_column(st)},
                 {"tab", st.results_tab}};
    std::size_t ok_points = 0;
    for (unsigned char o : st.sweep.ok) ok_points += o;
    j["sweep"] = {{"axis", sweep_axis_paths(st.sweep.spec)}, {"points", st.sweep.size()}, {"ok_points", ok_points},
                  {"x_first", st.sweep.x.empty() ? 0.0 : st.sweep.x.front()},
                  {"x_last", st.sweep.x.empty() ? 0.0 : st.sweep.x.back()}};
    std::size_t serving_ok = 0;
    for (unsigned char o : st.serving.ok) serving_ok += o;
    j["serving_sweep"] = {{"axis", sweep_axis_paths(st.serving.spec)}, {"points", st.serving.size()}, {"ok_points", serving_ok},
                          {"x_first", st.serving.x.empty() ? 0.0 : st.serving.x.front()},
                          {"x_last", st.serving.x.empty() ? 0.0 : st.serving.x.back()}};
    nlohmann::json cards = nlohmann::json::object();
    for (const auto& [name, c] : st.cards)
        cards[name] = {{"column", c.column}, {"value", c.value}, {"unit", c.unit}, {"scale", c.scale}, {"sub", c.sub},
                       {"band_p10", c.band_p10}, {"band_p90", c.band_p90}};
    j["cards"] = std::move(cards);
    j["calibration"] = st.calibration;
    if (st.a.active) {
        j["compare"] = {{"scenario", moe::scenario_to_json(st.a.scenario, true)},
                        {"results", moe::estimate_to_flat_json(st.a.estimate)}};
    } else {
        j["compare"] = nullptr;
    }
    j["plan"] = plan_hook_json(st);
    // issue 26: the steps the cards and charts show with serving on (the CLI evaluates the same scenario), the one
    // fit verdict, the smallest GPU count that holds a model that does not fit, and the text boxes drawn
    if (st.steps.on) {
        nlohmann::json steps = {{"scenario", moe::scenario_to_json(st.steps.scenario, true)},
                                {"results", moe::estimate_to_flat_json(st.steps.estimate)}};
        if (st.steps.disaggregated) steps["prefill_results"] = moe::estimate_to_flat_json(st.steps.prefill);
        j["steps"] = std::move(steps);
    } else {
        j["steps"] = nullptr;
    }
    j["fits"] = deployment_fits(st.scenario, st.estimate);
    j["fit"] = st.fit_checked ? nlohmann::json{{"ok", st.fit.ok}, {"gpus", st.fit.gpus},
                                               {"parallel", {{"tp", st.fit.parallel.tp}, {"dp", st.fit.parallel.dp},
                                                             {"ep", st.fit.parallel.ep}, {"pp", st.fit.parallel.pp}}}}
                              : nlohmann::json();
    j["fit_pools_error"] = st.fit_pools_error;
    nlohmann::json texts = nlohmann::json::array();
    for (const AppState::TextBox& b : st.published_texts)
        texts.push_back({{"x", b.r.x}, {"y", b.r.y}, {"w", b.r.w}, {"h", b.r.h}, {"text", b.text}, {"group", b.group}});
    j["texts"] = std::move(texts);
    // Replace invalid UTF-8 (a hostile fragment's bytes may reach an error message) instead of failing.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace web
