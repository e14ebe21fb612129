// app_state.h — everything the page knows, in one struct owned by main() and passed to every panel.
//
//   web::AppState st(moe::builtin_catalog(), moe::builtin_tables());
//   web::load_fragment(st, web::read_fragment());   // scenario, view and pinned A from the URL (or the defaults)
//   each frame:  draw_toolbar(st); draw_scenario_panel(st);  if (needs_recompute(st)) web::recompute(st);
//                draw_results_panel(st);
//
// Panels never call the model: a widget that edits the scenario sets `dirty` (and `fragment_dirty`), a view change
// sets `sweep_dirty`, and the frame loop recomputes once, before any result is drawn. Sweeps are part of the
// recompute, so a chart only reads numbers.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/moe.h"
#include "core/plan/plan.h"
#include "sweep.h"

namespace web {

// A widget's rectangle in CSS pixels of the page (for window.__moe.ui and the browser tests).
struct UiRect {
    double x = 0, y = 0, w = 0, h = 0;
};
inline bool operator==(const UiRect& a, const UiRect& b) { return a.x == b.x && a.y == b.y && a.w == b.w && a.h == b.h; }
inline bool operator!=(const UiRect& a, const UiRect& b) { return !(a == b); }

enum class PhaseView : std::uint8_t { auto_, prefill, decode };

// What the charts show (in the URL beside the scenario: &x=batch&y=decode.tpot_ms&ph=decode).
struct ViewState {
    PhaseView phase = PhaseView::auto_;
    bool sweep_axis_set = false;  // false: batch for decode, prefill chunk when the charts show prefill
    SweepAxis sweep_axis = SweepAxis::batch;
    std::string sweep_y;  // an output column; "" = a default for the axis and phase
};

// Serving on: the steps the serving workload runs, which the step cards and the overview charts show (issue 26:
// one set of request lengths): the step model at the mean ISL / OSL, the deployment's running batch per DP rank,
// and for disaggregated serving the decode pool's layout (and one prompt on a prefill worker). Serving off: unused
// (the scenario itself is shown).
struct StepsView {
    bool on = false, disaggregated = false;
    moe::Scenario scenario;
    moe::Estimate estimate;
    moe::Estimate prefill;  // disaggregated: one prompt alone on a prefill worker
};

// A scenario pinned for comparison ("A"); the page's current scenario is "B".
struct Pinned {
    bool active = false;
    moe::Scenario scenario;
    moe::Estimate estimate;
    StepsView steps;
    SweepData sweep, frontier;
    SweepData serving;  // over the current scenario's serving axis, when A serves in the same mode
};

struct Perf {
    double estimate_ms = 0;    // the last estimate()
    double sweep_ms = 0;       // the last sweep chart (sweep_points points)
    int sweep_points = 0;
    double frontier_ms = 0;    // the last throughput/interactivity sweep
    double serving_ms = 0;     // the last serving sweep (TTFT / TPOT against concurrency)
    double recompute_ms = 0;   // everything of the last recompute (A's sweeps included)
    double first_results_ms = -1;  // performance.now() when results were first published
};

// The Plan tab (DESIGN §9): the planner's settings (in the URL as &plan=g64_tpot30_agg_dis_mtp_fmt_tbo), its search
// run in slices across frames, and the front. The search's base is the scenario when Run was pressed, with the
// fields the planner chooses reset (so a link with &plan= gives the same plan after a point was loaded).
struct PlanSettings {
    int gpus = 8;
    double ttft_ms = 0;                      // 0: no limit
    double tpot_ms = 0;                      // 0: no limit
    double min_tokens_per_s_per_user = 0;    // 0: no limit
    bool aggregated = true, disaggregated = true;
    bool mtp = true;       // search MTP draft tokens 0..3 (models with MTP layers)
    bool formats = true;   // search the weight and KV formats the GPU allows (else the scenario's)
    bool overlap = true;   // search two-batch overlap on / off (else off)
    bool sla_p90 = false;  // the SLA holds at the band's p90 (plan --sla-at p90)
    // plan --hardware ID,... and --engine NAME,...: one search per (GPU, engine), one front; empty: the scenario's.
    // Kept in the catalog's and the engines' order (the CLI's searches, hardware outer, in the order given).
    std::vector<std::string> hardware;
    std::vector<moe::ServingEngine> engines;
};
bool operator==(const PlanSettings& a, const PlanSettings& b);

struct PlanState {
    PlanSettings settings;
    bool in_url = false;          // the settings are in the URL (after a run, an edit, or a link that had them)
    bool run_requested = false;   // start a search at the next frame
    // one search per (GPU, engine), hardware outer (`plan --hardware --engine`'s order; one without lists), stepped
    // one after the other; `search_hardware` names each one's GPU as `plan` does
    std::vector<moe::PlanSearch> searches;
    std::vector<std::string> search_hardware;
    std::size_t current = 0;  // the search being stepped
    bool running = false;
    std::string error;            // the search could not start (bad budget, ...)
    double compute_ms = 0;        // wasm time spent in step()
    double wall_ms = 0;           // from Run to the last point, frames included
    double started_ms = 0;
    double last_publish_ms = 0;
    int runs = 0;
    // after the search: the front (each row's search, point and result after the re-ranking by the simulation,
    // best first: plan's front over every search), each mode's own front (the chart's lines), a thinned cloud of the
    // other candidates, the counts by verdict over every search, and the front row loaded into the calculator
    std::vector<moe::PlanFront::Row> front;
    struct Dot {
        double per_user = 0, per_gpu = 0;
        bool disaggregated = false;
    };
    std::vector<Dot> front_agg, front_disagg, cloud;
    std::uint64_t counts[6] = {};
    std::uint64_t points = 0, evaluated = 0;
    std::vector<double> front_joules;  // per front row: J per output token (issue 28; 0: the GPU has no board power)
    int selected = -1;            // rank - 1 of the loaded row, -1 none
    int hovered = -1;             // rank - 1 of the table row under the mouse (marked on the chart), -1 none
    double table_scroll_x = 0, table_scroll_max_x = 0;  // the table's sideways scroll (device px; > 0: it scrolls)
};

struct AppState {
    AppState(const moe::Catalog& cat, const moe::Tables& tab) : catalog(&cat), tables(&tab) {}

