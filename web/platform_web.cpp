// platform_web.cpp — all browser glue of the page (URL fragment, hashchange, test hook, clipboard, download,
// display metrics). Nothing here builds DOM from user text: strings go through JSON.parse, history.replaceState,
// the clipboard API or a Blob, never through innerHTML.
#include "platform.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#include <emscripten/html5.h>

#include <cstdlib>

// clang-format off
EM_JS(void, moe_js_install_listeners, (), {
    Module.moeHashChanged = 0;
    window.addEventListener('hashchange', function() { Module.moeHashChanged = 1; });
});

EM_JS(char*, moe_js_read_fragment, (), {
    var h = window.location.hash || "";
    var n = lengthBytesUTF8(h) + 1;
    var p = _malloc(n);
    stringToUTF8(h, p, n);
    return p;
});

EM_JS(char*, moe_js_page_url, (), {
    var h = window.location.href.split('#')[0];
    var n = lengthBytesUTF8(h) + 1;
    var p = _malloc(n);
    stringToUTF8(h, p, n);
    return p;
});

EM_JS(void, moe_js_write_fragment, (const char* frag), {
    var h = '#' + UTF8ToString(frag);
    if (window.location.hash === h) return;
    try {
        history.replaceState(history.state, "", h);
    } catch (e) {
        // Some file:// contexts refuse replaceState; a hash assignment always works (it adds a history entry).
        window.location.hash = h;
    }
});

EM_JS(int, moe_js_take_hashchange, (), {
    var v = Module.moeHashChanged | 0;
    Module.moeHashChanged = 0;
    return v;
});

EM_JS(void, moe_js_publish_hook, (const char* json), {
    window.__moe = JSON.parse(UTF8ToString(json));
    window.dispatchEvent(new Event('moe-update'));
});

EM_JS(void, moe_js_copy, (const char* text), {
    var t = UTF8ToString(text);
    if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(t).catch(function(e) { console.warn('clipboard: ' + e); });
    }
});

EM_JS(void, moe_js_download, (const char* name, const char* mime, const char* data, int size), {
    var bytes = HEAPU8.slice(data, data + size);
    var url = URL.createObjectURL(new Blob([bytes], {type: UTF8ToString(mime)}));
    var a = document.createElement('a');
    a.href = url;
    a.download = UTF8ToString(name);
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function() { URL.revokeObjectURL(url); }, 1000);
});

// Resizes the canvas' backing store and tells Emscripten's GLFW (its resize listeners). Not glfwSetWindowSize:
// that one requests fullscreen when the size equals the screen's, which a maximised window's canvas does.
EM_JS(void, moe_js_set_canvas_size, (int w, int h), {
    Browser.setCanvasSize(w, h);
});

EM_JS(void, moe_js_page_ready, (), {
    var el = document.getElementById('status');
    if (el) el.style.display = 'none';
});
// clang-format on

namespace web {

void install_listeners() { moe_js_install_listeners(); }

DisplayMetrics display_metrics() {
    DisplayMetrics m;
    emscripten_get_element_css_size("#canvas", &m.css_width, &m.css_height);
    m.device_pixel_ratio = emscripten_get_device_pixel_ratio();
    if (!(m.device_pixel_ratio > 0.25 && m.device_pixel_ratio < 8)) m.device_pixel_ratio = 1;
    return m;
}

void set_canvas_size(int width, int height) { moe_js_set_canvas_size(width, height); }

std::string read_fragment() {
    char* p = moe_js_read_fragment();
    std::string s = p ? p : "";
    std::free(p);
    return s;
}

std::string page_url_without_fragment() {
    char* p = moe_js_page_url();
    std::string s = p ? p : "";
    std::free(p);
    return s;
}

void write_fragment(const std::string& fragment) { moe_js_write_fragment(fragment.c_str()); }
bool take_hashchange() { return moe_js_take_hashchange() != 0; }
void publish_hook(const std::string& json_text) { moe_js_publish_hook(json_text.c_str()); }
void copy_to_clipboard(const std::string& text) { moe_js_copy(text.c_str()); }
void download(const std::string& filename, const std::string& mime, const std::string& data) {
    moe_js_download(filename.c_str(), mime.c_str(), data.data(), static_cast<int>(data.size()));
}
void page_ready() { moe_js_page_ready(); }

}  // namespace web

#else  // native no-ops: the same panels can be driven by a desktop or headless runner

namespace web {
void install_listeners() {}
DisplayMetrics display_metrics() { return {}; }
void set_canvas_size(int, int) {}
std::string read_fragment() { return {}; }
std::string page_url_without_fragment() { return {}; }
void write_fragment(const std::string&) {}
bool take_hashchange() { return false; }
void publish_hook(const std::string&) {}
void copy_to_clipboard(const std::string&) {}
void download(const std::string&, const std::string&, const std::string&) {}
void page_ready() {}
}  // namespace web

#endif
