// plot_state.h — the chart helper's state between begin_plot() and end_plot(), and the mapping between data and
// pixels; shared by plot.cpp (items, drawing, hover) and plot_axes.cpp (fitting the axes, ticks). Internal to
// plot.h's implementation.
#pragma once
#include <imgui.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "format.h"
#include "plot.h"
#include "theme.h"

namespace web::plot::detail {

enum class Kind { line, scatter, rect, marker, hline, vline, segment, band };

struct AxisState {
    std::string label, unit;
    int flags = 0;
    TickFormatter format = nullptr;
    bool fixed = false;
    double lo = 0, hi = 1;       // limits in data units
    double tlo = 0, thi = 1;     // limits in transformed units (log10 for log axes)
    bool log() const { return flags & AxisFlags_Log; }
    double t(double v) const { return log() ? (v > 0 ? std::log10(v) : std::numeric_limits<double>::quiet_NaN()) : v; }
    std::string text(double v) const { return format ? format(v) : fmt::si(v); }
};

struct Item {
    Kind kind = Kind::line;
    std::string label;
    ImU32 colour = 0;
    int flags = 0;
    float size = 2;
    std::vector<double> xs, ys;
    std::vector<double> ys_hi;  // band: the upper edge (ys the lower)
    std::vector<unsigned char> dim;
    std::vector<float> radii;
    std::vector<ImU32> colours;
    double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    std::string text;
};

struct TextItem {
    double x, y;
    std::string text;
    ImU32 colour;
    ImVec2 offset;
    bool avoid;
    float pivot_x;
};

struct LegendItem {
    std::string label;
    ImU32 colour;
    int flags;
    Kind kind;
};

struct State {
    bool active = false;
    std::string title;
    ImVec2 frame_min, frame_max;
    bool hovered = false;
    AxisState ax[2];
    std::vector<std::string> categories;
    Legend legend = Legend::title_row;
    std::vector<Item> items;
    std::vector<TextItem> texts;
    std::vector<LegendItem> legend_extra;
    ImVec4 area{0, 0, 1, 1};
};

extern State g;  // the plot being built (plot.cpp)

inline AxisState& axis_of(Axis a) { return g.ax[a == Axis::x ? 0 : 1]; }
inline bool categories() { return g.ax[1].flags & AxisFlags_Categories; }

inline float S(float css) { return theme::px(css); }

inline double px_x(double x) {
    const AxisState& a = g.ax[0];
    return g.area.x + (a.t(x) - a.tlo) / (a.thi - a.tlo) * (g.area.z - g.area.x);
}
inline double px_y(double y) {
    const AxisState& a = g.ax[1];
    return g.area.w - (a.t(y) - a.tlo) / (a.thi - a.tlo) * (g.area.w - g.area.y);
}
inline double data_x(float px) {
    const AxisState& a = g.ax[0];
    const double t = a.tlo + (px - g.area.x) / (g.area.z - g.area.x) * (a.thi - a.tlo);
    return a.log() ? std::pow(10.0, t) : t;
}
inline double data_y(float py) {
    const AxisState& a = g.ax[1];
    const double t = a.tlo + (g.area.w - py) / (g.area.w - g.area.y) * (a.thi - a.tlo);
    return a.log() ? std::pow(10.0, t) : t;
}
inline bool finite_pt(double x, double y) { return std::isfinite(px_x(x)) && std::isfinite(px_y(y)); }

// ---- fitting and ticks (plot_axes.cpp)
void fit_axis(int which);  // the axis' limits from the items (unless fixed), padded, log-aware
struct Tick {
    double value;
    bool major;
};
std::vector<Tick> ticks_for(const AxisState& a, float length_px, float min_spacing_px);

}  // namespace web::plot::detail
