// theme.h — the page's look in one place: fonts, the dark style, and colours that mean something.
//
//   web::theme::apply(dpr);                       // once at start and whenever devicePixelRatio changes
//   ImGui::PushFont(web::theme::fonts().headline); ... ImGui::PopFont();
//   draw->AddRectFilled(a, b, web::theme::bound_colour(op.bound));
//
// Colours carry one meaning each across every chart: blue = compute-bound, amber = memory-bound (HBM),
// violet = communication, grey = latency / overhead; provenance from green (measured) to grey (analytical).
#pragma once
#include <imgui.h>

#include "core/moe.h"

namespace web::theme {

struct Fonts {
    ImFont* body = nullptr;      // 14 px: controls and text
    ImFont* small = nullptr;     // 12 px: axis ticks, captions
    ImFont* bold = nullptr;      // 14 px bold: section and chart titles
    ImFont* headline = nullptr;  // 26 px bold: the headline numbers
};
const Fonts& fonts();

// Loads the fonts at device size (crisp at any devicePixelRatio) and sets the scaled style.
void apply(double dpr);
// Device pixels per CSS pixel of the current style (for sizes written in CSS pixels: theme::px(8)).
float px(float css_pixels);

// ---- palette
constexpr ImU32 rgba(int r, int g, int b, int a = 255) { return IM_COL32(r, g, b, a); }
inline constexpr ImU32 kBackground = rgba(19, 21, 26);
inline constexpr ImU32 kPanel = rgba(27, 30, 37);
inline constexpr ImU32 kPanelBorder = rgba(45, 50, 61);
inline constexpr ImU32 kPlotBackground = rgba(22, 24, 30);
inline constexpr ImU32 kGrid = rgba(255, 255, 255, 20);
inline constexpr ImU32 kAxis = rgba(255, 255, 255, 70);
inline constexpr ImU32 kText = rgba(228, 231, 238);
inline constexpr ImU32 kTextDim = rgba(139, 147, 163);
inline constexpr ImU32 kAccent = rgba(98, 146, 240);
inline constexpr ImU32 kGood = rgba(92, 198, 137);
inline constexpr ImU32 kWarn = rgba(240, 180, 70);
inline constexpr ImU32 kBad = rgba(240, 98, 90);
inline constexpr ImU32 kPinned = rgba(230, 120, 200);  // scenario A in comparisons

inline constexpr ImU32 kCompute = rgba(76, 155, 232);
inline constexpr ImU32 kMemory = rgba(232, 162, 60);
inline constexpr ImU32 kComm = rgba(176, 124, 232);
inline constexpr ImU32 kLatency = rgba(138, 148, 166);
inline constexpr ImU32 kOffload = rgba(226, 104, 150);  // experts streamed from the host tier / SSD
// Serving (the Serving tab and cards): time to first token and time per output token.
inline constexpr ImU32 kTtft = rgba(98, 146, 240);   // = kAccent
inline constexpr ImU32 kTpot = rgba(72, 196, 186);   // teal
inline constexpr ImU32 kQueue = rgba(240, 180, 70);  // waiting (queue, first wave): = kWarn

ImU32 bound_colour(moe::Bound b);
ImU32 source_colour(moe::Source s);
ImU32 with_alpha(ImU32 c, float alpha);
ImU32 lighten(ImU32 c, float amount);  // towards white, 0..1
ImVec4 vec(ImU32 c);

}  // namespace web::theme
