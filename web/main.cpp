// main.cpp — the page: GLFW window on the canvas, Dear ImGui, one AppState, one fixed frame order.
//
//   frame: hashchange / dropped or pasted text -> display scale -> ImGui frame { toolbar, notice, scenario panel,
//          recompute if needed, results } -> render (skipped when the draw lists are the last drawn frame's) -> write
//          the URL fragment and publish window.__moe
//
// HiDPI: the canvas' backing store is its CSS size times devicePixelRatio, and ImGui works in those device
// pixels (Emscripten's GLFW reports the mouse in backing-store pixels too); the fonts are rasterised at the
// device size and the style scaled, so text stays crisp. window.__moe.ui is converted back to CSS pixels.
#include <GLES3/gl3.h>
#include <GLFW/glfw3.h>
#include <emscripten.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "app_state.h"
#include "panels.h"
#include "platform.h"
#include "text_log.h"
#include "theme.h"
#include "widgets.h"

namespace {

struct Window {
    GLFWwindow* glfw = nullptr;
    int width = 0, height = 0;  // device pixels
};

struct App {
    Window win;
    web::AppState st{moe::builtin_catalog(), moe::builtin_tables()};
    std::string clipboard;            // what ImGui's clipboard getter returned last
    bool clipboard_read = false;      // ImGui asked for the clipboard this frame (it handled Ctrl+V itself)
    std::string paste_for_widget;     // a paste event's text waiting to reach the focused text field
    std::vector<unsigned char> drawn, frame_key;  // the last drawn frame's draw lists, this frame's (same_as_drawn)
};

App* g_app = nullptr;  // for ImGui's clipboard callbacks (C function pointers)

const char* get_clipboard(void*) {
    g_app->clipboard = web::pasted_text();
    g_app->clipboard_read = true;
    return g_app->clipboard.c_str();
}

void set_clipboard(void*, const char* text) { web::copy_to_clipboard(text ? text : ""); }

// Whether this frame's draw lists are byte for byte the last drawn frame's, at the same canvas size and scale (an idle
// page: nothing moved, nothing changed). Its GL work is then skipped: the canvas keeps showing the last frame and the
// browser has nothing new to composite, so an idle page costs the ImGui frame alone (no software rasterisation in a
// headless browser, less power on a laptop). The frame's logic (hashchange, recompute, URL, window.__moe) still runs.
bool same_as_drawn(App& app, const ImDrawData* d) {
    std::vector<unsigned char>& key = app.frame_key;
    key.clear();
    auto put = [&key](const void* p, size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        key.insert(key.end(), b, b + n);
    };
    const float scale[7] = {float(app.win.width), float(app.win.height), float(app.st.dpr), d->DisplayPos.x, d->DisplayPos.y,
                            d->DisplaySize.x, d->DisplaySize.y};
    put(scale, sizeof scale);
    for (int i = 0; i < d->CmdListsCount; ++i) {
        const ImDrawList* l = d->CmdLists[i];
        put(l->VtxBuffer.Data, size_t(l->VtxBuffer.Size) * sizeof(ImDrawVert));
        put(l->IdxBuffer.Data, size_t(l->IdxBuffer.Size) * sizeof(ImDrawIdx));
        for (const ImDrawCmd& c : l->CmdBuffer) {
            put(&c.ClipRect, sizeof c.ClipRect);
            put(&c.TextureId, sizeof c.TextureId);
            const unsigned int counts[3] = {c.VtxOffset, c.IdxOffset, c.ElemCount};
            put(counts, sizeof counts);
        }
    }
    if (key == app.drawn) return true;
    app.drawn.swap(key);
    return false;
}

void sync_canvas_size(Window& win, web::AppState& st) {
    const web::DisplayMetrics m = web::display_metrics();
    const int w = static_cast<int>(std::lround(m.css_width * m.device_pixel_ratio));
    const int h = static_cast<int>(std::lround(m.css_height * m.device_pixel_ratio));
    if (w > 0 && h > 0 && (w != win.width || h != win.height)) {
        web::set_canvas_size(w, h);
        win.width = w;
        win.height = h;
    }
    if (m.device_pixel_ratio != st.dpr) {
        st.dpr = m.device_pixel_ratio;
        web::theme::apply(st.dpr);
    }
}

// Text from outside ImGui: a dropped or opened file, or a paste while no text field has focus.
void take_user_input(App& app) {
    web::AppState& st = app.st;
    web::UserText t;
    while (web::take_user_text(t)) {
        const std::string origin = t.kind == web::UserText::pasted ? "pasted text" : "file " + t.name;
        const std::string msg = web::load_user_json(st, t.text, origin);
        if (!msg.empty()) {
            st.toast = msg;
            st.toast_until = ImGui::GetTime() + 3;
        }
        st.publish_pending = true;
    }
    std::string pasted;
    if (web::take_paste_for_widget(pasted)) {
        if (ImGui::GetIO().WantTextInput) {
            app.paste_for_widget = pasted;  // given to the field after this frame unless ImGui took it (Ctrl+V)
        } else {
            const std::string msg = web::load_user_json(st, pasted, "pasted text");
            if (!msg.empty()) {
                st.toast = msg;
                st.toast_until = ImGui::GetTime() + 3;
            }
            st.publish_pending = true;
        }
    }
}

void frame(void* arg) {
    App& app = *static_cast<App*>(arg);
    web::AppState& st = app.st;

    if (web::take_hashchange()) {
        const std::string frag = web::read_fragment();
        if (frag != "#" + st.last_fragment) load_fragment(st, frag);
    }
    sync_canvas_size(app.win, st);
    take_user_input(app);
    app.clipboard_read = false;

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    float wheel_x = 0, wheel_y = 0;
    web::take_wheel(wheel_x, wheel_y);
    ImGui::GetIO().MouseWheel -= wheel_y;  // ImGui: positive scrolls up
    ImGui::GetIO().MouseWheelH -= wheel_x;
    ImGui::NewFrame();
    st.ui.clear();
    web::text_log().clear();

    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    ImGui::Begin("MoE Roofline", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    draw_toolbar(st);
    draw_notice(st);

    const float css_w = vp->WorkSize.x / static_cast<float>(st.dpr);
    const float panel_w = std::clamp(css_w * 0.27f, 300.0f, 390.0f) * static_cast<float>(st.dpr);
    ImGui::BeginChild("scenario", ImVec2(panel_w, 0), true);
    {
        const ImVec2 p = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
        web::record_rect(st, "panel.scenario", p, ImVec2(p.x + sz.x, p.y + sz.y));
    }
    draw_scenario_panel(st);
    ImGui::EndChild();

    if (web::needs_recompute(st)) web::recompute(st);  // once per change, before any result is drawn
    // The planner: started by its button or a link, then a slice per frame (the page stays responsive).
    if (st.plan.run_requested) web::start_plan(st);
    if (st.plan.running) {
        // The slice is sized against the rest of the frame (drawing, compositing): 1.5x what the last frame spent
        // outside the search, 30..80 ms, so the search gets ~60% of the time and the page still draws >= 10 frames
        // a second even where drawing is slow (software WebGL: ~40 ms a frame).
        static double last_start_ms = -1, last_slice_ms = 0;
        const double start = web::now_ms();
        const double other = last_start_ms < 0 ? 30.0 : std::max(0.0, start - last_start_ms - last_slice_ms);
        const double budget = std::clamp(1.5 * other, 30.0, 80.0);
        web::step_plan(st, budget);
        last_slice_ms = web::now_ms() - start;
        last_start_ms = st.plan.running ? start : -1;
    }

    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_ChildBg, web::theme::vec(web::theme::kBackground));
    ImGui::BeginChild("results", ImVec2(0, 0), false);
    ImGui::PopStyleColor();
    draw_results_panel(st);
    ImGui::EndChild();
    ImGui::End();

    ImGui::Render();
    if (!same_as_drawn(app, ImGui::GetDrawData())) {
        glViewport(0, 0, app.win.width, app.win.height);
        const ImVec4 bg = web::theme::vec(web::theme::kBackground);
        glClearColor(bg.x, bg.y, bg.z, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    }

    // A paste (e.g. Cmd+V on a Mac) that ImGui did not read through the clipboard: type it into the field.
    if (!app.paste_for_widget.empty()) {
        if (!app.clipboard_read && ImGui::GetIO().WantTextInput) ImGui::GetIO().AddInputCharactersUTF8(app.paste_for_widget.c_str());
        app.paste_for_widget.clear();
    }

    // The URL holds the last valid scenario (a link must open; an invalid one would show the defaults).
    if (st.fragment_dirty && st.estimate.ok) {
        const std::string frag = web::build_fragment(st);
        if (frag != st.last_fragment) {
            st.last_fragment = frag;
            web::write_fragment(frag);
        }
        st.fragment_dirty = false;
        st.publish_pending = true;
    }
    // Publish after drawing, so the widget rectangles belong to the numbers (and again if the layout moved).
    // The text boxes drawn (CSS pixels), published with the rectangles they belong to.
    st.texts.clear();
    const double inv = 1.0 / st.dpr;
    for (const web::TextLogEntry& t : web::text_log()) {
        const float x0 = std::max(t.x, t.clip_x0), y0 = std::max(t.y, t.clip_y0);
        const float x1 = std::min(t.x + t.w, t.clip_x1), y1 = std::min(t.y + t.h, t.clip_y1);
        // a box cut by its clip is published whole with group "cut" (the test reports it), unless its window (a
        // card) is partly outside the screen: then the results panel is scrolled and the clip is the scroll's
        const bool on_screen = t.win_x0 >= vp->WorkPos.x - 1 && t.win_y0 >= vp->WorkPos.y - 1 &&
                               t.win_x1 <= vp->WorkPos.x + vp->WorkSize.x + 1 && t.win_y1 <= vp->WorkPos.y + vp->WorkSize.y + 1;
        const bool cut = on_screen && (x0 > t.x + 1 || y0 > t.y + 1 || x1 < t.x + t.w - 1 || y1 < t.y + t.h - 1);
        st.texts.push_back({{t.x * inv, t.y * inv, t.w * inv, t.h * inv}, t.text, cut ? "cut" : ""});
    }
    const bool texts_moved = st.texts.size() != st.published_texts.size() ||
                             !std::equal(st.texts.begin(), st.texts.end(), st.published_texts.begin(),
                                         [](const web::AppState::TextBox& a, const web::AppState::TextBox& b) {
                                             return a.r == b.r && a.text == b.text && a.group == b.group;
                                         });
    if (st.publish_pending || st.ui != st.published_ui || texts_moved) {
        st.published_texts = st.texts;
        if (st.perf.first_results_ms < 0) st.perf.first_results_ms = web::now_ms();
        ++st.publish_seq;
        web::publish_hook(hook_json(st));
        st.published_ui = st.ui;
        st.publish_pending = false;
    }
}

}  // namespace

// For bench/page_bench.mjs: recomputes the current sweep chart `repeats` times (as the recompute step does) and
// returns the fastest wall time in ms. window.__moe.perf.sweep_ms is the same measurement for the page's own
// recomputes.
extern "C" EMSCRIPTEN_KEEPALIVE double moe_page_bench_sweep(int repeats) {
    if (!g_app) return -1;
    web::AppState& st = g_app->st;
    double best = 1e9;
    web::SweepData d;
    for (int i = 0; i < repeats; ++i) {
        web::run_sweep(st.scenario, st.sweep.spec, *st.tables, d);
        best = std::min(best, d.compute_ms);
    }
    return best;
}

int main() {
    if (!glfwInit()) {
        std::fprintf(stderr, "glfwInit failed\n");
        return 1;
    }
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    static App app;  // lives for the page's lifetime (the main loop never returns)
    g_app = &app;
    app.win.glfw = glfwCreateWindow(1280, 800, "MoE Roofline", nullptr, nullptr);
    if (!app.win.glfw) {
        std::fprintf(stderr, "WebGL 2 is not available in this browser\n");
        return 1;
    }
    glfwMakeContextCurrent(app.win.glfw);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    ImGui_ImplGlfw_InitForOpenGL(app.win.glfw, true);
    ImGui_ImplOpenGL3_Init("#version 300 es");
    glfwSetScrollCallback(app.win.glfw, nullptr);  // the wheel comes from platform_web (take_wheel)
    io.GetClipboardTextFn = get_clipboard;
    io.SetClipboardTextFn = set_clipboard;
    io.ClipboardUserData = nullptr;

    web::install_listeners();
    load_fragment(app.st, web::read_fragment());
    app.st.dpr = 0;  // forces theme::apply on the first frame
    web::page_ready();
    emscripten_set_main_loop_arg(frame, &app, 0, true);
    return 0;
}
