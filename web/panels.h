// panels.h — one draw function per panel of the page; each takes the whole AppState (STYLE §7).
//
// Frame order (main.cpp): draw_notice → draw_scenario_panel (edits set st.dirty) → recompute if dirty →
// draw_results_panel. Panels never call the model.
#pragma once
#include "app_state.h"

namespace web {

void draw_notice(AppState& st);          // a link that could not be read, with its reasons (dismissable)
void draw_scenario_panel(AppState& st);  // model, hardware, parallel layout, workload, runtime
void draw_results_panel(AppState& st);   // headline numbers, errors/warnings, every output column

}  // namespace web
