// Scenario JSON, field table, validation messages, the URL codec.
#include "test_helpers.h"

namespace {
moe::ParseResult parse(const std::string& s) { return moe::parse_scenario(s, moe::builtin_catalog()); }
std::string first_error(const std::string& s) {
    moe::ParseResult r = parse(s);
    return r.errors.empty() ? "" : r.errors[0].text();
}
}  // namespace

TEST_CASE("a scenario may name only what differs") {
    moe::ParseResult r = parse(R"({"model":"qwen3-30b-a3b","hardware":"h20"})");
    REQUIRE(r.ok());
    CHECK(r.scenario.parallel.tp == 1);
    CHECK(r.scenario.gpu.dense_tflops_bf16 == 148);
    CHECK(moe::scenario_to_json(r.scenario, true) == nlohmann::json{{"hardware", "h20"}});
    CHECK(parse("{}").ok());
}

TEST_CASE("errors name the field") {
    CHECK(first_error(R"({"model":"deepseek-v3","parallel":{"dp":48,"ep":48}})") ==
          "parallel.ep: 48 does not divide 256 routed experts + 0 redundant");
    CHECK(first_error(R"({"parallel":{"ep":3}})").rfind("parallel.ep: 3 does not divide tp*dp", 0) == 0);
    CHECK(first_error(R"({"model":"qwen3-8b","parallel":{"tp":3}})") == "parallel.tp: 3 does not divide 32 attention heads");
    CHECK(first_error(R"({"workload":{"batch":0}})").rfind("workload.batch: 0 is out of range", 0) == 0);
    CHECK(first_error(R"({"workload":{"batch":1e12}})").rfind("workload.batch:", 0) == 0);
    CHECK(first_error(R"({"workload":{"batch":-3}})").rfind("workload.batch:", 0) == 0);
    CHECK(first_error(R"({"workload":{"batch":"many"}})").rfind("workload.batch: must be a number", 0) == 0);
    CHECK(first_error(R"({"workload":{"batchsize":8}})") == "workload.batchsize: unknown key");
    CHECK(first_error(R"({"wrokload":{}})") == "wrokload: unknown key");
    CHECK(first_error(R"({"precision":{"kv_cache":"fp7"}})").rfind("precision.kv_cache: unknown dtype", 0) == 0);
    CHECK(first_error(R"({"precision":{"kv_cache":"mxfp4"}})").rfind("precision.kv_cache: mxfp4 is not a KV-cache format", 0) == 0);
    CHECK(first_error(R"({"model":"gpt-5"})").rfind("model: unknown preset 'gpt-5'", 0) == 0);
    CHECK(first_error(R"({"runtime":{"a2a_backend":"carrier-pigeon"}})").rfind("runtime.a2a_backend: must be one of", 0) == 0);
    CHECK(first_error(R"({"model":"qwen3-8b","parallel":{"ep":2,"dp":2}})") == "parallel.ep: the model has no routed experts (use tp/dp)");
    CHECK(first_error(R"({"model":{"num_hidden_layers":2}})").rfind("model.hidden_size: is required", 0) == 0);
    CHECK(first_error("not json") == "not valid JSON: line 1, column 2: syntax error while parsing value - invalid literal; last read: 'no'");
    CHECK(first_error(std::string(5000, '[')) != "");
}

TEST_CASE("set_path: numbers, strings, presets and inline objects") {
    moe::Scenario s = moe_test::scenario("{}");
    moe::Issues errs;
    CHECK(moe::set_path(s, "workload.batch", 256, moe::builtin_catalog(), errs));
    CHECK(s.workload.batch == 256);
    CHECK(moe::set_path(s, "model", "deepseek-v3", moe::builtin_catalog(), errs));
    CHECK(s.model.num_experts == 256);
    CHECK(moe::set_path(s, "runtime.a2a_backend", "pplx", moe::builtin_catalog(), errs));
    CHECK(s.runtime.a2a_backend == moe::A2ABackend::pplx);
    CHECK(moe::set_path(s, "hardware", nlohmann::json{{"base", "h100-sxm"}, {"hbm_capacity_GiB", 96}}, moe::builtin_catalog(), errs));
    CHECK(s.gpu.hbm_capacity_GiB == 96);
    CHECK(s.gpu.dense_tflops_bf16 == doctest::Approx(989.4));
    CHECK(errs.empty());
    CHECK(!moe::set_path(s, "workload.nope", 1, moe::builtin_catalog(), errs));
    CHECK(errs.back().text() == "workload.nope: unknown field");
    CHECK(!moe::set_path(s, "parallel.tp", 1.5, moe::builtin_catalog(), errs));
    CHECK(!moe::set_path_number(s, *moe::find_field("workload.batch"), std::nan(""), errs));
    CHECK(s.workload.batch == 256);  // unchanged by the rejected sets
}

TEST_CASE("every field has help text, a unit or none, and round-trips through JSON") {
    for (const moe::FieldDesc& f : moe::scenario_fields()) {
        CHECK_MESSAGE(std::string(f.help).size() > 10, f.path);
        if (f.type == moe::FieldType::choice) CHECK(f.choices != nullptr);
    }
    moe::Scenario s = moe_test::scenario(R"({"model":"kimi-k2","hardware":"h200","parallel":{"dp":16,"ep":16},
        "workload":{"phase":"decode","batch":96,"context_len":6000},"precision":{"kv_cache":"fp8"},
        "runtime":{"two_batch_overlap":true,"mtp_draft_tokens":0},"routing":{"imbalance":1.2}})");
    nlohmann::json full = moe::scenario_to_json(s, false), compact = moe::scenario_to_json(s, true);
    moe::Scenario a = moe_test::scenario(full.dump()), b = moe_test::scenario(compact.dump());
    CHECK(moe::scenario_to_json(a, true) == compact);
    CHECK(moe::scenario_to_json(b, false) == full);
}

