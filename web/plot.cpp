// plot.cpp — the chart helper (see plot.h): record items, fit axes, draw axes/grid/items/legend, hover read-outs.
#include "plot.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "format.h"
#include "plot_state.h"
#include "text_log.h"
#include "theme.h"

namespace web::plot {

using namespace detail;
detail::State detail::g;

namespace {

// ---- drawing helpers -------------------------------------------------------------------------------------------
ImVec2 text_size(ImFont* f, const char* s) { return f->CalcTextSizeA(f->FontSize, 1e9f, 0, s); }

void draw_swatch(ImDrawList* dl, ImVec2 p, float size, const LegendItem& e) {
    const ImVec2 c(p.x + size * 0.5f, p.y + size * 0.5f);
    switch (e.kind) {
        case Kind::line:
        case Kind::hline:
        case Kind::vline:
        case Kind::segment:
            if (e.flags & ItemFlags_Dashed) dashed_line(dl, ImVec2(p.x, c.y), ImVec2(p.x + size, c.y), e.colour, S(2), S(4), S(2));
            else dl->AddLine(ImVec2(p.x, c.y), ImVec2(p.x + size, c.y), e.colour, S(2.5f));
            break;
        case Kind::scatter:
        case Kind::marker:
            if (e.flags & ItemFlags_Ring) dl->AddCircle(c, size * 0.35f, e.colour, 0, S(1.5f));
            else dl->AddCircleFilled(c, size * 0.35f, e.colour);
            break;
        case Kind::band:
        case Kind::rect:
            if (e.flags & ItemFlags_Hatched) hatched_rect(dl, ImVec2(p.x + 1, p.y + 1), ImVec2(p.x + size - 1, p.y + size - 1), e.colour);
            else dl->AddRectFilled(ImVec2(p.x + 1, p.y + 1), ImVec2(p.x + size - 1, p.y + size - 1), e.colour, S(2));
            break;
    }
}

std::vector<LegendItem> legend_items() {
    std::vector<LegendItem> out;
    for (const Item& it : g.items) {
        if (it.label.empty() || it.label.rfind("##", 0) == 0 || (it.flags & ItemFlags_NoLegend)) continue;
        bool dup = false;
        for (const LegendItem& e : out) dup |= e.label == it.label;
        if (!dup) out.push_back({it.label, it.colour, it.flags, it.kind});
    }
    for (const LegendItem& e : g.legend_extra) out.push_back(e);
    return out;
}

float legend_width(const std::vector<LegendItem>& items, ImFont* f) {
    float w = 0;
    for (const LegendItem& e : items) w += f->FontSize * 1.1f + S(4) + text_size(f, e.label.c_str()).x + S(12);
    return w;
}

}  // namespace

// ---- public drawing helpers --------------------------------------------------------------------------------------
void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour, float thickness, float dash, float gap) {
    const float dx = b.x - a.x, dy = b.y - a.y;
    const float len = std::sqrt(dx * dx + dy * dy);
    if (len <= 0) return;
    const float ux = dx / len, uy = dy / len;
    for (float s = 0; s < len; s += dash + gap) {
        const float e = std::min(len, s + dash);
        dl->AddLine(ImVec2(a.x + ux * s, a.y + uy * s), ImVec2(a.x + ux * e, a.y + uy * e), colour, thickness);
    }
}

void hatched_rect(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour) {
    dl->AddRectFilled(a, b, theme::with_alpha(colour, 0.16f));
    dl->PushClipRect(a, b, true);
    const float step = S(5);
    const float h = b.y - a.y;
    for (float x = a.x - h; x < b.x; x += step) dl->AddLine(ImVec2(x, b.y), ImVec2(x + h, a.y), theme::with_alpha(colour, 0.7f), S(1));
    dl->PopClipRect();
    dl->AddRect(a, b, theme::with_alpha(colour, 0.8f), 0, 0, S(1));
}

// ---- API ---------------------------------------------------------------------------------------------------------
bool begin_plot(const char* id, ImVec2 size, const char* title) {
    IM_ASSERT(!g.active && "begin_plot without end_plot");
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    if (size.x <= 0) size.x = avail.x + size.x;
    if (size.y <= 0) size.y = avail.y + size.y;
    size.x = std::max(size.x, S(60));
    size.y = std::max(size.y, S(60));
    ImGui::PushID(id);
    ImGui::InvisibleButton("##plot", size);
    ImGui::PopID();
    if (!ImGui::IsItemVisible()) return false;
    g = State();
    g.active = true;
    g.title = title ? title : "";
    g.frame_min = ImGui::GetItemRectMin();
    g.frame_max = ImGui::GetItemRectMax();
    g.hovered = ImGui::IsItemHovered();
    return true;
}

