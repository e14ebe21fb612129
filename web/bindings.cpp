// bindings.cpp — the core as a small C API for JavaScript (node/moe-core.js, `createCore`): fast wasm tests
// under node without a browser, and any page script that wants a number without ImGui.
//
//   const core = await createCore();
//   const eval_ = core.cwrap('moe_eval', 'string', ['string']);
//   JSON.parse(eval_('{"model":"deepseek-v3","hardware":"h800"}'))   // = moe-roofline eval --format json
//
// Every function returns a JSON (or fragment) string owned by the module, valid until the next call.
#include <emscripten.h>

#include <string>

#include "core/moe.h"

namespace {

std::string g_out;

const char* out(std::string s) {
    g_out = std::move(s);
    return g_out.c_str();
}

nlohmann::json issues_json(const moe::Issues& issues) {
    nlohmann::json a = nlohmann::json::array();
    for (const moe::Issue& i : issues) a.push_back({{"path", i.path}, {"message", i.message}, {"text", i.text()}});
    return a;
}

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// A scenario that does not parse gives {"status":"error","errors":[...]} (the estimate is not run).
bool parse(const char* text, moe::ParseResult& r, std::string& error_json) {
    r = moe::parse_scenario(text ? text : "", moe::builtin_catalog());
    if (r.ok()) return true;
    error_json = dump({{"status", "error"}, {"errors", issues_json(r.errors)}});
    return false;
}

}  // namespace

extern "C" {

// Scenario JSON -> the estimate as `moe-roofline eval --format json` prints it (nested by the dots).
EMSCRIPTEN_KEEPALIVE const char* moe_eval(const char* scenario_json) {
    moe::ParseResult r;
    std::string err;
    if (!parse(scenario_json, r, err)) return out(err);
    return out(dump(moe::estimate_to_json(moe::evaluate(r.scenario, moe::builtin_tables()))));
}

// Scenario JSON -> {"prefill.step_ms": ..., ...}: the page's window.__moe.results.
EMSCRIPTEN_KEEPALIVE const char* moe_eval_flat(const char* scenario_json) {
    moe::ParseResult r;
    std::string err;
    if (!parse(scenario_json, r, err)) return out(err);
    return out(dump(moe::estimate_to_flat_json(moe::evaluate(r.scenario, moe::builtin_tables()))));
}

// URL fragment ("#s=...", "s=..." or "") -> {"ok": bool, "errors": [...], "scenario": compact JSON}.
EMSCRIPTEN_KEEPALIVE const char* moe_url_decode(const char* fragment) {
    moe::ParseResult r = moe::decode_fragment(fragment ? fragment : "", moe::builtin_catalog());
    return out(dump({{"ok", r.ok()}, {"errors", issues_json(r.errors)},
                     {"scenario", moe::scenario_to_json(r.scenario, true)}}));
}

// Scenario JSON -> its fragment "s=..." (no '#'), or "" when the scenario does not parse.
EMSCRIPTEN_KEEPALIVE const char* moe_url_encode(const char* scenario_json) {
    moe::ParseResult r;
    std::string err;
    if (!parse(scenario_json, r, err)) return out("");
    return out(moe::encode_fragment(r.scenario));
}

// Scenario JSON -> the compact scenario JSON (only what differs from the defaults), or the error object.
EMSCRIPTEN_KEEPALIVE const char* moe_scenario_compact(const char* scenario_json) {
    moe::ParseResult r;
    std::string err;
    if (!parse(scenario_json, r, err)) return out(err);
    return out(dump(moe::scenario_to_json(r.scenario, true)));
}

// The preset ids: {"models": [...], "hardware": [...], "scenarios": [...]}.
EMSCRIPTEN_KEEPALIVE const char* moe_presets() {
    const moe::Catalog& cat = moe::builtin_catalog();
    auto ids = [](const std::vector<moe::CatalogEntry>& v) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& e : v) a.push_back(e.id);
        return a;
    };
    return out(dump({{"models", ids(cat.models())}, {"hardware", ids(cat.hardware())},
                     {"scenarios", ids(cat.scenarios())}}));
}

}  // extern "C"
