// test_helpers.h — shared helpers of the unit tests.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/moe.h"

namespace moe_test {

inline moe::Scenario scenario(const std::string& json_text) {
    moe::ParseResult r = moe::parse_scenario(json_text, moe::builtin_catalog());
    INFO(json_text);
    for (const auto& e : r.errors) INFO(e.text());
    REQUIRE(r.ok());
    return r.scenario;
}

inline moe::Estimate run(const std::string& json_text) {
    moe::Estimate e = moe::estimate(scenario(json_text), moe::builtin_tables());
    for (const auto& err : e.errors) INFO(err.text());
    REQUIRE(e.ok);
    return e;
}

inline const moe::OpRecord* find_op(const moe::Estimate& e, const char* name, moe::Phase phase, const char* group_prefix = "MoE") {
    for (const moe::OpRecord& o : e.ops) {
        const moe::PhaseResult& p = o.phase == moe::Phase::prefill ? e.prefill : e.decode;
        if (o.phase == phase && std::string(o.name) == name &&
            p.groups[size_t(o.group)].label.starts_with(group_prefix))
            return &o;
    }
    return nullptr;
}

// A model preset's spec (the test fails naming the id when there is none).
inline const moe::ModelSpec& preset_model(const char* id) {
    const moe::ModelSpec* m = moe::builtin_catalog().model(id);
    REQUIRE_MESSAGE(m != nullptr, id);
    return *m;
}
// An HF config.json as a model spec, its issues in `errs` (cleared first).
inline moe::ModelSpec parse_config(const nlohmann::json& j, moe::Issues& errs) {
    errs.clear();
    return moe::parse_hf_config(j, "model", errs);
}

inline double rel_err(double predicted, double measured) { return std::fabs(predicted - measured) / measured; }

// Every output column of an estimate is finite or empty (never NaN/inf text).
inline void check_all_finite(const moe::Estimate& e) {
    for (const moe::Column& c : moe::output_columns()) {
        if (c.type != moe::ColumnType::number) continue;
        double v = c.number(e);
        if (!std::isnan(v)) CHECK_MESSAGE(std::isfinite(v), c.name);
    }
}

}  // namespace moe_test