    const moe::Catalog* catalog;
    const moe::Tables* tables;

    // ---- the input and its result
    moe::Scenario scenario;
    moe::Estimate estimate;
    StepsView steps;                  // serving on: the serving workload's steps (shown_scenario / shown_estimate)
    moe::FitLayout fit;               // the model does not fit: the smallest GPU count that holds it (update_fit)
    bool fit_checked = false;
    int fit_pools_gpus = 0;           // the "fit the pools to N GPUs" field (0: the pools' current total)
    std::string fit_pools_error;
    moe::Issues edit_errors;          // a widget's value the scenario refused (set_path)
    std::string edit_error_path;      // the field it belongs to
    bool dirty = true;                // the scenario changed: recompute before drawing results
    bool sweep_dirty = true;          // the view changed: recompute the sweeps
    bool fragment_dirty = false;      // something in the URL changed by an edit: write it after the frame
    std::string last_fragment;        // what we last wrote (a hashchange to it is our own echo)

    ViewState view;
    SweepData sweep;     // the sweep chart's data (view.sweep_axis)
    moe::Scenario sweep_scenario;  // what it swept (the deployment on serving axes, else the steps shown)
    SweepData frontier;  // tokens/s per GPU vs per user over batch
    SweepData serving;   // serving mode: the deployment over its concurrency (serving_axis), for the Serving tab
    std::string sweep_key, frontier_key, serving_key;  // what the sweeps were computed for (skip when unchanged)
    bool serving_was_on = false;  // the last recompute's scenario served: turning serving on opens the Serving tab
    Pinned a;
    bool a_dirty = false;
    Perf perf;
    PlanState plan;

    // ---- typed fields: the text being edited (applied when the field loses focus or on Enter)
    std::string active_edit;                     // key of the field being typed in, "" when none
    std::map<std::string, std::string> edit_text;

    // ---- the model config box (paste an HF config.json)
    bool config_box_open = false;
    std::string config_text;
    std::vector<std::string> config_errors;

    // ---- messages
    std::string notice;               // shown at the top (e.g. a link that could not be read)
    std::vector<std::string> notice_details;
    std::string toast;                // a short confirmation ("Link copied")
    double toast_until = 0;           // ImGui time

    // ---- display (ImGui works in device pixels; CSS px = device px / dpr)
    double dpr = 1;
    int results_tab = 0;              // 0 overview, 1 compare, 2 operators, 3 all outputs, 4 serving, 5 plan
    int requested_tab = -1;

