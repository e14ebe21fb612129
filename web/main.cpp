// main.cpp — the page: GLFW window on the canvas, Dear ImGui, one AppState, one fixed frame order.
//
//   frame: hashchange? -> display scale -> ImGui frame { notice, scenario panel, recompute if dirty, results }
//          -> render -> write the URL fragment and publish window.__moe if anything changed
//
// HiDPI: the canvas' backing store is its CSS size times devicePixelRatio, and ImGui works in those device
// pixels (Emscripten's GLFW reports the mouse in backing-store pixels too); the font is rasterised at the
// device size and the style scaled, so text stays crisp. window.__moe.ui is converted back to CSS pixels.
#include <GLES3/gl3.h>
#include <GLFW/glfw3.h>
#include <emscripten.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <cmath>
#include <cstdio>

#include "app_state.h"
#include "panels.h"
#include "platform.h"

namespace {

struct Window {
    GLFWwindow* glfw = nullptr;
    int width = 0, height = 0;  // device pixels
};

// Called whenever devicePixelRatio changes (and once at start): font at device size, style scaled to match.
void apply_display_scale(web::AppState& st, double dpr) {
    st.dpr = dpr;
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    ImFontConfig cfg;
    st.font_px = std::round(15.0f * static_cast<float>(dpr));
    cfg.SizePixels = st.font_px;
    cfg.OversampleH = cfg.OversampleV = 1;
    cfg.PixelSnapH = true;
    io.Fonts->AddFontDefault(&cfg);
    io.Fonts->Build();
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();

    ImGuiStyle style;
    ImGui::StyleColorsDark(&style);
    style.WindowRounding = 0;
    style.FrameRounding = 3;
    style.ScaleAllSizes(static_cast<float>(dpr));
    ImGui::GetStyle() = style;
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
    if (m.device_pixel_ratio != st.dpr) apply_display_scale(st, m.device_pixel_ratio);
}

struct App {
    Window win;
    web::AppState st{moe::builtin_catalog(), moe::builtin_tables()};
};

void frame(void* arg) {
    App& app = *static_cast<App*>(arg);
    web::AppState& st = app.st;

    if (web::take_hashchange()) {
        const std::string frag = web::read_fragment();
        if (frag != "#" + st.last_fragment) load_fragment(st, frag);
    }
    sync_canvas_size(app.win, st);

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    st.ui.clear();

    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    ImGui::Begin("MoE Roofline", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    ImGui::TextUnformatted("MoE Roofline");
    ImGui::SameLine();
    ImGui::TextDisabled("prefill / decode time and memory of Mixture-of-Experts inference");
    draw_notice(st);

    const float panel_w = std::fmax(ImGui::GetFontSize() * 24.0f, vp->WorkSize.x * 0.34f);
    ImGui::BeginChild("scenario", ImVec2(panel_w, 0), true);
    draw_scenario_panel(st);
    ImGui::EndChild();

    if (st.dirty) recompute(st);  // once per change, before any result is drawn

    ImGui::SameLine();
    ImGui::BeginChild("results", ImVec2(0, 0), true);
    draw_results_panel(st);
    ImGui::EndChild();
    ImGui::End();

    ImGui::Render();
    glViewport(0, 0, app.win.width, app.win.height);
    glClearColor(0.10f, 0.10f, 0.12f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

    if (st.fragment_dirty) {
        st.last_fragment = moe::encode_fragment(st.scenario);
        web::write_fragment(st.last_fragment);
        st.fragment_dirty = false;
    }
    // Publish after drawing, so the widget rectangles belong to the numbers (and again if the layout moved).
    if (st.publish_pending || st.ui != st.published_ui) {
        ++st.publish_seq;
        web::publish_hook(hook_json(st));
        st.published_ui = st.ui;
        st.publish_pending = false;
    }
}

}  // namespace

int main() {
    if (!glfwInit()) {
        std::fprintf(stderr, "glfwInit failed\n");
        return 1;
    }
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    static App app;  // lives for the page's lifetime (the main loop never returns)
    app.win.glfw = glfwCreateWindow(1280, 800, "MoE Roofline", nullptr, nullptr);
    if (!app.win.glfw) {
        std::fprintf(stderr, "WebGL 2 is not available in this browser\n");
        return 1;
    }
    glfwMakeContextCurrent(app.win.glfw);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    ImGui_ImplGlfw_InitForOpenGL(app.win.glfw, true);
    ImGui_ImplOpenGL3_Init("#version 300 es");

    web::install_listeners();
    load_fragment(app.st, web::read_fragment());
    app.st.dpr = 0;  // forces apply_display_scale on the first frame
    web::page_ready();
    emscripten_set_main_loop_arg(frame, &app, 0, true);
    return 0;
}
