// widgets.h — scenario-bound ImGui widgets in a two-column form: the label on the left, the control filling the
// row, and a "(?)" whose text is the field's one-line help from the core's field table (the same words as
// `moe-roofline presets fields`). Each edits one field by its dot path (DESIGN §4.1), records its frame rectangle
// under that path in st.ui (window.__moe.ui; a combo's open items as "path=value"), and returns true when the
// user changed the scenario (the widget already set st.dirty).
//
//   field_preset_combo(st, "model", "Model", st.catalog->models());
//   field_slider_int(st, "workload.batch", "Batch", 1, 4096, true);
#pragma once
#include <imgui.h>

#include <string>
#include <vector>

#include "app_state.h"

namespace web {

// Records a rectangle (device pixels) as CSS pixels under `name` in st.ui.
void record_rect(AppState& st, const std::string& name, ImVec2 min, ImVec2 max);
void record_last_item(AppState& st, const std::string& name);  // the last ImGui item's rectangle

void section_title(const char* text);         // bold title with a hairline under it
void help_marker(const char* text);           // "(?)" on the same line, the text in a tooltip
void help_for_field(const char* path);        // "(?)" with moe::find_field(path)->help
// Starts a form row: `label` on the left (accent-coloured when `highlight`), the next item's width set to fill
// the row up to the "(?)".
void form_label(const char* label, bool highlight = false);
float form_label_width();

bool field_preset_combo(AppState& st, const char* path, const char* label,
                        const std::vector<moe::CatalogEntry>& entries);
bool field_choice_combo(AppState& st, const char* path, const char* label, const char* resolved = nullptr);
bool field_dtype_combo(AppState& st, const char* path, const char* label, const char* resolved = nullptr);
bool field_segmented(AppState& st, const char* path, const char* label);  // choices as a row of buttons
bool field_pow2_stepper(AppState& st, const char* path, const char* label);  // [−] value [+], halves / doubles
bool field_int_stepper(AppState& st, const char* path, const char* label);   // [−] value [+], minus / plus one (>= 1)
bool field_slider_int(AppState& st, const char* path, const char* label, int lo, int hi, bool log_scale,
                      int shown_value_when_auto = 0);
bool field_slider_double(AppState& st, const char* path, const char* label, double lo, double hi, const char* format);  // 2 decimals
// A typed number, applied when the field loses focus or on Enter; `auto_text` shown while the value is negative
// (a "-1 = calibrated default" field) or zero (a "0 = auto" field).
bool field_input_number(AppState& st, const char* path, const char* label, const char* auto_text = nullptr);
// "%.0f" for integers, else up to 6 significant digits ("" for NaN).
std::string number_text(double v, bool integer);
bool field_checkbox(AppState& st, const char* path, const char* label);
// A list of token counts typed as "1024, 7168" (workload.prompt_lens), applied when the field loses focus or on
// Enter; empty text turns the list off. A piece that is not a number is an error under the path (section_errors).
bool field_lengths(AppState& st, const char* path, const char* label, const char* hint);

}  // namespace web
