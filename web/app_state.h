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

// A scenario pinned for comparison ("A"); the page's current scenario is "B".
struct Pinned {
    bool active = false;
    moe::Scenario scenario;
    moe::Estimate estimate;
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

struct AppState {
    AppState(const moe::Catalog& cat, const moe::Tables& tab) : catalog(&cat), tables(&tab) {}

    const moe::Catalog* catalog;
    const moe::Tables* tables;

    // ---- the input and its result
    moe::Scenario scenario;
    moe::Estimate estimate;
    moe::Issues edit_errors;          // a widget's value the scenario refused (set_path)
    std::string edit_error_path;      // the field it belongs to
    bool dirty = true;                // the scenario changed: recompute before drawing results
    bool sweep_dirty = true;          // the view changed: recompute the sweeps
    bool fragment_dirty = false;      // something in the URL changed by an edit: write it after the frame
    std::string last_fragment;        // what we last wrote (a hashchange to it is our own echo)

    ViewState view;
    SweepData sweep;     // the sweep chart's data (view.sweep_axis)
    SweepData frontier;  // tokens/s per GPU vs per user over batch
    SweepData serving;   // serving mode: the deployment over its concurrency (serving_axis), for the Serving tab
    std::string sweep_key, frontier_key, serving_key;  // what the sweeps were computed for (skip when unchanged)
    bool serving_was_on = false;  // the last recompute's scenario served: turning serving on opens the Serving tab
    Pinned a;
    bool a_dirty = false;
    Perf perf;

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
    int results_tab = 0;              // 0 overview, 1 compare, 2 operators, 3 all outputs, 4 serving
    int requested_tab = -1;

    // ---- test hook
    std::map<std::string, UiRect> ui;  // named widget rectangles, rebuilt every frame
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
    };
    std::map<std::string, CardText> cards;
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

bool needs_recompute(const AppState& st);
// Runs the model for the current scenario and the sweeps the charts need (clears `dirty`, schedules the hook).
void recompute(AppState& st);
// The sweep as CSV (the same header and cells as `moe-roofline sweep`).
std::string current_sweep_csv(const AppState& st);
// window.__moe as JSON text: {seq, scenario, results, ui, fragment, notice, errors, warnings, dpr, perf, view, ...}.
std::string hook_json(const AppState& st);

}  // namespace web
