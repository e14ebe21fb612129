// plot.h — small charts on Dear ImGui's draw lists, in ImPlot's style (ImPlot itself is not available here).
//
//   if (plot::begin_plot("##sweep", ImVec2(w, h), "Decode throughput vs batch")) {
//       plot::setup_axis(plot::Axis::x, "batch per DP rank", plot::AxisFlags_Log);
//       plot::setup_axis(plot::Axis::y, "tokens/s per GPU", plot::AxisFlags_ZeroMin);
//       plot::plot_line("B", xs, ys, n, theme::kAccent);          // recorded now, drawn by end_plot
//       plot::plot_marker(x0, y0, theme::kText);                  // the current point
//       const plot::Hover h = plot::end_plot();                   // axes, grid, items, legend, hover read-out
//       if (h.item == my_line) ...                                // custom tooltips use h.index
//   }
//
// Items are recorded between begin_plot and end_plot and drawn at the end, so axes can be fitted to the data
// before anything is drawn. Axes: linear, log (decades with 2/5 ticks when short) or categories (rows of bars,
// top to bottom). Sizes are device pixels; thicknesses and radii are CSS pixels (scaled by theme::px).
// A plot never computes anything about the model: callers pass numbers computed before drawing.
#pragma once
#include <imgui.h>

#include <string>
#include <vector>

namespace web::plot {

enum class Axis { x, y };

enum AxisFlags : int {
    AxisFlags_None = 0,
    AxisFlags_Log = 1 << 0,         // log10 scale; non-positive values are skipped
    AxisFlags_ZeroMin = 1 << 1,     // auto-fit starts at 0 (linear axes of non-negative data)
    AxisFlags_NoGrid = 1 << 2,
    AxisFlags_Categories = 1 << 3,  // y only: one row per category label, row 0 at the top
};

enum ItemFlags : int {
    ItemFlags_None = 0,
    ItemFlags_Dashed = 1 << 0,
    ItemFlags_NoHover = 1 << 1,
    ItemFlags_NoFit = 1 << 2,         // not counted when fitting the axes
    ItemFlags_NoLegend = 1 << 3,
    ItemFlags_HoverX = 1 << 4,        // lines: hovered by the mouse's x (a crosshair read-out), not by distance
    ItemFlags_CustomTooltip = 1 << 5, // the caller draws the tooltip from end_plot()'s Hover
    ItemFlags_Hatched = 1 << 6,       // rects: translucent with diagonal hatching (e.g. hidden communication)
    ItemFlags_Ring = 1 << 7,          // markers: a ring instead of a disc
};

enum class Legend { title_row, inside_nw, inside_ne, inside_se, inside_sw, inside_auto /* the emptiest corner */, none };

using TickFormatter = std::string (*)(double);

struct Hover {
    bool plot_hovered = false;  // the mouse is over the plot area
    int item = -1;              // id returned by the plot_* call, or -1
    int index = -1;             // point index within the item
    double x = 0, y = 0;        // data coordinates of the hovered point (or of the mouse)
};

// Starts a plot of `size` device pixels (0 or negative: the available width / height). False when clipped.
bool begin_plot(const char* id, ImVec2 size, const char* title = nullptr);
void setup_axis(Axis axis, const char* label, int flags = AxisFlags_None, TickFormatter format = nullptr,
                const char* unit = nullptr);
void setup_axis_limits(Axis axis, double lo, double hi);
void setup_categories(const std::vector<std::string>& labels);  // with AxisFlags_Categories on y
void setup_legend(Legend where);

// Items. The returned id identifies the item in Hover. Labels starting with "##" stay out of the legend.
int plot_line(const char* label, const double* xs, const double* ys, int n, ImU32 colour, float thickness = 2.0f,
              int flags = ItemFlags_None, const unsigned char* dim = nullptr);
int plot_scatter(const char* label, const double* xs, const double* ys, int n, ImU32 colour, float radius = 4.0f,
                 int flags = ItemFlags_None, const float* radii = nullptr, const ImU32* colours = nullptr);
int plot_rect(const char* label, double x0, double y0, double x1, double y1, ImU32 colour, int flags = ItemFlags_None,
              const char* inside_text = nullptr);
int plot_marker(double x, double y, ImU32 colour, float radius = 6.0f, int flags = ItemFlags_Ring);
// A shaded band between lo[i] and hi[i] along xs (issue 28: the p10 .. p90 band around a series); no legend, no
// hover; points with a non-finite edge leave a gap.
void plot_band(const double* xs, const double* lo, const double* hi, int n, ImU32 colour);
void plot_hline(const char* label, double y, ImU32 colour, int flags = ItemFlags_Dashed);
void plot_vline(const char* label, double x, ImU32 colour, int flags = ItemFlags_Dashed);
void plot_segment(double x0, double y0, double x1, double y1, ImU32 colour, float thickness = 1.5f,
                  int flags = ItemFlags_NoFit);
// A text at a data point, shifted by `offset` (CSS px); with avoid_overlap, tried on four sides and dropped if it
// would cover another label.
void plot_text(double x, double y, const char* text, ImU32 colour, ImVec2 offset = ImVec2(6, -6),
               bool avoid_overlap = true, float pivot_x = 0.0f);  // pivot_x 1: the text ends at the point
void legend_entry(const char* label, ImU32 colour, int flags = ItemFlags_None);  // legend only (e.g. bound kinds)

// Draws the plot and returns what the mouse is over.
Hover end_plot();
// Data -> device pixels in the plot just ended (for overlays drawn by the caller).
ImVec2 to_pixels(double x, double y);
ImVec4 plot_area();  // x0, y0, x1, y1 of the last plot area in device pixels

// Shared drawing helpers (also used outside plots).
void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour, float thickness, float dash, float gap);
void hatched_rect(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour);

}  // namespace web::plot
