// theme.cpp — fonts, style and colours of the page (see theme.h).
#include "theme.h"

#include <imgui_impl_opengl3.h>

#include <cmath>
#include <cstddef>

namespace web {
// Subsets of DejaVu Sans (Debian's fonts-dejavu-core), generated at build time by web/tools/subset_font.py.
// Empty when the font files were missing: the built-in font is used instead.
extern const unsigned char font_regular[];
extern const std::size_t font_regular_size;
extern const unsigned char font_bold[];
extern const std::size_t font_bold_size;
// The characters the subsets hold (web/tools/subset_font.py RANGES), zero-terminated pairs of ImWchar (16 bits).
extern const unsigned short font_glyph_ranges[];
}  // namespace web

namespace web::theme {

namespace {
Fonts g_fonts;
float g_scale = 1;

ImFont* add_font(const unsigned char* data, std::size_t size, float pixels) {
    ImGuiIO& io = ImGui::GetIO();
    ImFontConfig cfg;
    cfg.OversampleH = 2;
    cfg.OversampleV = 1;
    cfg.PixelSnapH = true;
    if (size == 0) {  // fallback: the built-in bitmap font (ASCII only)
        cfg.SizePixels = std::round(pixels);
        return io.Fonts->AddFontDefault(&cfg);
    }
    cfg.FontDataOwnedByAtlas = false;  // static data
    return io.Fonts->AddFontFromMemoryTTF(const_cast<unsigned char*>(data), static_cast<int>(size), std::round(pixels),
                                          &cfg, font_glyph_ranges);
}
}  // namespace

const Fonts& fonts() { return g_fonts; }
float px(float css_pixels) { return css_pixels * g_scale; }

ImVec4 vec(ImU32 c) { return ImGui::ColorConvertU32ToFloat4(c); }

ImU32 with_alpha(ImU32 c, float alpha) {
    ImVec4 v = vec(c);
    v.w *= alpha;
    return ImGui::ColorConvertFloat4ToU32(v);
}

ImU32 lighten(ImU32 c, float amount) {
    ImVec4 v = vec(c);
    v.x += (1 - v.x) * amount;
    v.y += (1 - v.y) * amount;
    v.z += (1 - v.z) * amount;
    return ImGui::ColorConvertFloat4ToU32(v);
}

ImU32 bound_colour(moe::Bound b) {
    switch (b) {
        case moe::Bound::compute: return kCompute;
        case moe::Bound::memory: return kMemory;
        case moe::Bound::comm: return kComm;
        case moe::Bound::latency:
        case moe::Bound::none: return kLatency;
        case moe::Bound::offload: return kOffload;
    }
    return kLatency;
}

ImU32 source_colour(moe::Source s) {
    switch (s) {
        case moe::Source::measured: return kGood;
        case moe::Source::interpolated: return rgba(80, 180, 190);
        case moe::Source::transferred: return kWarn;
        case moe::Source::analytical: return rgba(150, 150, 160);
    }
    return kLatency;
}

void apply(double dpr) {
    g_scale = static_cast<float>(dpr);
    const float s = g_scale;
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    g_fonts.body = add_font(font_regular, font_regular_size, 14.0f * s);
    g_fonts.small = add_font(font_regular, font_regular_size, 12.0f * s);
    g_fonts.bold = add_font(font_bold, font_bold_size, 14.0f * s);
    g_fonts.headline = add_font(font_bold, font_bold_size, 25.0f * s);
    io.FontDefault = g_fonts.body;
    io.Fonts->Build();
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();

    ImGuiStyle style;
    ImGui::StyleColorsDark(&style);
    style.WindowPadding = ImVec2(10, 10);
    style.FramePadding = ImVec2(7, 4);
    style.ItemSpacing = ImVec2(8, 6);
    style.ItemInnerSpacing = ImVec2(6, 4);
    style.CellPadding = ImVec2(6, 3);
    style.ScrollbarSize = 11;
    style.GrabMinSize = 10;
    style.WindowRounding = 0;
    style.ChildRounding = 6;
    style.FrameRounding = 4;
    style.PopupRounding = 4;
    style.GrabRounding = 3;
    style.TabRounding = 4;
    style.ScrollbarRounding = 6;
    style.WindowBorderSize = 0;
    style.ChildBorderSize = 1;
    style.PopupBorderSize = 1;
    style.FrameBorderSize = 0;

    ImVec4* c = style.Colors;
    c[ImGuiCol_Text] = vec(kText);
    c[ImGuiCol_TextDisabled] = vec(kTextDim);
    c[ImGuiCol_WindowBg] = vec(kBackground);
    c[ImGuiCol_ChildBg] = vec(kPanel);
    c[ImGuiCol_PopupBg] = vec(rgba(32, 36, 45, 250));
    c[ImGuiCol_Border] = vec(kPanelBorder);
    c[ImGuiCol_FrameBg] = vec(rgba(38, 43, 53));
    c[ImGuiCol_FrameBgHovered] = vec(rgba(48, 55, 69));
    c[ImGuiCol_FrameBgActive] = vec(rgba(56, 66, 86));
    c[ImGuiCol_TitleBg] = c[ImGuiCol_TitleBgActive] = vec(kPanel);
    c[ImGuiCol_MenuBarBg] = vec(kPanel);
    c[ImGuiCol_ScrollbarBg] = vec(rgba(0, 0, 0, 0));
    c[ImGuiCol_ScrollbarGrab] = vec(rgba(70, 78, 94));
    c[ImGuiCol_ScrollbarGrabHovered] = vec(rgba(90, 100, 120));
    c[ImGuiCol_ScrollbarGrabActive] = vec(rgba(110, 122, 146));
    c[ImGuiCol_CheckMark] = vec(kAccent);
    c[ImGuiCol_SliderGrab] = vec(kAccent);
    c[ImGuiCol_SliderGrabActive] = vec(lighten(kAccent, 0.25f));
    c[ImGuiCol_Button] = vec(rgba(44, 50, 63));
    c[ImGuiCol_ButtonHovered] = vec(rgba(58, 70, 92));
    c[ImGuiCol_ButtonActive] = vec(rgba(72, 92, 130));
    c[ImGuiCol_Header] = vec(rgba(44, 52, 68));
    c[ImGuiCol_HeaderHovered] = vec(rgba(56, 68, 92));
    c[ImGuiCol_HeaderActive] = vec(rgba(66, 84, 118));
    c[ImGuiCol_Separator] = vec(kPanelBorder);
    c[ImGuiCol_Tab] = vec(rgba(33, 37, 46));
    c[ImGuiCol_TabHovered] = vec(rgba(62, 78, 108));
    c[ImGuiCol_TabActive] = vec(rgba(50, 62, 86));
    c[ImGuiCol_TableHeaderBg] = vec(rgba(34, 38, 47));
    c[ImGuiCol_TableBorderStrong] = vec(kPanelBorder);
    c[ImGuiCol_TableBorderLight] = vec(rgba(40, 44, 54));
    c[ImGuiCol_TableRowBg] = vec(rgba(0, 0, 0, 0));
    c[ImGuiCol_TableRowBgAlt] = vec(rgba(255, 255, 255, 8));
    c[ImGuiCol_TextSelectedBg] = vec(with_alpha(kAccent, 0.35f));
    c[ImGuiCol_NavHighlight] = vec(kAccent);
    style.ScaleAllSizes(s);
    ImGui::GetStyle() = style;
}

}  // namespace web::theme