void setup_axis(Axis axis, const char* label, int flags, TickFormatter format, const char* unit) {
    AxisState& a = axis_of(axis);
    a.label = label ? label : "";
    a.unit = unit ? unit : "";
    a.flags = flags;
    a.format = format;
}

void setup_axis_limits(Axis axis, double lo, double hi) {
    AxisState& a = axis_of(axis);
    if (!(std::isfinite(lo) && std::isfinite(hi) && hi > lo)) return;
    if (a.log() && lo <= 0) return;
    a.fixed = true;
    a.lo = lo;
    a.hi = hi;
}

void setup_categories(const std::vector<std::string>& labels) { g.categories = labels; }
void setup_legend(Legend where) { g.legend = where; }

int plot_line(const char* label, const double* xs, const double* ys, int n, ImU32 colour, float thickness, int flags,
              const unsigned char* dim) {
    Item it;
    it.kind = Kind::line;
    it.label = label ? label : "";
    it.colour = colour;
    it.flags = flags;
    it.size = thickness;
    it.xs.assign(xs, xs + n);
    it.ys.assign(ys, ys + n);
    if (dim) it.dim.assign(dim, dim + n);
    g.items.push_back(std::move(it));
    return static_cast<int>(g.items.size()) - 1;
}

void plot_band(const double* xs, const double* lo, const double* hi, int n, ImU32 colour) {
    Item it;
    it.kind = Kind::band;
    it.colour = colour;
    it.flags = ItemFlags_NoHover | ItemFlags_NoLegend;
    it.xs.assign(xs, xs + n);
    it.ys.assign(lo, lo + n);
    it.ys_hi.assign(hi, hi + n);
    g.items.push_back(std::move(it));
}

int plot_scatter(const char* label, const double* xs, const double* ys, int n, ImU32 colour, float radius, int flags,
                 const float* radii, const ImU32* colours) {
    Item it;
    it.kind = Kind::scatter;
    it.label = label ? label : "";
    it.colour = colour;
    it.flags = flags;
    it.size = radius;
    it.xs.assign(xs, xs + n);
    it.ys.assign(ys, ys + n);
    if (radii) it.radii.assign(radii, radii + n);
    if (colours) it.colours.assign(colours, colours + n);
    g.items.push_back(std::move(it));
    return static_cast<int>(g.items.size()) - 1;
}

int plot_rect(const char* label, double x0, double y0, double x1, double y1, ImU32 colour, int flags,
              const char* inside_text) {
    Item it;
    it.kind = Kind::rect;
    it.label = label ? label : "";
    it.colour = colour;
    it.flags = flags;
    it.x0 = x0;
    it.y0 = y0;
    it.x1 = x1;
    it.y1 = y1;
    if (inside_text) it.text = inside_text;
    g.items.push_back(std::move(it));
    return static_cast<int>(g.items.size()) - 1;
}

int plot_marker(double x, double y, ImU32 colour, float radius, int flags) {
    Item it;
    it.kind = Kind::marker;
    it.label = "##marker";
    it.colour = colour;
    it.flags = flags;
    it.size = radius;
    it.x0 = x;
    it.y0 = y;
    g.items.push_back(std::move(it));
    return static_cast<int>(g.items.size()) - 1;
}

void plot_hline(const char* label, double y, ImU32 colour, int flags) {
    Item it;
    it.kind = Kind::hline;
    it.label = label ? label : "";
    it.colour = colour;
    it.flags = flags | ItemFlags_NoHover;
    it.y0 = y;
    g.items.push_back(std::move(it));
}

void plot_vline(const char* label, double x, ImU32 colour, int flags) {
    Item it;
    it.kind = Kind::vline;
    it.label = label ? label : "";
    it.colour = colour;
    it.flags = flags | ItemFlags_NoHover;
    it.x0 = x;
    g.items.push_back(std::move(it));
}

void plot_segment(double x0, double y0, double x1, double y1, ImU32 colour, float thickness, int flags) {
    Item it;
    it.kind = Kind::segment;
    it.label = "##segment";
    it.colour = colour;
    it.flags = flags | ItemFlags_NoHover;
    it.size = thickness;
    it.x0 = x0;
    it.y0 = y0;
    it.x1 = x1;
    it.y1 = y1;
    g.items.push_back(std::move(it));
}

