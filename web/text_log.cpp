// text_log.cpp — see text_log.h.
#include "text_log.h"

#include <imgui.h>

#include <algorithm>

namespace web {

std::vector<TextLogEntry>& text_log() {
    static std::vector<TextLogEntry> log;
    return log;
}

namespace {
void add(ImVec2 p, ImVec2 size, ImVec2 clip0, ImVec2 clip1, const char* text) {
    if (!text || !*text || size.x <= 0) return;
    // text that is not shown at all (scrolled away, a collapsed window) is not on screen: nothing to check
    if (p.x >= clip1.x || p.y >= clip1.y || p.x + size.x <= clip0.x || p.y + size.y <= clip0.y) return;
    const ImVec2 w0 = ImGui::GetWindowPos(), ws = ImGui::GetWindowSize();
    text_log().push_back({p.x, p.y, size.x, size.y, clip0.x, clip0.y, clip1.x, clip1.y, w0.x, w0.y, w0.x + ws.x, w0.y + ws.y, text});
}
}  // namespace

void draw_text(ImDrawList* dl, ImFont* font, float size, ImVec2 pos, ImU32 colour, const char* text, const ImVec4* clip) {
    dl->AddText(font, size, pos, colour, text, nullptr, 0, clip);
    const ImVec2 ts = font->CalcTextSizeA(size, 1e9f, 0, text);
    ImVec2 c0 = dl->GetClipRectMin(), c1 = dl->GetClipRectMax();
    if (clip) {
        c0 = ImVec2(std::max(c0.x, clip->x), std::max(c0.y, clip->y));
        c1 = ImVec2(std::min(c1.x, clip->z), std::min(c1.y, clip->w));
    }
    add(pos, ts, c0, c1, text);
}

void log_text_item(const char* text) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    add(a, ImVec2(b.x - a.x, b.y - a.y), dl->GetClipRectMin(), dl->GetClipRectMax(), text);
}

std::string elide_text(ImFont* font, float size, const std::string& text, float max_w) {
    auto width = [&](const std::string& s) { return font->CalcTextSizeA(size, 1e9f, 0, s.c_str()).x; };
    if (width(text) <= max_w) return text;
    std::string s = text;
    while (!s.empty()) {
        while (!s.empty()) {  // one whole UTF-8 character off the end
            const unsigned char b = static_cast<unsigned char>(s.back());
            s.pop_back();
            if ((b & 0xC0) != 0x80) break;
        }
        while (!s.empty() && (s.back() == ' ' || s.back() == ',')) s.pop_back();
        if (width(s + "\u2026") <= max_w) return s + "\u2026";
    }
    return std::string();
}

}  // namespace web
