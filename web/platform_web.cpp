// platform_web.cpp — all browser glue of the page (URL fragment, hashchange, test hook, clipboard, download, file
// drop / open / paste, display metrics). Nothing here builds DOM from user text: strings go through JSON.parse,
// history.replaceState, the clipboard API, a Blob or a detached textarea's value, never through innerHTML.
#include "platform.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#include <emscripten/html5.h>

#include <cstdlib>

// clang-format off
EM_JS(void, moe_js_install_listeners, (), {
    Module.moeHashChanged = 0;
    Module.moeUserTexts = [];   // [{kind, name, text}] waiting for the wasm
    Module.moePaste = "";
    Module.moePasteFresh = 0;
    window.addEventListener('hashchange', function() { Module.moeHashChanged = 1; });
    var limit = 4 * 1024 * 1024;
    function readFile(file, kind) {
        if (!file) return;
        if (file.size > limit) {
            Module.moeUserTexts.push({kind: kind, name: file.name, text: 'x'.repeat(limit + 1)});
            return;
        }
        file.text().then(function(t) { Module.moeUserTexts.push({kind: kind, name: file.name, text: t}); })
            .catch(function(e) { console.warn('could not read ' + file.name + ': ' + e); });
    }
    Module.moeReadFile = readFile;
    window.addEventListener('dragover', function(e) { e.preventDefault(); if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy'; });
    window.addEventListener('drop', function(e) {
        e.preventDefault();
        var dt = e.dataTransfer;
        if (!dt) return;
        if (dt.files && dt.files.length) { readFile(dt.files[0], 0); return; }
        var t = dt.getData('text/plain');
        if (t) Module.moeUserTexts.push({kind: 0, name: "", text: t});
    });
    // Mouse wheel, normalised to ImGui's steps (Emscripten 3.1.6's GLFW passes raw DOM deltas with the wrong sign).
    Module.moeWheelX = 0;
    Module.moeWheelY = 0;
    Module.canvas.addEventListener('wheel', function(e) {
        e.preventDefault();
        var f = e.deltaMode == 1 ? 1 / 3 : e.deltaMode == 2 ? 5 : 1 / 100;
        Module.moeWheelX += e.deltaX * f;
        Module.moeWheelY += e.deltaY * f;
    }, {passive: false});
    window.addEventListener('paste', function(e) {
        var t = (e.clipboardData || window.clipboardData).getData('text');
        if (typeof t !== 'string') return;
        Module.moePaste = t;
        Module.moePasteFresh = 1;
    });
});

EM_JS(char*, moe_js_string, (int which), {
    var s = "";
    if (which == 0) s = window.location.hash || "";
    else if (which == 1) s = window.location.href.split('#')[0];
    else if (which == 2) s = Module.moePaste || "";
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    stringToUTF8(s, p, n);
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
    function fallback() {
        var ta = document.createElement('textarea');
        ta.value = t;
        ta.setAttribute('readonly', 'readonly');
        ta.style.position = 'fixed';
        ta.style.left = '-9999px';
        document.body.appendChild(ta);
        ta.select();
        try { document.execCommand('copy'); } catch (e) { console.warn('copy: ' + e); }
        ta.remove();
        var c = document.getElementById('canvas');
        if (c) c.focus();
    }
    if (navigator.clipboard && navigator.clipboard.writeText && window.isSecureContext) {
        navigator.clipboard.writeText(t).catch(fallback);
    } else {
        fallback();
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

EM_JS(void, moe_js_open_file, (), {
    var input = document.createElement('input');
    input.type = 'file';
    input.accept = '.json,application/json,text/plain';
    input.style.display = 'none';
    input.addEventListener('change', function() {
        if (input.files && input.files.length) Module.moeReadFile(input.files[0], 1);
        input.remove();
    });
    document.body.appendChild(input);
    input.click();
});

// Returns the next user text as "<kind>\n<name>\n<text>" (malloc'd), or 0.
EM_JS(char*, moe_js_take_user_text, (), {
    if (!Module.moeUserTexts || !Module.moeUserTexts.length) return 0;
    var u = Module.moeUserTexts.shift();
    var s = u.kind + "\n" + String(u.name).split(String.fromCharCode(10)).join(' ') + "\n" + u.text;
    var n = lengthBytesUTF8(s) + 1;
    var p = _malloc(n);
    stringToUTF8(s, p, n);
    return p;
});

EM_JS(double, moe_js_take_wheel, (int axis), {
    var v = axis ? Module.moeWheelY : Module.moeWheelX;
    if (axis) Module.moeWheelY = 0; else Module.moeWheelX = 0;
    return v;
});

EM_JS(int, moe_js_take_paste_fresh, (), {
    var v = Module.moePasteFresh | 0;
    Module.moePasteFresh = 0;
    return v;
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

namespace {
std::string take_js_string(char* p) {
    std::string s = p ? p : "";
    std::free(p);
    return s;
}
}  // namespace

void install_listeners() { moe_js_install_listeners(); }

DisplayMetrics display_metrics() {
    DisplayMetrics m;
    emscripten_get_element_css_size("#canvas", &m.css_width, &m.css_height);
    m.device_pixel_ratio = emscripten_get_device_pixel_ratio();
    if (!(m.device_pixel_ratio > 0.25 && m.device_pixel_ratio < 8)) m.device_pixel_ratio = 1;
    return m;
}

void set_canvas_size(int width, int height) { moe_js_set_canvas_size(width, height); }
std::string read_fragment() { return take_js_string(moe_js_string(0)); }
std::string page_url_without_fragment() { return take_js_string(moe_js_string(1)); }
std::string pasted_text() { return take_js_string(moe_js_string(2)); }
void write_fragment(const std::string& fragment) { moe_js_write_fragment(fragment.c_str()); }
bool take_hashchange() { return moe_js_take_hashchange() != 0; }
void publish_hook(const std::string& json_text) { moe_js_publish_hook(json_text.c_str()); }
void copy_to_clipboard(const std::string& text) { moe_js_copy(text.c_str()); }
void download(const std::string& filename, const std::string& mime, const std::string& data) {
    moe_js_download(filename.c_str(), mime.c_str(), data.data(), static_cast<int>(data.size()));
}
void open_file_picker() { moe_js_open_file(); }

bool take_user_text(UserText& out) {
    char* p = moe_js_take_user_text();
    if (!p) return false;
    const std::string s = take_js_string(p);
    const std::size_t a = s.find('\n');
    const std::size_t b = a == std::string::npos ? a : s.find('\n', a + 1);
    if (b == std::string::npos) return false;
    out.kind = s[0] == '1' ? UserText::opened_file : UserText::dropped_file;
    out.name = s.substr(a + 1, b - a - 1);
    out.text = s.substr(b + 1);
    return true;
}

bool take_paste_for_widget(std::string& out) {
    if (!moe_js_take_paste_fresh()) return false;
    out = pasted_text();
    return true;
}

void take_wheel(float& dx, float& dy) {
    dx = static_cast<float>(moe_js_take_wheel(0));
    dy = static_cast<float>(moe_js_take_wheel(1));
}

double now_ms() { return emscripten_get_now(); }
void page_ready() { moe_js_page_ready(); }

}  // namespace web

#else  // native no-ops: the same panels can be driven by a desktop or headless runner

#include <chrono>

namespace web {
void install_listeners() {}
DisplayMetrics display_metrics() { return {}; }
void set_canvas_size(int, int) {}
std::string read_fragment() { return {}; }
std::string page_url_without_fragment() { return {}; }
std::string pasted_text() { return {}; }
void write_fragment(const std::string&) {}
bool take_hashchange() { return false; }
void publish_hook(const std::string&) {}
void copy_to_clipboard(const std::string&) {}
void download(const std::string&, const std::string&, const std::string&) {}
void open_file_picker() {}
bool take_user_text(UserText&) { return false; }
bool take_paste_for_widget(std::string&) { return false; }
void take_wheel(float& dx, float& dy) { dx = dy = 0; }
double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
void page_ready() {}
}  // namespace web

#endif