TEST_CASE("URL fragment codec: round trip, hostile input shows the defaults with a message") {
    moe::Scenario s = moe_test::scenario(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":32,"ep":32},"workload":{"batch":100}})");
    std::string frag = moe::encode_fragment(s);
    CHECK(frag.rfind("s=", 0) == 0);
    moe::ParseResult r = moe::decode_fragment("#" + frag, moe::builtin_catalog());
    REQUIRE(r.ok());
    CHECK(moe::scenario_to_json(r.scenario, true) == moe::scenario_to_json(s, true));
    CHECK(moe::scenario_url(s, "http://x/#old").rfind("http://x/#s=", 0) == 0);
    const std::string defaults = moe::scenario_to_json(moe_test::scenario("{}"), false).dump();
    const std::string hostile[] = {
        "#s=<script>alert(1)</script>",
        "#s=" + std::string(1 << 20, 'A'),
        "#s=" + frag.substr(2, frag.size() / 2),            // truncated
        "#s=" + moe::base64url_encode(R"({"workload":{"batch":"x"}})"),  // wrong type
        "#s=" + moe::base64url_encode(R"([1,2,3])"),
        "#hello",
        "#s=%%%",
    };
    for (const std::string& h : hostile) {
        moe::ParseResult x = moe::decode_fragment(h, moe::builtin_catalog());
        INFO(h.substr(0, 60));
        CHECK(!x.ok());
        CHECK(x.errors[0].path == "link");
        CHECK(moe::scenario_to_json(x.scenario, false).dump() == defaults);
    }
    CHECK(moe::decode_fragment("", moe::builtin_catalog()).ok());
    std::string out;
    CHECK(moe::base64url_decode(moe::base64url_encode(std::string("\0\xff\x10z", 4)), out));
    CHECK(out == std::string("\0\xff\x10z", 4));
}

TEST_CASE("estimate() of bad scenarios reports errors, never NaN") {
    moe::Scenario s = moe_test::scenario(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":8,"ep":8}})");
    s.parallel.ep = 3;  // bypassing set_path: estimate() validates again
    moe::Estimate e = moe::estimate(s, moe::builtin_tables());
    CHECK(!e.ok);
    REQUIRE(!e.errors.empty());
    CHECK(e.errors[0].path == "parallel.ep");
    nlohmann::json j = moe::estimate_to_json(e);
    CHECK(j["status"] == "error");
    CHECK(j["decode"]["tpot_ms"].is_null());
    moe::Scenario n = moe_test::scenario(R"({"model":"qwen3-30b-a3b","hardware":"h20","parallel":{"dp":2,"ep":2},"runtime":{"a2a_backend":"none"}})");
    moe::Estimate ne = moe::estimate(n, moe::builtin_tables());
    CHECK(!ne.ok);
    CHECK(ne.errors[0].path == "runtime.a2a_backend");
}

TEST_CASE("seed 002 §9: every configuration item it lists is a scenario or hardware field") {
    // Seed 002 §9 "应做成配置项": tp, ep, pp, dp, cp; batch_size, max_seq_len, chunk_size; kv_quant_bits,
    // expert_dtype, attn_dtype; block_size (PagedAttention); prefix_cache_hit_ratio; hardware: hbm_capacity,
    // hbm_bandwidth, flops_fp8, flops_fp4, nvlink_bw, pcie_bw. Each, by the field that carries it here:
    auto has_field = [](const char* path) {
        for (const moe::FieldDesc& f : moe::scenario_fields())
            if (std::string(f.path) == path) return true;
        return false;
    };
    for (const char* p : {"parallel.tp", "parallel.ep", "parallel.pp", "parallel.dp", "parallel.cp", "workload.batch",
                          "workload.context_len", "workload.prefill_tokens", "precision.kv_cache", "precision.experts",
                          "precision.attention", "runtime.kv_block_tokens", "workload.prefix_cache_hit"})
        CHECK_MESSAGE(has_field(p), p);
    auto has_gpu_field = [](const char* key) {
        for (const moe::GpuFieldDesc& f : moe::gpu_fields())
            if (std::string(f.key) == key) return true;
        return false;
    };
    for (const char* k : {"hbm_capacity_GiB", "hbm_bandwidth_GBps", "dense_tflops_fp8", "dense_tflops_fp4",
                          "nvlink_bandwidth_GBps", "host_bandwidth_GBps"})
        CHECK_MESSAGE(has_gpu_field(k), k);
    // the block size reaches the memory: Qwen3-30B-A3B at tp 2, FP8 KV: 48 layers x 2 x (4 / 2) heads x 128 x 1 B
    // = 24,576 B a token; 8 sequences of 1,000 tokens hold 16 blocks of 64 = 1,024 slots each (of 16: 63 x 16 = 1,008)
    auto kv = [](int block) {
        return moe_test::run(R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm","parallel":{"tp":2,"ep":2},
            "workload":{"phase":"decode","batch":8,"context_len":1000},"runtime":{"kv_block_tokens":)" + std::to_string(block) +
                             R"(},"precision":{"kv_cache":"fp8"}})").memory.kv_cache_bytes;
    };
    CHECK(kv(64) == doctest::Approx(8.0 * 1024 * 24576));
    CHECK(kv(16) == doctest::Approx(8.0 * 1008 * 24576));
}
