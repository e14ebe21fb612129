// platform.h — the page's only contact with the browser. Implemented in platform_web.cpp (EM_JS glue), with
// no-ops on a native build, so the rest of web/ is plain C++ and ImGui.
//
//   std::string frag = web::read_fragment();          // "#s=..." or ""
//   if (web::take_hashchange()) ...                   // once per `hashchange` event (a pasted link, back/forward)
//   web::write_fragment("s=...");                     // history.replaceState: no new history entry, no event
//   web::publish_hook(json_text);                     // window.__moe = JSON.parse(json_text)
#pragma once
#include <string>

namespace web {

struct DisplayMetrics {
    double css_width = 1280;   // canvas size in CSS pixels
    double css_height = 800;
    double device_pixel_ratio = 1;
};

void install_listeners();                          // hashchange (call once, before the main loop)
DisplayMetrics display_metrics();
void set_canvas_size(int width, int height);       // backing store in device pixels (GLFW's window follows)
std::string read_fragment();                       // location.hash, with its '#', or ""
std::string page_url_without_fragment();           // location.href up to the '#'
void write_fragment(const std::string& fragment);  // without '#'; replaces the current history entry
bool take_hashchange();                            // true once after each hashchange event
void publish_hook(const std::string& json_text);   // window.__moe, and a `moe-update` event on window
void copy_to_clipboard(const std::string& text);   // navigator.clipboard (best effort: needs a secure context)
void download(const std::string& filename, const std::string& mime, const std::string& data);
void page_ready();                                 // hides the loading message of shell.html

}  // namespace web