    // ---- test hook
    std::map<std::string, UiRect> ui;  // named widget rectangles, rebuilt every frame
    // Every text box drawn this frame outside ImGui's own layout (chart titles, axis tags and ticks, legends, card
    // texts, memory bar labels) and the text widgets of the results: the browser test checks that none overlaps
    // another (issue 26). Rebuilt every frame, published as window.__moe.texts.
    struct TextBox {
        UiRect r;
        std::string text;
        std::string group;  // boxes of one group (a chart, a card) are compared with one another
    };
    std::vector<TextBox> texts, published_texts;
    std::map<std::string, UiRect> published_ui;
    bool publish_pending = true;
    long publish_seq = 0;
    int recompute_count = 0;
    std::string last_action;          // the last button or file action, for tests ("copy_link", "load:config")
    // The headline cards as drawn (ui name -> column, shown text, unit, divisor of the column's value): the tests
    // check the printed digits against `moe-roofline eval`.
    struct CardText {
        std::string column, value, unit;
        double scale = 1;
        std::string sub;  // the line under the number (a fit verdict says "fits" / "does not fit" there)
        std::string band_p10, band_p90;  // issue 28: the band's ends as shown, in the card's unit ("" without a band)
    };
    std::map<std::string, CardText> cards;
    // The engine constants in use (issue 28): "" the shipped ones, else the loaded calibration's file name.
    std::string calibration;
};

// Reads a fragment ("#s=...&x=...", "s=..." or ""): the scenario it holds (or the defaults and a notice), the view
// and a pinned A.
void load_fragment(AppState& st, std::string_view fragment);
// The fragment for the current state (without '#'): "s=...[&a=...][&x=..][&y=..][&ph=..]".
std::string build_fragment(const AppState& st);
// Sets one scenario field from a widget; false (and st.edit_errors) when the core refuses the value.
bool edit_field(AppState& st, std::string_view path, const nlohmann::json& value);
// Replaces the whole scenario (a preset scenario, a loaded JSON file, reset).
void set_scenario(AppState& st, moe::Scenario s);
// Loads JSON text dropped, pasted or opened by the user: a scenario (has "model"/"hardware"/"parallel"/...) or an
// HF config.json (has "hidden_size"/"architectures"/...). Returns a message for the user; errors in st.
std::string load_user_json(AppState& st, std::string_view text, const std::string& origin);
// A request trace's text (CSV with `csv`, else JSONL; moe::trace_text_to_json) as the scenario's workload.trace,
// serving switched on (aggregated) if it was off. Returns a message for the user; errors in st.notice.
std::string load_trace_text(AppState& st, std::string_view text, const std::string& name, bool csv);
// Sets the model from an HF config.json text; false with st.config_errors.
bool apply_model_config(AppState& st, std::string_view text);

void set_view_phase(AppState& st, PhaseView p);
void set_sweep_axis(AppState& st, SweepAxis a);
void set_sweep_y(AppState& st, const std::string& column);
void pin_current(AppState& st);   // A := the current scenario
void unpin(AppState& st);
void swap_pinned(AppState& st);   // A <-> current

// The phase the charts show: the view's choice if computed, else decode, else prefill.
moe::Phase shown_phase(const AppState& st);
// The sweep chart's x axis (resolving the default) and y column (resolving "").
SweepAxis chart_sweep_axis(const AppState& st);
std::string sweep_y_column(const AppState& st);
// The axis of the Serving tab's charts: serving.concurrency (aggregated) or serving.decode.batch (disaggregated).
SweepAxis serving_axis(const moe::Scenario& s);
bool serving_on(const moe::Scenario& s);

// ---- the Plan tab
// The plan's request for the current scenario and settings: the base scenario (serving on: the workload's prompt
// and output lengths when it was off; the planner's fields reset), GPUs, SLA, the engine of runtime.engine and the
// space (only the keys the settings narrow; the same JSON works as `moe-roofline plan --space FILE`).
moe::Scenario plan_base(const moe::Scenario& s, const PlanSettings& p);
moe::PlanRequest plan_request(const moe::Scenario& base, const PlanSettings& p);
nlohmann::json plan_space_json(const moe::Scenario& base, const PlanSettings& p);
// The GPUs (preset ids) and engines the Plan tab shows as chosen: the settings' lists, else the scenario's own
// (its hardware preset, "" for an edited or inline GPU; its engine's commands, ideal: SGLang's).
std::vector<std::string> plan_hardware(const AppState& st);
std::vector<moe::ServingEngine> plan_engines(const AppState& st);
// The search a front row came from (its base, request and GPU).
const moe::PlanSearch& plan_search_of(const PlanState& pl, const moe::PlanFront::Row& row);
std::string plan_settings_text(const PlanSettings& p);                // "g64_tpot30_agg_dis_mtp_fmt_tbo"
bool plan_settings_from_text(std::string_view text, PlanSettings& p);  // false: malformed (p unchanged)
void edit_plan_settings(AppState& st);   // a plan control changed: the URL follows
void start_plan(AppState& st);           // starts the search (the frame loop runs it in slices)
// Runs the search for about `budget_ms` of this frame; true while it still runs.
bool step_plan(AppState& st, double budget_ms);
bool plan_done(const PlanState& pl);     // every search evaluated and the front made
// Loads front row `rank_index` (0 = best per GPU) into the calculator.
void load_plan_row(AppState& st, int rank_index);

// ---- serving and fit (app_serving.cpp, issue 26)
// The step scenario of a serving scenario: serving off, the mean ISL / OSL as prompt and output, a prefill forward of
// at most one prompt (the step TTFT is one request's own), the running batch per DP rank (or, before any result,
// the clients per DP rank), the decode pool's layout when disaggregated.
moe::Scenario serving_step_scenario(const moe::Scenario& s, double running_batch);
// Disaggregated: a prefill worker's forward (phase prefill, the prefill pool's layout, serving.prefill.batch prompts).
moe::Scenario serving_prefill_step_scenario(const moe::Scenario& s);
void compute_steps(const moe::Scenario& s, const moe::Estimate& e, const moe::Tables& t, StepsView& v);
// What the step cards and the overview charts show: the serving workload's steps when serving is on.
const moe::Scenario& shown_scenario(const AppState& st);
const moe::Estimate& shown_estimate(const AppState& st);
// The one fit verdict of the screen: the deployment's with serving on, else the step model's memory.
bool deployment_fits(const moe::Scenario& s, const moe::Estimate& e);
// The warnings the page lists (and its hook's "warnings"): the evaluation's, except that with serving on the step
// model's memory verdict at the scenario's own workload ("does not fit: ...") gives way to the deployment's (one
// verdict per screen, issue 26), and the serving workload's steps add theirs other than that verdict.
std::vector<std::string> shown_warnings(const AppState& st);
void update_fit(AppState& st);     // st.fit: the smallest GPU count and a layout that holds the model
void use_fit_layout(AppState& st);  // "use N GPUs": the Parallelism layout := st.fit's
// An edit of `path` moved `before` to `s`: what follows it. serving.mode from off copies the Workload's prompt and
// output into ISL / OSL (and back when turned off); to disaggregated seeds both pools from the Parallelism layout
// (split from its GPUs when two workers fit in them); ISL / OSL edits keep the Workload's lengths equal. True when
// it changed something.
bool follow_serving_edit(const moe::Scenario& before, moe::Scenario& s, std::string_view path, const moe::Tables& t);
// "Fit the pools to N GPUs" (moe::fit_pools); false with st.fit_pools_error.
bool fit_pools_to(AppState& st, int gpus);

// ---- the plan's text (app_plan.cpp)
// The front as `moe-roofline plan --format csv` prints it for the same search (links to `base_url`).
std::string plan_front_csv(const AppState& st, std::string_view base_url);
// The launch command(s) of front row `rank_index` (disaggregated: the prefill workers' line, then the decode
// workers'), one per line; "" when there is no such row.
std::string plan_row_commands(const AppState& st, int rank_index);
nlohmann::json plan_hook_json(const AppState& st);

bool needs_recompute(const AppState& st);
// The engine constants changed (a calibration loaded, or the shipped ones back): every number and sweep again.
void engines_changed(AppState& st);
// Runs the model for the current scenario and the sweeps the charts need (clears `dirty`, schedules the hook).
void recompute(AppState& st);
// The sweep as CSV (the same header and cells as `moe-roofline sweep`).
std::string current_sweep_csv(const AppState& st);
// window.__moe as JSON text: {seq, scenario, results, ui, fragment, notice, errors, warnings, dpr, perf, view, ...}.
std::string hook_json(const AppState& st);

}  // namespace web
