// platform.h — the page's only contact with the browser. Implemented in platform_web.cpp (EM_JS glue), with
// no-ops on a native build, so the rest of web/ is plain C++ and ImGui.
//
//   std::string frag = web::read_fragment();          // "#s=..." or ""
//   if (web::take_hashchange()) ...                   // once per `hashchange` event (a pasted link, back/forward)
//   web::write_fragment("s=...");                     // history.replaceState: no new history entry, no event
//   web::publish_hook(json_text);                     // window.__moe = JSON.parse(json_text)
//   web::UserText t; while (web::take_user_text(t)) ...   // a dropped / opened file or pasted text
#pragma once
#include <string>

namespace web {

struct DisplayMetrics {
    double css_width = 1280;   // canvas size in CSS pixels
    double css_height = 800;
    double device_pixel_ratio = 1;
};

// Text the user gave the page outside of ImGui's widgets.
struct UserText {
    enum Kind { dropped_file, opened_file, pasted } kind = pasted;
    std::string name;  // file name (files only)
    std::string text;
};

void install_listeners();                          // hashchange, drag and drop, paste (once, before the main loop)
DisplayMetrics display_metrics();
void set_canvas_size(int width, int height);       // backing store in device pixels (GLFW's window follows)
std::string read_fragment();                       // location.hash, with its '#', or ""
std::string page_url_without_fragment();           // location.href up to the '#'
void write_fragment(const std::string& fragment);  // without '#'; replaces the current history entry
bool take_hashchange();                            // true once after each hashchange event
void publish_hook(const std::string& json_text);   // window.__moe, and a `moe-update` event on window
void copy_to_clipboard(const std::string& text);   // navigator.clipboard, else a hidden textarea + execCommand
void download(const std::string& filename, const std::string& mime, const std::string& data);
void open_file_picker();                           // <input type=file accept=.json>; the text arrives as opened_file
bool take_user_text(UserText& out);                // the next dropped / opened / pasted text, if any
bool take_paste_for_widget(std::string& out);      // a paste event's text not yet given to a text field
std::string pasted_text();                         // the last paste event's text (ImGui's clipboard getter)
void take_wheel(float& dx, float& dy);             // wheel since the last call, in steps (DOM direction: +y = down)
double now_ms();                                   // performance.now(): ms since navigation started
void page_ready();                                 // hides the loading message of shell.html

}  // namespace web
