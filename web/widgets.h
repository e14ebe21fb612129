// widgets.h — scenario-bound ImGui widgets. Each edits one field by its dot path (DESIGN §4.1), records its
// frame rectangle under that path in st.ui (window.__moe.ui), shows the field's help from the core's field table
// as a "(?)" tooltip, and returns true when the user changed the scenario (the caller ORs it into nothing: the
// widget already set st.dirty).
//
//   field_preset_combo(st, "model", "Model", st.catalog->models());
//   field_slider_int(st, "workload.batch", "Batch", 1, 4096, true);
#pragma once
#include <string>
#include <vector>

#include "app_state.h"

namespace web {

// Remembers the frame of the widget about to be drawn (call before it) and stores it in st.ui after it.
class RectRecorder {
public:
    RectRecorder(AppState& st, const char* name);  // reads the cursor and CalcItemWidth()
    void commit(float frame_width = 0);             // after the widget: stores {x, y, w, h} in CSS px
private:
    AppState& st_;
    const char* name_;
    float x_, y_, w_;
};

void section_header(const char* text);  // a dim title over a separator
void help_marker(const char* text);
void help_for_field(const char* path);  // "(?)" with moe::find_field(path)->help, if any

bool field_preset_combo(AppState& st, const char* path, const char* label,
                        const std::vector<moe::CatalogEntry>& entries);
bool field_choice_combo(AppState& st, const char* path, const char* label);  // choices from the field table
bool field_pow2_combo(AppState& st, const char* path, const char* label, int max_value);
bool field_slider_int(AppState& st, const char* path, const char* label, int lo, int hi, bool log_scale,
                      int shown_value_when_auto = 0);
bool field_checkbox(AppState& st, const char* path, const char* label);

}  // namespace web