void plot_text(double x, double y, const char* text, ImU32 colour, ImVec2 offset, bool avoid_overlap, float pivot_x) {
    g.texts.push_back({x, y, text ? text : "", colour, offset, avoid_overlap, pivot_x});
}

void legend_entry(const char* label, ImU32 colour, int flags) {
    g.legend_extra.push_back({label, colour, flags, (flags & ItemFlags_Ring) ? Kind::marker : Kind::rect});
}

ImVec2 to_pixels(double x, double y) { return ImVec2(static_cast<float>(px_x(x)), static_cast<float>(px_y(y))); }
ImVec4 plot_area() { return g.area; }

Hover end_plot() {
    IM_ASSERT(g.active);
    g.active = false;
    Hover hover;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const theme::Fonts& f = theme::fonts();
    ImFont* small = f.small ? f.small : ImGui::GetFont();
    ImFont* bold = f.bold ? f.bold : ImGui::GetFont();
    const float sh = small->FontSize;

    // ---- header: title, legend, y label
    float top = g.frame_min.y;
    const std::vector<LegendItem> legend = legend_items();
    const float lw = legend_width(legend, small);
    const float title_w = g.title.empty() ? 0 : text_size(bold, g.title.c_str()).x;
    bool legend_own_row = false;
    if (!g.title.empty()) {
        draw_text(dl, bold, bold->FontSize, ImVec2(g.frame_min.x, top), theme::kText,
                  elide_text(bold, bold->FontSize, g.title, g.frame_max.x - g.frame_min.x).c_str());
        if (g.legend == Legend::title_row && !legend.empty() &&
            title_w + S(16) + lw > g.frame_max.x - g.frame_min.x)
            legend_own_row = true;
        top += bold->FontSize + S(6);
    } else if (g.legend == Legend::title_row && !legend.empty()) {
        legend_own_row = true;
    }
    float legend_y = g.frame_min.y + (bold->FontSize - sh) * 0.5f;
    // a legend on its own row wraps onto more rows where the frame is narrow (nothing drawn past its edge)
    const float swatch_w = sh * 1.1f;
    auto legend_item_w = [&](const LegendItem& e) { return swatch_w + S(4) + text_size(small, e.label.c_str()).x; };
    int legend_rows = 1;
    if (legend_own_row) {
        float x = 0;
        for (const LegendItem& e : legend) {
            if (x > 0 && x + legend_item_w(e) > g.frame_max.x - g.frame_min.x) ++legend_rows, x = 0;
            x += legend_item_w(e) + S(12);
        }
        legend_y = top;
        top += float(legend_rows) * (sh + S(6));
    }
    const AxisState& ay = g.ax[1];
    const AxisState& ax = g.ax[0];
    std::string ylabel = ay.label;
    if (!ay.unit.empty()) ylabel += " (" + ay.unit + ")";
    if (!ylabel.empty() && !categories()) {
        draw_text(dl, small, sh, ImVec2(g.frame_min.x, top), theme::kTextDim, ylabel.c_str());
        top += sh + S(4);
    }

    // ---- fit, then margins from the tick labels
    fit_axis(0);
    fit_axis(1);
    float left = 0;
    std::vector<Tick> yt;
    if (categories()) {
        for (const std::string& c : g.categories) left = std::max(left, text_size(f.body ? f.body : small, c.c_str()).x);
        left += S(10);
    } else {
        const float est_h = (g.frame_max.y - top) - sh * 2.5f;
        yt = ticks_for(ay, est_h, sh * 2.6f);
        for (const Tick& t : yt)
            if (t.major) left = std::max(left, text_size(small, ay.text(t.value).c_str()).x);
        left += S(8);
    }
    std::string xlabel = ax.label;
    if (!ax.unit.empty()) xlabel += " (" + ax.unit + ")";
    const float bottom = sh + S(6) + (xlabel.empty() ? 0 : sh + S(4));
    g.area = ImVec4(g.frame_min.x + left, top, g.frame_max.x - S(6), g.frame_max.y - bottom);
    if (g.area.w - g.area.y < S(20)) g.area.y = g.area.w - S(20);
    const ImVec2 amin(g.area.x, g.area.y), amax(g.area.z, g.area.w);
    dl->AddRectFilled(amin, amax, theme::kPlotBackground, S(3));

    // ---- grid and ticks
    const std::vector<Tick> xt = ticks_for(ax, amax.x - amin.x, S(64));
    if (!categories()) yt = ticks_for(ay, amax.y - amin.y, sh * 2.6f);
    float last_label_right = -1e9f;
    for (const Tick& t : xt) {
        const float x = static_cast<float>(px_x(t.value));
        if (!(ax.flags & AxisFlags_NoGrid)) dl->AddLine(ImVec2(x, amin.y), ImVec2(x, amax.y), t.major ? theme::kGrid : theme::with_alpha(theme::kGrid, 0.45f));
        if (!t.major) continue;
        const std::string s = ax.text(t.value);
        const ImVec2 ts = text_size(small, s.c_str());
        float lx = std::clamp(x - ts.x * 0.5f, g.frame_min.x, g.frame_max.x - ts.x);
        if (lx < last_label_right + S(6)) continue;  // no overlapping tick labels
        dl->AddLine(ImVec2(x, amax.y), ImVec2(x, amax.y + S(3)), theme::kAxis);
        draw_text(dl, small, sh, ImVec2(lx, amax.y + S(4)), theme::kTextDim, s.c_str());
        last_label_right = lx + ts.x;
    }
    if (categories()) {
        for (std::size_t i = 0; i < g.categories.size(); ++i) {
            const float y = static_cast<float>(px_y(double(i)));
            ImFont* bf = f.body ? f.body : small;
            const ImVec2 ts = text_size(bf, g.categories[i].c_str());
            draw_text(dl, bf, bf->FontSize, ImVec2(amin.x - S(8) - ts.x, y - ts.y * 0.5f), theme::kText, g.categories[i].c_str());
        }
    } else {
        for (const Tick& t : yt) {
            const float y = static_cast<float>(px_y(t.value));
            if (!(ay.flags & AxisFlags_NoGrid)) dl->AddLine(ImVec2(amin.x, y), ImVec2(amax.x, y), t.major ? theme::kGrid : theme::with_alpha(theme::kGrid, 0.45f));
            if (!t.major) continue;
            const std::string s = ay.text(t.value);
            const ImVec2 ts = text_size(small, s.c_str());
            draw_text(dl, small, sh, ImVec2(amin.x - S(5) - ts.x, std::clamp(y - sh * 0.5f, amin.y - S(4), amax.y - sh * 0.5f)), theme::kTextDim, s.c_str());
        }
    }
    if (!xlabel.empty()) {
        const ImVec2 ts = text_size(small, xlabel.c_str());
        draw_text(dl, small, sh, ImVec2((amin.x + amax.x - ts.x) * 0.5f, amax.y + sh + S(8)), theme::kTextDim, xlabel.c_str());
    }
    dl->AddLine(ImVec2(amin.x, amax.y), ImVec2(amax.x, amax.y), theme::kAxis);
    dl->AddLine(amin, ImVec2(amin.x, amax.y), theme::kAxis);

    // ---- hover search (before drawing, so the hovered item can be highlighted)
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const bool in_area = g.hovered && mouse.x >= amin.x && mouse.x <= amax.x && mouse.y >= amin.y && mouse.y <= amax.y;
    hover.plot_hovered = in_area;
    if (in_area) {
        hover.x = data_x(mouse.x);
        hover.y = data_y(mouse.y);
        float best = S(10) * S(10);
        for (int i = static_cast<int>(g.items.size()) - 1; i >= 0 && hover.item < 0; --i) {
            const Item& it = g.items[size_t(i)];
            if (it.flags & ItemFlags_NoHover) continue;
            if (it.kind == Kind::rect) {
                const float x0 = float(px_x(it.x0)), x1 = float(px_x(it.x1)), y0 = float(px_y(it.y0)), y1 = float(px_y(it.y1));
                if (mouse.x >= std::min(x0, x1) && mouse.x <= std::max(x0, x1) && mouse.y >= std::min(y0, y1) &&
                    mouse.y <= std::max(y0, y1)) {
                    hover.item = i;
                    hover.index = 0;
                }
            } else if (it.kind == Kind::scatter || (it.kind == Kind::line && !(it.flags & ItemFlags_HoverX))) {
                for (std::size_t k = 0; k < it.xs.size(); ++k) {
                    if (!finite_pt(it.xs[k], it.ys[k])) continue;
                    const float dx = float(px_x(it.xs[k])) - mouse.x, dy = float(px_y(it.ys[k])) - mouse.y;
                    const float r = it.kind == Kind::scatter ? S(it.radii.empty() ? it.size : it.radii[k]) + S(4) : S(8);
                    const float d2 = dx * dx + dy * dy;
                    if (d2 <= std::max(best, r * r) && d2 < r * r + 1) {
                        best = d2;
                        hover.item = i;
                        hover.index = static_cast<int>(k);
                    }
                }
            }
        }
        if (hover.item < 0) {  // crosshair lines: nearest x
            for (std::size_t i = 0; i < g.items.size() && hover.item < 0; ++i) {
                const Item& it = g.items[i];
                if (it.kind != Kind::line || !(it.flags & ItemFlags_HoverX)) continue;
                float bestdx = 1e9f;
                for (std::size_t k = 0; k < it.xs.size(); ++k) {
                    if (!finite_pt(it.xs[k], it.ys[k])) continue;
                    const float dx = std::fabs(float(px_x(it.xs[k])) - mouse.x);
                    if (dx < bestdx) {
                        bestdx = dx;
                        hover.item = static_cast<int>(i);
                        hover.index = static_cast<int>(k);
                    }
                }
            }
        }
        if (hover.item >= 0) {
            const Item& it = g.items[size_t(hover.item)];
            if (it.kind == Kind::line || it.kind == Kind::scatter) {
                hover.x = it.xs[size_t(hover.index)];
                hover.y = it.ys[size_t(hover.index)];
            } else if (it.kind == Kind::marker) {
                hover.x = it.x0;
                hover.y = it.y0;
            }
        }
    }

    // ---- items
    dl->PushClipRect(amin, amax, true);
    for (std::size_t i = 0; i < g.items.size(); ++i) {
        const Item& it = g.items[i];
        const bool hot = static_cast<int>(i) == hover.item;
        switch (it.kind) {
            case Kind::rect: {
                ImVec2 a(float(px_x(it.x0)), float(px_y(it.y0))), b(float(px_x(it.x1)), float(px_y(it.y1)));
                if (a.x > b.x) std::swap(a.x, b.x);
                if (a.y > b.y) std::swap(a.y, b.y);
                if (!(std::isfinite(a.x) && std::isfinite(b.x))) break;
                if (it.flags & ItemFlags_Hatched) {
                    hatched_rect(dl, a, b, it.colour);
                } else {
                    dl->AddRectFilled(a, b, hot ? theme::lighten(it.colour, 0.25f) : it.colour);
                    if (b.x - a.x > S(3)) dl->AddLine(ImVec2(b.x, a.y), ImVec2(b.x, b.y), theme::with_alpha(theme::kPlotBackground, 0.9f), S(1));
                }
                if (hot) dl->AddRect(a, b, theme::kText, 0, 0, S(1.5f));
                if (!it.text.empty()) {
                    const ImVec2 ts = text_size(small, it.text.c_str());
                    if (ts.x + S(6) < b.x - a.x && ts.y < b.y - a.y)
                        draw_text(dl, small, sh, ImVec2(a.x + S(3), (a.y + b.y - ts.y) * 0.5f), theme::rgba(15, 17, 22), it.text.c_str());
                }
                break;
            }
            case Kind::band: {
                // no anti-aliased fringe: neighbouring quads would overlap there and draw seams across the band
                const ImDrawListFlags flags = dl->Flags;
                dl->Flags &= ~ImDrawListFlags_AntiAliasedFill;
                for (std::size_t k = 1; k < it.xs.size(); ++k) {
                    if (!finite_pt(it.xs[k - 1], it.ys[k - 1]) || !finite_pt(it.xs[k], it.ys[k]) ||
                        !finite_pt(it.xs[k - 1], it.ys_hi[k - 1]) || !finite_pt(it.xs[k], it.ys_hi[k]))
                        continue;
                    dl->AddQuadFilled(to_pixels(it.xs[k - 1], it.ys[k - 1]), to_pixels(it.xs[k], it.ys[k]),
                                      to_pixels(it.xs[k], it.ys_hi[k]), to_pixels(it.xs[k - 1], it.ys_hi[k - 1]), it.colour);
                }
                dl->Flags = flags;
                break;
            }
            case Kind::line: {
                const float th = S(it.size) * (hot ? 1.3f : 1.0f);
                for (std::size_t k = 1; k < it.xs.size(); ++k) {
                    if (!finite_pt(it.xs[k - 1], it.ys[k - 1]) || !finite_pt(it.xs[k], it.ys[k])) continue;
                    const ImVec2 a = to_pixels(it.xs[k - 1], it.ys[k - 1]), b = to_pixels(it.xs[k], it.ys[k]);
                    const bool dim = !it.dim.empty() && (it.dim[k - 1] || it.dim[k]);
                    const ImU32 c = dim ? theme::with_alpha(it.colour, 0.35f) : it.colour;
                    if ((it.flags & ItemFlags_Dashed) || dim) dashed_line(dl, a, b, c, th, S(5), S(3));
                    else dl->AddLine(a, b, c, th);
                }
                if (it.xs.size() <= 40) {  // few points: show where they are
                    for (std::size_t k = 0; k < it.xs.size(); ++k) {
                        if (!finite_pt(it.xs[k], it.ys[k])) continue;
                        const bool dim = !it.dim.empty() && it.dim[k];
                        dl->AddCircleFilled(to_pixels(it.xs[k], it.ys[k]), S(2.8f), dim ? theme::with_alpha(it.colour, 0.45f) : it.colour);
                    }
                }
                break;
            }
            case Kind::scatter: {
                for (std::size_t k = 0; k < it.xs.size(); ++k) {
                    if (!finite_pt(it.xs[k], it.ys[k])) continue;
                    const float r = S(it.radii.empty() ? it.size : it.radii[k]);
                    const ImU32 c = it.colours.empty() ? it.colour : it.colours[k];
                    const ImVec2 p = to_pixels(it.xs[k], it.ys[k]);
                    dl->AddCircleFilled(p, r, theme::with_alpha(c, 0.85f));
                    dl->AddCircle(p, r, theme::lighten(c, 0.3f), 0, S(1));
                    if (hot && static_cast<int>(k) == hover.index) dl->AddCircle(p, r + S(3), theme::kText, 0, S(1.5f));
                }
                break;
            }
            case Kind::marker: {
                if (!finite_pt(it.x0, it.y0)) break;
                const ImVec2 p = to_pixels(it.x0, it.y0);
                if (it.flags & ItemFlags_Ring) {
                    dl->AddCircleFilled(p, S(it.size), theme::with_alpha(theme::kBackground, 0.6f));
                    dl->AddCircle(p, S(it.size), it.colour, 0, S(2));
                    dl->AddCircleFilled(p, S(2), it.colour);
                } else {
                    dl->AddCircleFilled(p, S(it.size), it.colour);
                }
                break;
            }
            case Kind::hline: {
                const float y = float(px_y(it.y0));
                if (!std::isfinite(y)) break;
                if (it.flags & ItemFlags_Dashed) dashed_line(dl, ImVec2(amin.x, y), ImVec2(amax.x, y), it.colour, S(1.2f), S(5), S(4));
                else dl->AddLine(ImVec2(amin.x, y), ImVec2(amax.x, y), it.colour, S(1.2f));
                break;
            }
            case Kind::vline: {
                const float x = float(px_x(it.x0));
                if (!std::isfinite(x)) break;
                if (it.flags & ItemFlags_Dashed) dashed_line(dl, ImVec2(x, amin.y), ImVec2(x, amax.y), it.colour, S(1.2f), S(5), S(4));
                else dl->AddLine(ImVec2(x, amin.y), ImVec2(x, amax.y), it.colour, S(1.2f));
                break;
            }
            case Kind::segment: {
                if (!finite_pt(it.x0, it.y0) || !finite_pt(it.x1, it.y1)) break;
                const ImVec2 a = to_pixels(it.x0, it.y0), b = to_pixels(it.x1, it.y1);
                if (it.flags & ItemFlags_Dashed) dashed_line(dl, a, b, it.colour, S(it.size), S(5), S(4));
                else dl->AddLine(a, b, it.colour, S(it.size));
                break;
            }
        }
    }

    // crosshair for HoverX lines: a vertical rule and a dot on each of them
    if (hover.item >= 0 && g.items[size_t(hover.item)].kind == Kind::line &&
        (g.items[size_t(hover.item)].flags & ItemFlags_HoverX)) {
        const float x = float(px_x(hover.x));
        dl->AddLine(ImVec2(x, amin.y), ImVec2(x, amax.y), theme::with_alpha(theme::kText, 0.35f), S(1));
        for (const Item& it : g.items) {
            if (it.kind != Kind::line || !(it.flags & ItemFlags_HoverX)) continue;
            int best_k = -1;
            float bestdx = 1e9f;
            for (std::size_t k = 0; k < it.xs.size(); ++k) {
                if (!finite_pt(it.xs[k], it.ys[k])) continue;
                const float dx = std::fabs(float(px_x(it.xs[k])) - x);
                if (dx < bestdx) { bestdx = dx; best_k = static_cast<int>(k); }
            }
            if (best_k >= 0 && bestdx < S(6)) {
                const ImVec2 p = to_pixels(it.xs[size_t(best_k)], it.ys[size_t(best_k)]);
                dl->AddCircleFilled(p, S(4), it.colour);
                dl->AddCircle(p, S(4), theme::kText, 0, S(1));
            }
        }
    }

    // texts, placed without overlapping each other (their rectangles also steer the legend away); drawn after the
    // legend, on a translucent plate each
    std::vector<ImVec4> placed;
    std::vector<const TextItem*> placed_text;
    for (const TextItem& t : g.texts) {
        if (!finite_pt(t.x, t.y)) continue;
        ImVec2 p = to_pixels(t.x, t.y);
        const ImVec2 ts = text_size(small, t.text.c_str());
        p.x -= ts.x * t.pivot_x;
        const ImVec2 o(S(t.offset.x), S(t.offset.y));
        const ImVec2 candidates[4] = {ImVec2(p.x + o.x, p.y + o.y - ts.y * 0.5f), ImVec2(p.x - o.x - ts.x, p.y + o.y - ts.y * 0.5f),
                                      ImVec2(p.x + o.x, p.y - o.y - ts.y * 0.5f), ImVec2(p.x - o.x - ts.x, p.y - o.y - ts.y * 0.5f)};
        for (int c = 0; c < (t.avoid ? 4 : 1); ++c) {
            ImVec2 at = candidates[c];
            if (!t.avoid) at.x = std::clamp(at.x, amin.x + S(2), std::max(amin.x + S(2), amax.x - ts.x - S(2)));  // kept inside
            const ImVec4 r(at.x, at.y, at.x + ts.x, at.y + ts.y);
            bool ok = r.x >= amin.x && r.z <= amax.x && r.y >= amin.y && r.w <= amax.y;
            for (const ImVec4& q : placed) ok &= (r.z < q.x || r.x > q.z || r.w < q.y || r.y > q.w);
            if (!ok && t.avoid) continue;
            placed.push_back(r);
            placed_text.push_back(&t);
            break;
        }
    }
    dl->PopClipRect();
    ImVec4 legend_rect(0, 0, 0, 0);  // an inside legend's box: the labels under it are left out (issue 26)

    // ---- legend
    if (!legend.empty() && g.legend != Legend::none) {
        const float sw = sh * 1.1f;
        if (g.legend == Legend::title_row) {
            float x = legend_own_row ? g.frame_min.x : g.frame_max.x - lw;
            for (const LegendItem& e : legend) {
                if (legend_own_row && x > g.frame_min.x && x + legend_item_w(e) > g.frame_max.x) {
                    x = g.frame_min.x;
                    legend_y += sh + S(6);
                }
                draw_swatch(dl, ImVec2(x, legend_y + (sh - sw) * 0.5f), sw, e);
                x += sw + S(4);
                draw_text(dl, small, sh, ImVec2(x, legend_y), theme::kTextDim, e.label.c_str());
                x += text_size(small, e.label.c_str()).x + S(12);
            }
        } else {
            float w = 0;
            for (const LegendItem& e : legend) w = std::max(w, text_size(small, e.label.c_str()).x);
            w += sw + S(4) + S(12);
            const float h = (sh + S(3)) * float(legend.size()) + S(8);
            Legend where = g.legend;
            if (where == Legend::inside_auto) {
                // the corner that covers the fewest drawn points (markers count double)
                const Legend corners[4] = {Legend::inside_ne, Legend::inside_nw, Legend::inside_se, Legend::inside_sw};
                int best = 1 << 30;
                for (Legend c : corners) {
                    const bool e = c == Legend::inside_ne || c == Legend::inside_se;
                    const bool so = c == Legend::inside_se || c == Legend::inside_sw;
                    const ImVec2 q(e ? amax.x - w - S(6) : amin.x + S(6), so ? amax.y - h - S(6) : amin.y + S(6));
                    auto inside = [&](double x, double y) {
                        if (!finite_pt(x, y)) return false;
                        const ImVec2 v = to_pixels(x, y);
                        return v.x >= q.x - S(4) && v.x <= q.x + w + S(4) && v.y >= q.y - S(4) && v.y <= q.y + h + S(4);
                    };
                    auto inside_px = [&](ImVec2 v) {
                        return v.x >= q.x - S(4) && v.x <= q.x + w + S(4) && v.y >= q.y - S(4) && v.y <= q.y + h + S(4);
                    };
                    int n = 0;
                    for (const ImVec4& r : placed)
                        n += 3 * !(r.z < q.x || r.x > q.x + w || r.w < q.y || r.y > q.y + h);
                    for (const Item& it : g.items) {
                        if (it.kind == Kind::segment && finite_pt(it.x0, it.y0) && finite_pt(it.x1, it.y1)) {
                            const ImVec2 a = to_pixels(it.x0, it.y0), b = to_pixels(it.x1, it.y1);
                            for (int k = 0; k <= 16; ++k)
                                n += inside_px(ImVec2(a.x + (b.x - a.x) * float(k) / 16, a.y + (b.y - a.y) * float(k) / 16));
                        }
                        if (it.kind == Kind::marker) n += 2 * inside(it.x0, it.y0);
                        if (it.kind == Kind::line || it.kind == Kind::scatter)
                            for (std::size_t k = 0; k < it.xs.size(); ++k) n += inside(it.xs[k], it.ys[k]);
                    }
                    if (n < best) {
                        best = n;
                        where = c;
                    }
                }
            }
            const bool east = where == Legend::inside_ne || where == Legend::inside_se;
            const bool south = where == Legend::inside_se || where == Legend::inside_sw;
            // (a legend wider than the plot stays right of the y axis: its tick labels are not covered)
            const ImVec2 p(std::max(amin.x + S(2), east ? amax.x - w - S(6) : amin.x + S(6)), south ? amax.y - h - S(6) : amin.y + S(6));
            legend_rect = ImVec4(p.x, p.y, p.x + w, p.y + h);
            dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), theme::with_alpha(theme::kBackground, 0.82f), S(4));
            float y = p.y + S(4);
            for (const LegendItem& e : legend) {
                draw_swatch(dl, ImVec2(p.x + S(6), y + (sh - sw) * 0.5f), sw, e);
                draw_text(dl, small, sh, ImVec2(p.x + S(6) + sw + S(4), y), theme::kTextDim, e.label.c_str());
                y += sh + S(3);
            }
        }
    }

    dl->PushClipRect(amin, amax, true);
    for (std::size_t i = 0; i < placed.size(); ++i) {
        const ImVec4& r = placed[i];
        const ImVec4& q = legend_rect;
        if (q.z > q.x && !(r.z < q.x || r.x > q.z || r.w < q.y || r.y > q.w)) continue;
        dl->AddRectFilled(ImVec2(r.x - S(2), r.y), ImVec2(r.z + S(2), r.w), theme::with_alpha(theme::kPlotBackground, 0.72f), S(3));
        draw_text(dl, small, sh, ImVec2(r.x, r.y), placed_text[i]->colour, placed_text[i]->text.c_str());
    }
    dl->PopClipRect();

    // ---- default tooltip
    if (hover.item >= 0 && !(g.items[size_t(hover.item)].flags & ItemFlags_CustomTooltip)) {
        const Item& it = g.items[size_t(hover.item)];
        ImGui::BeginTooltip();
        if (it.kind == Kind::line && (it.flags & ItemFlags_HoverX)) {
            ImGui::TextDisabled("%s = %s %s", ax.label.c_str(), fmt::number(hover.x).c_str(), ax.unit.c_str());
            for (const Item& o : g.items) {
                if (o.kind != Kind::line || !(o.flags & ItemFlags_HoverX)) continue;
                for (std::size_t k = 0; k < o.xs.size(); ++k) {
                    if (o.xs[k] != hover.x || !std::isfinite(o.ys[k])) continue;
                    ImGui::TextColored(theme::vec(o.colour), "\u25CF");
                    ImGui::SameLine();
                    ImGui::Text("%s  %s %s", o.label.rfind("##", 0) == 0 ? "" : o.label.c_str(), fmt::number(o.ys[k]).c_str(), ay.unit.c_str());
                }
            }
        } else {
            if (!it.label.empty() && it.label.rfind("##", 0) != 0) ImGui::TextUnformatted(it.label.c_str());
            ImGui::TextDisabled("%s: %s %s", ax.label.empty() ? "x" : ax.label.c_str(), fmt::number(hover.x).c_str(), ax.unit.c_str());
            if (!categories()) ImGui::TextDisabled("%s: %s %s", ay.label.empty() ? "y" : ay.label.c_str(), fmt::number(hover.y).c_str(), ay.unit.c_str());
        }
        ImGui::EndTooltip();
    }
    return hover;
}

}  // namespace web::plot
