// app_state.cpp — the page's logic outside of drawing: fragment in, edits, recompute, the test hook.
#include "app_state.h"

#include <utility>

namespace web {

void load_fragment(AppState& st, std::string_view fragment) {
    moe::ParseResult r = moe::decode_fragment(fragment, *st.catalog);
    st.notice.clear();
    st.notice_details.clear();
    if (!r.ok()) {
        st.notice = "The scenario in this link could not be read; showing the defaults instead.";
        for (const moe::Issue& i : r.errors) st.notice_details.push_back(i.text());
        moe::ParseResult defaults = moe::decode_fragment("", *st.catalog);
        st.scenario = std::move(defaults.scenario);
    } else {
        st.scenario = std::move(r.scenario);
    }
    st.edit_errors.clear();
    st.dirty = true;
    st.fragment_dirty = false;  // keep the user's link as it is until they edit
}

bool edit_field(AppState& st, std::string_view path, const nlohmann::json& value) {
    moe::Issues errs;
    moe::Scenario next = st.scenario;
    if (!moe::set_path(next, path, value, *st.catalog, errs)) {
        st.edit_errors = std::move(errs);
        return false;
    }
    st.scenario = std::move(next);
    st.edit_errors.clear();
    st.dirty = true;
    st.fragment_dirty = true;
    return true;
}

void recompute(AppState& st) {
    st.estimate = moe::estimate(st.scenario, *st.tables);
    st.dirty = false;
    st.publish_pending = true;
    ++st.recompute_count;
}

std::string hook_json(const AppState& st) {
    nlohmann::json j;
    j["seq"] = st.publish_seq;
    j["recomputes"] = st.recompute_count;
    j["scenario"] = moe::scenario_to_json(st.scenario, true);
    j["results"] = moe::estimate_to_flat_json(st.estimate);
    nlohmann::json ui = nlohmann::json::object();
    for (const auto& [name, r] : st.ui) ui[name] = {{"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}};
    j["ui"] = std::move(ui);
    j["fragment"] = moe::encode_fragment(st.scenario);
    j["notice"] = st.notice;
    j["notice_details"] = st.notice_details;
    nlohmann::json errors = nlohmann::json::array();
    for (const moe::Issue& i : st.estimate.errors) errors.push_back(i.text());
    j["errors"] = std::move(errors);
    j["warnings"] = st.estimate.warnings;
    j["dpr"] = st.dpr;
    // Replace invalid UTF-8 (a hostile fragment's bytes may reach an error message) instead of failing.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace web
