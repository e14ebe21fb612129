// Expert-parallel all-to-all on AMD Instinct GPUs (issue 29): the Infinity Fabric (xGMI) mesh, one link per peer,
// and MoRI-EP's dispatch / combine (core/step/comm.cpp, case mori), against MoRI's published EP8 table on 8 x MI355X
// (ROCm/mori docs/EP8.en.md; bench_data/README.md "MoRI-EP") and worked by hand from the link numbers
// (presets/hardware/README.md: MI355X 7 links of 153.6 GB/s bidirectional, 76.8 GB/s one way).
#include <nlohmann/json.hpp>

#include "core/base/embedded.h"

#include "test_helpers.h"

using moe::A2ABackend;
using moe::Phase;
using moe_test::find_op;
using moe_test::run;
using nlohmann::json;

namespace {
using moe_test::embedded_json;
double op_us(const moe::Estimate& e, const char* name, Phase ph) {
    const moe::OpRecord* o = find_op(e, name, ph);
    REQUIRE(o);
    return o->time_us;
}
}  // namespace

TEST_CASE("MI355X: one xGMI link per peer, 76.8 GB/s one way") {
    const moe::GpuSpec* g = moe::builtin_catalog().gpu("mi355x");
    REQUIRE(g);
    CHECK(g->xgmi_mesh());
    CHECK(g->xgmi_link_GBps() == doctest::Approx(76.8));  // 537.6 / 7
    const moe::GpuSpec* m300 = moe::builtin_catalog().gpu("mi300x");
    REQUIRE(m300);
    CHECK(m300->xgmi_link_GBps() == doctest::Approx(64.0));  // 448 / 7: MI300X's 128 GB/s bidirectional per link
    CHECK_FALSE(moe::builtin_catalog().gpu("h100-sxm")->xgmi_mesh());
}

TEST_CASE("EP8 dispatch on MI355X worked by hand: Qwen3-235B-A22B, 128 tokens per GPU") {
    // auto resolves to MoRI-EP on AMD at step level (SGLang --moe-a2a-backend mori); the serving engines' defaults stay
    // the all-gather.
    const moe::Estimate e = run(R"({"model":"qwen3-235b-a22b","hardware":"mi355x","parallel":{"dp":8,"ep":8},
        "precision":{"dispatch":"bf16"},"routing":{"imbalance":1},"workload":{"phase":"decode","batch":128}})");
    CHECK(e.decode_backend == A2ABackend::mori);
    // 128 experts, top-8, 16 per GPU: a token needs a given peer with P = 1 - (7/8)^8 = 0.656391 (the model's
    // with-replacement count); one peer's share is 128 x 0.656391 x 4096 x 2 B = 688,276 B over its own link of
    // 76.8 GB/s at MoRI's 0.632: 14.18 us, plus the 32.4 us of MoRI's 1-token dispatch = 46.58 us.
    CHECK(op_us(e, "comm.dispatch", Phase::decode) == doctest::Approx(46.58).epsilon(0.001));
    // combine: the same bytes at 0.709 of the link plus 19.4 us = 32.04 us
    CHECK(op_us(e, "comm.combine", Phase::decode) == doctest::Approx(32.04).epsilon(0.001));
    // the 537.6 GB/s aggregate a switch would give one peer would say 688,276 B / 537.6 GB/s = 1.3 us of transfer
    const moe::Estimate s = run(R"({"model":"qwen3-235b-a22b","hardware":"mi355x","parallel":{"dp":8,"ep":8},
        "serving":{"mode":"aggregated"},"workload":{"phase":"decode","batch":128}})");
    CHECK(s.decode_backend == A2ABackend::allgather);
}

TEST_CASE("MoRI-EP against its published EP8 rows on MI355X (256 experts, top-8, hidden 7168)") {
    // The benchmark routes uniformly over 256 experts (no expert groups): DeepSeek-V3's shape with n_group 1.
    json cfg = embedded_json("presets/models/deepseek-v3.json");
    cfg["n_group"] = 1;
    cfg["topk_group"] = 1;
    auto at = [&](const char* phase, int tokens) {
        json s = {{"model", cfg}, {"hardware", "mi355x"}, {"parallel", {{"dp", 8}, {"ep", 8}}},
                  {"precision", {{"dispatch", "bf16"}}}, {"routing", {{"imbalance", 1}}},
                  {"workload", {{"phase", phase}, {"batch", tokens}, {"prefill_tokens", tokens}, {"prompt_len", tokens}}}};
        return run(s.dump());
    };
    // docs/EP8.en.md, BF16 dispatch / zero-copy combine latency: 256 tokens 81.2 / 63.2 us, 4096 tokens 863.0 / 741.1
    // us. The model takes only the 524,288-token and 1-token rows (comm.cpp); these rows are within 5%.
    const moe::Estimate d256 = at("decode", 256);
    CHECK(moe_test::rel_err(op_us(d256, "comm.dispatch", Phase::decode), 81.2) < 0.05);
    CHECK(moe_test::rel_err(op_us(d256, "comm.combine", Phase::decode), 63.2) < 0.05);
    const moe::Estimate p4k = at("prefill", 4096);
    CHECK(moe_test::rel_err(op_us(p4k, "comm.dispatch", Phase::prefill), 863.0) < 0.05);
    CHECK(moe_test::rel_err(op_us(p4k, "comm.combine", Phase::prefill), 741.1) < 0.05);
}

TEST_CASE("An EP4 group on an xGMI mesh has 3 links, not the GPU's 7") {
    // DeepEP low-latency named on MI355X (its formula, the link it sees): EP4 over 4 GPUs of the node reaches its 3
    // peers over 3 x 76.8 GB/s; at the same bytes per GPU EP8 has 7 links: the EP4 transfer part is 7/3 as long.
    auto dispatch_us = [](int ep) {
        const std::string s = R"({"model":"qwen3-235b-a22b","hardware":"mi355x","parallel":{"dp":)" + std::to_string(ep) +
                              R"(,"ep":)" + std::to_string(ep) +
                              R"(},"runtime":{"a2a_backend":"deepep_low_latency"},"routing":{"imbalance":1},"workload":{"phase":"decode","batch":64}})";
        return op_us(run(s), "comm.dispatch", Phase::decode);
    };
    const double lat = moe::builtin_tables().calibration.ll_latency_us;
    CHECK((dispatch_us(4) - lat) / (dispatch_us(8) - lat) == doctest::Approx(7.0 / 3.0).epsilon(0.001));
}

TEST_CASE("mori is refused off AMD, naming the field") {
    const moe::ParseResult r = moe::parse_scenario(
        R"({"model":"qwen3-235b-a22b","hardware":"h100-sxm","parallel":{"dp":8,"ep":8},"runtime":{"a2a_backend":"mori"}})",
        moe::builtin_catalog());
    REQUIRE_FALSE(r.ok());
    bool named = false;
    for (const moe::Issue& i : r.errors) named = named || i.path == "runtime.a2a_backend";
    CHECK(named);
}
