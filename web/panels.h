// panels.h — one draw function per panel of the page; each takes the whole AppState (STYLE §7).
//
// Frame order (main.cpp): draw_toolbar → draw_notice → draw_scenario_panel (edits set st.dirty) →
// recompute if needed → draw_results_panel (headline, charts, compare, tables). Panels never call the model; the
// charts read st.estimate and the sweeps computed in recompute().
#pragma once
#include <imgui.h>

#include "app_state.h"

namespace web {

void draw_toolbar(AppState& st);         // title, example scenarios, link / JSON / CSV / reset / pin buttons
void draw_notice(AppState& st);          // a link or file that could not be read, with its reasons (dismissable)
void draw_scenario_panel(AppState& st);
void speculative_controls(AppState& st);  // Runtime: method, drafts, acceptance (panels_sessions.cpp)
void sessions_controls(AppState& st);     // Serving: multi-turn sessions and the KV tiers (panels_sessions.cpp)  // model, hardware, parallelism, workload, precision, runtime, routing
void draw_results_panel(AppState& st);   // headline numbers (and the serving ones), then tabs: overview charts, serving,
                                         // compare, operators, outputs

// Charts of the overview (panels_charts.cpp), each filling `size` device pixels.
void draw_layer_chart(AppState& st, ImVec2 size);
void draw_memory_chart(AppState& st, ImVec2 size);
void draw_roofline_chart(AppState& st, ImVec2 size);
void draw_sweep_chart(AppState& st, ImVec2 size);
void draw_frontier_chart(AppState& st, ImVec2 size);
// The Serving tab (serving mode on): TTFT and TPOT against the deployment's concurrency, and its output tokens/s
// per GPU against tokens/s per user, from st.serving.
void draw_serving_chart(AppState& st, ImVec2 size);
void draw_serving_frontier_chart(AppState& st, ImVec2 size);

// Shared by the chart files: a card's title and why it is empty; the x of the current scenario on a sweep axis
// (the steps shown, serving fields included); the label of the Serving tab's x axis.
void empty_chart(const char* title, const char* why);
double current_x(const AppState& st, SweepAxis a);
const char* serving_axis_label(SweepAxis a);

// The table tabs (panels_tables.cpp): Compare A/B, Operators, All outputs.
void draw_compare_tab(AppState& st);
void draw_operators_tab(AppState& st);
void draw_outputs_tab(AppState& st);

// The Plan tab (panels_plan.cpp): budget, SLA and space controls, the Pareto front as a chart and a table.
void draw_plan_tab(AppState& st);

// Starts / ends a chart card (a bordered child window); the card's rectangle is published as ui[name].
bool begin_card(AppState& st, const char* name, ImVec2 size);
void end_card();

}  // namespace web
