// text_log.h — every text box the page draws outside ImGui's own layout (chart titles, axis tags and ticks,
// legends, card texts, memory bar labels), logged per frame for the test hook (window.__moe.texts): the browser
// test checks that no text box overlaps another and that none is cut by its clip rectangle (issue 26).
//
//   web::draw_text(dl, font, size, pos, colour, "per user");   // ImDrawList::AddText, logged
//   web::log_text_item("charts show");                        // the last ImGui item, logged as a text box
#pragma once
#include <imgui.h>

#include <string>
#include <vector>

namespace web {

struct TextLogEntry {
    float x = 0, y = 0, w = 0, h = 0;                 // device pixels
    float clip_x0 = 0, clip_y0 = 0, clip_x1 = 0, clip_y1 = 0;  // where it may show (its draw list's clip, a card)
    float win_x0 = 0, win_y0 = 0, win_x1 = 0, win_y1 = 0;      // its window (a card): when part of it is scrolled
                                                               // out of sight, its clip is the scroll's, not a cut
    std::string text;
};

std::vector<TextLogEntry>& text_log();     // this frame's boxes (main.cpp clears it at the start of a frame)
// AddText with the box logged; `clip` (optional) also clips the drawing, as AddText's own argument does.
void draw_text(ImDrawList* dl, ImFont* font, float size, ImVec2 pos, ImU32 colour, const char* text,
               const ImVec4* clip = nullptr);
void log_text_item(const char* text);       // the last item's rectangle
// `text` shortened with an ellipsis to at most `max_w` pixels in `font` at `size` (whole UTF-8 characters); the
// widget's tooltip is where the whole text goes.
std::string elide_text(ImFont* font, float size, const std::string& text, float max_w);

}  // namespace web
