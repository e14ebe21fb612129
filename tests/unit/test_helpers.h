// test_helpers.h — shared helpers of the unit tests.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/base/embedded.h"
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

// (a temporary Estimate would leave the pointer dangling: keep the estimate in a variable)
const moe::OpRecord* find_op(const moe::Estimate&& e, const char* name, moe::Phase phase, const char* group_prefix = "MoE") = delete;
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
// A GPU preset's spec (the test fails naming the id when there is none).
inline const moe::GpuSpec& preset_gpu(const char* id) {
    const moe::GpuSpec* g = moe::builtin_catalog().gpu(id);
    REQUIRE_MESSAGE(g != nullptr, id);
    return *g;
}
// Whether one of the estimate's warnings contains `part`.
inline bool has_warning(const moe::Estimate& e, const std::string& part) {
    for (const std::string& w : e.warnings)
        if (w.find(part) != std::string::npos) return true;
    return false;
}
// A file compiled into the binary (presets/..., as core/base/embedded.h lists them) parsed as JSON.
inline nlohmann::json embedded_json(const char* path) {
    for (const moe::EmbeddedFile& f : moe::embedded_files())
        if (std::string(f.path) == path)
            return nlohmann::json::parse(std::string(f.data, f.size));
    FAIL("missing embedded file ", path);
    return {};
}
// Every issue's text, a line each (for INFO).
inline std::string messages(const moe::Issues& errs) {
    std::string s;
    for (const moe::Issue& e : errs) s += e.text() + "\n";
    return s;
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

// Seed 003's "7B MoE model with 8 experts, 2048 -> 8192 FFN", top-2: a Mixtral-shaped config of 16 layers
// (6.7B parameters), FP16 attention and 4-bit packed experts with group scales (int4 here: dequantised in the GEMM,
// as Marlin's FP4 kernels do), batch 32 at a 512-token context on the M2 Max preset.
inline double seed003_tok_s(int experts, const char* runtime, moe::Estimate* out = nullptr) {
    nlohmann::json model = {{"architectures", {"MixtralForCausalLM"}}, {"model_type", "mixtral"}, {"hidden_size", 2048},
                            {"intermediate_size", 8192}, {"num_hidden_layers", 16}, {"num_attention_heads", 16},
                            {"num_key_value_heads", 8}, {"head_dim", 128}, {"num_local_experts", experts},
                            {"num_experts_per_tok", 2}, {"vocab_size", 32000}, {"torch_dtype", "float16"}};
    nlohmann::json s = {{"model", model}, {"hardware", "m2-max"},
                        {"workload", {{"phase", "decode"}, {"batch", 32}, {"context_len", 512}}},
                        {"precision", {{"weights", "fp16"}, {"experts", "int4"}}},
                        {"runtime", nlohmann::json::parse(runtime)}};
    moe::Estimate e = run(s.dump());
    if (out) *out = e;
    return e.decode.tokens_per_s_per_user;
}

// A held-out comparison of a GPU's own fallback value against the calibration's (test_gpu_eff*.cpp): the value is
// derived on one half of the GPU's table and its median |error| taken on the other, both ways. Pins the point counts and
// the four medians (within 1%) that `w` records (fields points_b, points_a, own_b, global_b, own_a, global_a).
template <class Want>
inline void check_held_out(const Want& w, int nb, int na, double own_b, double global_b, double own_a, double global_a) {
    CHECK(nb == w.points_b);
    CHECK(na == w.points_a);
    CHECK(own_b == doctest::Approx(w.own_b).epsilon(0.01).scale(0));
    CHECK(global_b == doctest::Approx(w.global_b).epsilon(0.01).scale(0));
    CHECK(own_a == doctest::Approx(w.own_a).epsilon(0.01).scale(0));
    CHECK(global_a == doctest::Approx(w.global_a).epsilon(0.01).scale(0));
}

}  // namespace moe_test
