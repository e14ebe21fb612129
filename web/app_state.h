// app_state.h — everything the page knows, in one struct owned by main() and passed to every panel.
//
//   web::AppState st(moe::builtin_catalog(), moe::builtin_tables());
//   web::load_fragment(st, web::read_fragment());   // the scenario from the URL (or the defaults, with a notice)
//   each frame:  draw_scenario_panel(st);  if (st.dirty) web::recompute(st);  draw_results_panel(st);
//
// Panels never call the model: a widget that edits the scenario sets `dirty` (and `fragment_dirty`), and the
// frame loop recomputes once, before any result is drawn.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/moe.h"

namespace web {

// A widget's rectangle in CSS pixels of the page (for window.__moe.ui and the browser tests).
struct UiRect {
    double x = 0, y = 0, w = 0, h = 0;
};
inline bool operator==(const UiRect& a, const UiRect& b) { return a.x == b.x && a.y == b.y && a.w == b.w && a.h == b.h; }
inline bool operator!=(const UiRect& a, const UiRect& b) { return !(a == b); }

struct AppState {
    AppState(const moe::Catalog& cat, const moe::Tables& tab) : catalog(&cat), tables(&tab) {}

    const moe::Catalog* catalog;
    const moe::Tables* tables;

    // ---- the input and its result
    moe::Scenario scenario;
    moe::Estimate estimate;
    moe::Issues edit_errors;          // a widget's value the scenario refused (set_path)
    bool dirty = true;                // the scenario changed: recompute before drawing results
    bool fragment_dirty = false;      // the scenario changed by an edit: write it to the URL after recompute
    std::string last_fragment;        // what we last wrote (a hashchange to it is our own echo)

    // ---- messages
    std::string notice;               // shown at the top (e.g. a link that could not be read)
    std::vector<std::string> notice_details;

    // ---- display (ImGui works in device pixels; CSS px = device px / dpr)
    double dpr = 1;
    float font_px = 13;               // the loaded font's size in device pixels

    // ---- test hook
    std::map<std::string, UiRect> ui;  // named widget rectangles, rebuilt every frame
    std::map<std::string, UiRect> published_ui;
    bool publish_pending = true;
    long publish_seq = 0;
    int recompute_count = 0;
};

// Reads a fragment ("#s=...", "s=..." or ""): the scenario it holds, or the defaults and a notice.
void load_fragment(AppState& st, std::string_view fragment);
// Sets one scenario field from a widget; false (and st.edit_errors) when the core refuses the value.
bool edit_field(AppState& st, std::string_view path, const nlohmann::json& value);
// Runs the model once for the current scenario (clears `dirty`, schedules the hook).
void recompute(AppState& st);
// window.__moe as JSON text: {seq, scenario, results, ui, fragment, notice, errors, warnings, dpr}.
std::string hook_json(const AppState& st);

}  // namespace web
