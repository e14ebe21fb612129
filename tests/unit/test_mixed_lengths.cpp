// Seed 000 §8.1 through the scenario: workload.prompt_lens, workload.context_lens and workload.prefill_bucket_lens
// reach the mixed step (core/step/mixed.cpp) from estimate(), the CLI and the page's link.
#include <string>
#include <vector>

#include "core/plan/plan.h"
#include "tests/unit/test_helpers.h"

namespace {

const char* kM2 = R"("model":"qwen3-30b-a3b","hardware":"m2-max")";

double attention_ms(const moe::Estimate& e, moe::Phase ph) {
    double us = 0;
    for (const moe::OpRecord& o : e.ops)
        if (o.phase == ph && (std::string(o.name) == "attn.core" || std::string(o.name) == "attn.indexer"))
            us += o.time_us * o.count;
    return us / 1000.0;
}

moe::Issues parse_errors(const std::string& text) { return moe::parse_scenario(text, moe::builtin_catalog()).errors; }

}  // namespace

TEST_CASE("workload.prompt_lens (seed 000 §8.1): estimate() prices the prefill step of mixed prompts, by hand on the M2 Max") {
    // Qwen3-30B-A3B BF16 on the m2-max preset (no tables: every record analytical, so the attention is worked by
    // hand as in test_seed_kernels.cpp "mixed lengths ... by hand on the M2 Max"): a prompt of L tokens costs
    // 8,192 L^2 FLOP a layer at 13.6 TFLOPS x attn_prefill_compute_eff 0.5066 (presets/calibration.json), 48 layers.
    const moe::Tables& t = moe::builtin_tables();
    auto attn_ms = [&](double L) { return 48 * 8192.0 * L * L / (13.6e12 * t.calibration.attn_prefill_compute_eff) * 1e3; };
    const moe::Estimate e = moe_test::run(std::string("{") + kM2 + R"(,"workload":{"phase":"prefill","prompt_lens":[1024,7168]}})");
    // the public entry point gives the step layer's value exactly
    const moe::Scenario plain = moe_test::scenario(std::string("{") + kM2 + "}");
    const moe::MixedStep direct = moe::prefill_step_mixed(plain, t, {1024, 7168});
    REQUIRE(direct.ok);
    CHECK(e.prefill.step_ms == doctest::Approx(direct.step_ms).epsilon(1e-12));
    // by hand: the step of two 4,096-token prompts (7,736.9 ms) with its attention 2 x attn(4,096) = 1,915.0 ms
    // replaced by attn(1,024) + attn(7,168) = 2,992.2 ms: 8,814.1 ms
    const moe::Estimate mean = moe_test::run(std::string("{") + kM2 + R"(,"workload":{"phase":"prefill","prompt_len":4096,"prefill_tokens":8192}})");
    CHECK(e.prefill.step_ms == doctest::Approx(mean.prefill.step_ms - 2 * attn_ms(4096) + attn_ms(1024) + attn_ms(7168)).epsilon(1e-9));
    CHECK(e.prefill.step_ms == doctest::Approx(8814.1).epsilon(1e-4));
    // the operator records carry the requests' own attention, the other records the mean's step
    CHECK(attention_ms(e, moe::Phase::prefill) == doctest::Approx(attn_ms(1024) + attn_ms(7168)).epsilon(1e-9));
    CHECK(attention_ms(e, moe::Phase::prefill) == doctest::Approx(2992.2).epsilon(1e-4));
    CHECK(e.prefill.compute_ms - mean.prefill.compute_ms == doctest::Approx(2992.2 - 1915.0).epsilon(1e-3));
    // one forward holds both prompts: TTFT is the step, 8,192 prompt tokens per step per GPU
    CHECK(e.prefill.ttft_ms == doctest::Approx(e.prefill.step_ms).epsilon(1e-12));
    CHECK(e.prefill.tokens_per_s_per_gpu == doctest::Approx(8192 / (e.prefill.step_ms / 1000)).epsilon(1e-12));
    // the layer group's per-layer time follows the records (48 layers)
    double groups_ms = 0;
    for (const moe::LayerGroup& g : e.prefill.groups) groups_ms += g.count * g.time_us / 1000;
    CHECK(groups_ms + e.prefill.overhead_ms == doctest::Approx(e.prefill.step_ms).epsilon(1e-9));
    CHECK(e.prefill.share_analytical == doctest::Approx(1.0));
    // equal prompts are the plain estimate at their length
    const moe::Estimate same = moe_test::run(std::string("{") + kM2 + R"(,"workload":{"phase":"prefill","prompt_lens":[4096,4096]}})");
    CHECK(same.prefill.step_ms == doctest::Approx(mean.prefill.step_ms).epsilon(1e-12));
}

TEST_CASE("workload.prefill_bucket_lens (seed 000 §8.1): bucketed prompts through estimate(), by hand on the M2 Max") {
    // Prompts of 1,000 and 3,000 tokens in buckets 1,024 / 2,048 / 4,096 are padded to 1,024 and 4,096: attention
    // 48 x 8,192 x (1,024^2 + 4,096^2) FLOP at 13.6 TFLOPS x 0.5066 = 1,017.4 ms (test_seed_kernels.cpp "prefill
    // buckets ... by hand"), against 570.7 ms unpadded; the forward computes 5,120 tokens and serves 4,000.
    const moe::Tables& t = moe::builtin_tables();
    const moe::Estimate e = moe_test::run(std::string("{") + kM2 +
                                          R"(,"workload":{"phase":"prefill","prompt_lens":[1000,3000],"prefill_bucket_lens":[1024,2048,4096]}})");
    const moe::MixedStep direct = moe::prefill_step_mixed(moe_test::scenario(std::string("{") + kM2 + "}"), t, {1000, 3000}, {1024, 2048, 4096});
    REQUIRE(direct.ok);
    CHECK(e.prefill.step_ms == doctest::Approx(direct.step_ms).epsilon(1e-12));
    CHECK(attention_ms(e, moe::Phase::prefill) == doctest::Approx(1017.4).epsilon(1e-4));
    CHECK(e.prefill.tokens_per_s_per_gpu == doctest::Approx(4000 / (e.prefill.step_ms / 1000)).epsilon(1e-12));
    const moe::Estimate unpadded = moe_test::run(std::string("{") + kM2 + R"(,"workload":{"phase":"prefill","prompt_lens":[1000,3000]}})");
    CHECK(attention_ms(unpadded, moe::Phase::prefill) == doctest::Approx(570.7).epsilon(1e-3));
    CHECK(e.prefill.step_ms > unpadded.prefill.step_ms);
}

TEST_CASE("workload.context_lens (seed 000 §8.1): the decode step of mixed contexts through estimate(), both phases at once") {
    // Decode contexts 1,024 and 7,168: the attention core reads (1,024 + 7,168) x 2,048 B of K and V plus
    // 2 x 16,384 B of queries and outputs a layer, 16,809,984 B at 400 GB/s x attn_decode_bw_eff 0.75, 48 layers:
    // 2.6896 ms, the same as two sequences at 4,096 (linear in the context; test_seed_kernels.cpp "by hand").
    const moe::Tables& t = moe::builtin_tables();
    const moe::Scenario plain = moe_test::scenario(std::string("{") + kM2 + "}");
    const moe::Estimate e = moe_test::run(std::string("{") + kM2 + R"(,"workload":{"prompt_lens":[1024,7168],"context_lens":[1024,7168]}})");
    const moe::MixedStep d = moe::decode_step_mixed(plain, t, {1024, 7168});
    const moe::MixedStep p = moe::prefill_step_mixed(plain, t, {1024, 7168});
    REQUIRE(d.ok);
    REQUIRE(p.ok);
    CHECK(e.decode.step_ms == doctest::Approx(d.step_ms).epsilon(1e-12));
    CHECK(e.prefill.step_ms == doctest::Approx(p.step_ms).epsilon(1e-12));  // the prefill-only step's, with decode beside it
    CHECK(attention_ms(e, moe::Phase::decode) == doctest::Approx(48 * 16809984.0 / (400e9 * 0.75) * 1e3).epsilon(1e-6));
    const moe::Estimate mean = moe_test::run(std::string("{") + kM2 + R"(,"workload":{"phase":"decode","batch":2,"context_len":4096}})");
    CHECK(e.decode.step_ms == doctest::Approx(mean.decode.step_ms).epsilon(1e-9));
    CHECK(e.decode.tokens_per_s_per_gpu == doctest::Approx(2 / (e.decode.step_ms / 1000)).epsilon(1e-12));
    // the KV cache holds the batch of 2 at the mean context, 4,096: the contexts' sum
    CHECK(e.memory.kv_cache_bytes == doctest::Approx(mean.memory.kv_cache_bytes).epsilon(1e-12));
    // prompts alone leave the decode phase as the scenario gives it (batch 64 at prompt_len + output_len / 2)
    const moe::Estimate prompts_only = moe_test::run(std::string("{") + kM2 + R"(,"workload":{"prompt_lens":[1024,7168]}})");
    const moe::Estimate defaults = moe_test::run(std::string("{") + kM2 + "}");
    CHECK(prompts_only.decode.step_ms == doctest::Approx(defaults.decode.step_ms).epsilon(1e-12));
    CHECK(prompts_only.prefill.step_ms == doctest::Approx(p.step_ms).epsilon(1e-12));
}

TEST_CASE("workload lengths: bad lists are errors naming the entry, never a crash or NaN") {
    const std::string w = std::string("{") + kM2 + R"(,"workload":)";
    auto first = [&](const std::string& workload) {
        const moe::Issues errs = parse_errors(w + workload + "}");
        REQUIRE_FALSE(errs.empty());
        return errs[0].text();
    };
    CHECK(first(R"({"prompt_lens":[1024,7168,0]})") == "workload.prompt_lens[2]: 0 is not a positive token count");
    CHECK(first(R"({"context_lens":[-5]})") == "workload.context_lens[0]: -5 is not a positive token count");
    CHECK(first(R"({"prompt_lens":[1024.5]})") == "workload.prompt_lens[0]: 1024.5 is not a whole number of tokens");
    CHECK(first(R"({"prompt_lens":[1e9]})") == "workload.prompt_lens[0]: 1000000000 tokens is more than the 100000000 this field takes");
    CHECK(first(R"({"prompt_lens":["x"]})") == "workload.prompt_lens[0]: must be a token count, got \"x\"");
    CHECK(first(R"({"prompt_lens":1024})").rfind("workload.prompt_lens: must be a list of token counts", 0) == 0);
    CHECK(first(R"({"prompt_lens":[1000],"prefill_bucket_lens":[2048,1024]})") ==
          "workload.prefill_bucket_lens[1]: 1024 is not above the bucket before it (2048): list the buckets in ascending order");
    CHECK(first(R"({"prompt_lens":[1000,5000],"prefill_bucket_lens":[1024,4096]})") ==
          "workload.prompt_lens[1]: 5000 tokens is longer than the largest bucket, 4096 (workload.prefill_bucket_lens)");
    CHECK(first(R"({"prefill_bucket_lens":[1024]})") == "workload.prefill_bucket_lens: pads the prompts of workload.prompt_lens: give those too");
    CHECK(first(R"({"prompt_lens":[6000000,6000000]})").rfind("workload.prompt_lens: the prompts come to 12000000 tokens", 0) == 0);
    std::string long_list = "[";
    for (int i = 0; i <= moe::kMaxLengthsListed; ++i) long_list += (i ? ",1" : "1");
    CHECK(first(R"({"context_lens":)" + long_list + "]}") ==
          "workload.context_lens: lists 4097 entries, more than the 4096 requests it takes (one estimate per distinct length)");
    CHECK(parse_errors(std::string("{") + kM2 + R"(,"serving":{"mode":"aggregated"},"workload":{"prompt_lens":[100]}})")[0].path ==
          "workload.prompt_lens");
    // at most kMaxBuckets (64) buckets
    std::string buckets = "[";
    for (int i = 1; i <= moe::kMaxBuckets + 1; ++i) buckets += (i > 1 ? "," : "") + std::to_string(64 * i);
    CHECK(first(R"({"prompt_lens":[100],"prefill_bucket_lens":)" + buckets + "]}") ==
          "workload.prefill_bucket_lens: lists 65 entries, more than the 64 buckets it takes");
    CHECK(parse_errors(w + R"({"prompt_lens":[100],"prefill_bucket_lens":)" + buckets.substr(0, buckets.rfind(',')) + "]}}").empty());
    // the planner chooses the decode batch itself: a list of contexts is refused, naming the field
    moe::PlanRequest req;
    req.gpus = 1;
    moe::Issues plan_errs;
    moe::Scenario with_contexts = moe_test::scenario(std::string("{") + kM2 + R"(,"workload":{"context_lens":[512,1024]}})");
    CHECK(moe::enumerate_plan(with_contexts, req, plan_errs).empty());
    REQUIRE_FALSE(plan_errs.empty());
    CHECK(plan_errs[0].path == "workload.context_lens");
    // [] turns a list off; the longest list parses
    CHECK(parse_errors(w + R"({"prompt_lens":[]})" + "}").empty());
    CHECK(parse_errors(w + R"({"context_lens":)" + long_list.substr(0, long_list.size() - 2) + "]}}").empty());
    // A Scenario built in code past set_path: estimate() validates again
    moe::Scenario s = moe_test::scenario(std::string("{") + kM2 + "}");
    s.workload.prompt_lens = {1000, 0};
    moe::Estimate e = moe::estimate(s, moe::builtin_tables());
    CHECK_FALSE(e.ok);
    REQUIRE_FALSE(e.errors.empty());
    CHECK(e.errors[0].text() == "workload.prompt_lens[1]: 0 is not a positive token count");
    s.workload.prompt_lens = {5000, 1000};
    s.workload.prefill_bucket_lens = {4096, 1024};  // unsorted in code: sorted for the lookup
    CHECK(moe::estimate(s, moe::builtin_tables()).errors[0].text() ==
          "workload.prompt_lens[0]: 5000 tokens is longer than the largest bucket, 4096 (workload.prefill_bucket_lens)");
}

TEST_CASE("workload lengths: set_path, the JSON and the link codec round-trip the lists") {
    const moe::Catalog& cat = moe::builtin_catalog();
    moe::Scenario s = moe_test::scenario(std::string("{") + kM2 + "}");
    moe::Issues errs;
    REQUIRE(moe::set_path(s, "workload.prompt_lens", nlohmann::json::array({1000, 3000}), cat, errs));
    REQUIRE(moe::set_path(s, "workload.prefill_bucket_lens", nlohmann::json::array({1024, 2048, 4096}), cat, errs));
    REQUIRE(moe::set_path(s, "workload.context_lens", nlohmann::json::array({512, 9000, 2000}), cat, errs));
    CHECK(moe::get_path(s, "workload.context_lens") == nlohmann::json::array({512, 9000, 2000}));
    const nlohmann::json compact = moe::scenario_to_json(s, true);
    CHECK(compact["workload"]["prompt_lens"] == nlohmann::json::array({1000, 3000}));
    CHECK(moe::scenario_to_json(moe_test::scenario("{}"), true).dump().find("lens") == std::string::npos);  // [] is the default
    const moe::ParseResult back = moe::decode_fragment(moe::encode_fragment(s), cat);
    REQUIRE(back.ok());
    CHECK(back.scenario.workload.prompt_lens == std::vector<int>{1000, 3000});
    CHECK(back.scenario.workload.prefill_bucket_lens == std::vector<int>{1024, 2048, 4096});
    CHECK(back.scenario.workload.context_lens == std::vector<int>{512, 9000, 2000});
    CHECK(moe::scenario_to_json(back.scenario, false) == moe::scenario_to_json(s, false));
    const moe::Estimate a = moe::estimate(s, moe::builtin_tables()), b = moe::estimate(back.scenario, moe::builtin_tables());
    REQUIRE(a.ok);
    CHECK(a.prefill.step_ms == b.prefill.step_ms);
    CHECK(a.decode.step_ms == b.decode.step_ms);
    // a rejected set leaves the list as it was
    CHECK_FALSE(moe::set_path(s, "workload.prompt_lens", nlohmann::json::array({1, 0}), cat, errs));
    CHECK(s.workload.prompt_lens == std::vector<int>{1000, 3000});
}

TEST_CASE("workload lengths: bucket_prompts pads each prompt to the smallest bucket and holds the sum to one forward") {
    using Fault = moe::BucketedPrompts::Fault;
    // 1,000 and 3,000 tokens in buckets 4,096 / 1,024 / 2,048 (any order): 1,024 + 4,096 = 5,120 tokens computed
    // (the same prompts as "prefill buckets (seed 000 §8.1)…" in test_seed_kernels.cpp)
    moe::BucketedPrompts b = moe::bucket_prompts({1000, 3000}, {4096, 1024, 2048}, 1e8);
    CHECK(b.fault == Fault::none);
    CHECK(b.tokens == std::vector<double>{1024, 4096});
    CHECK(b.total_tokens == 5120);
    CHECK(b.largest_bucket == 4096);
    // without buckets a prompt is itself, rounded up to whole tokens
    b = moe::bucket_prompts({1000.5, 7168}, {}, 1e8);
    CHECK(b.fault == Fault::none);
    CHECK(b.tokens == std::vector<double>{1001, 7168});
    CHECK(b.largest_bucket == 0);
    // the first prompt at fault stops it, by index: out of [1, max] (NaN too), then no bucket holding it
    b = moe::bucket_prompts({5000, 0}, {1024, 4096}, 1e8);
    CHECK(b.fault == Fault::no_bucket);
    CHECK(b.at == 0);
    b = moe::bucket_prompts({1000, 0, 5000}, {1024, 4096}, 1e8);
    CHECK(b.fault == Fault::bad_length);
    CHECK(b.at == 1);
    CHECK(moe::bucket_prompts({2e8}, {}, 1e8).fault == Fault::bad_length);
    CHECK(moe::bucket_prompts({2e8}, {}, HUGE_VAL).fault == Fault::over_one_forward);
    CHECK(moe::bucket_prompts({std::nan("")}, {}, HUGE_VAL).fault == Fault::bad_length);
    // one forward holds at most kMaxForwardTokens (10,000,000, workload.prefill_tokens' range): 5M + 5M fits, 5M + 5M + 1 not
    CHECK(moe::bucket_prompts({5e6, 5e6}, {}, 1e8).fault == Fault::none);
    b = moe::bucket_prompts({5e6, 5e6, 1}, {}, 1e8);
    CHECK(b.fault == Fault::over_one_forward);
    CHECK(b.total_tokens == 10000001);
    CHECK(moe::kMaxForwardTokens == moe::find_field("workload.prefill_tokens")->max);
}

TEST_CASE("workload lengths: a list replaces the fields a sweep axis would move (sweep refuses them)") {
    moe::WorkloadConfig w;
    for (const char* path : {"workload.prompt_len", "workload.prefill_tokens", "workload.batch", "workload.context_len"})
        CHECK(moe::length_list_replacing(w, path) == nullptr);
    w.prefill_bucket_lens = {1024};  // pads the prompts: replaces no field by itself
    CHECK(moe::length_list_replacing(w, "workload.prefill_tokens") == nullptr);
    w.prompt_lens = {1000, 3000};
    CHECK(std::string(moe::length_list_replacing(w, "workload.prompt_len")) == "workload.prompt_lens");
    CHECK(std::string(moe::length_list_replacing(w, "workload.prefill_tokens")) == "workload.prompt_lens");
    CHECK(moe::length_list_replacing(w, "workload.batch") == nullptr);
    CHECK(moe::length_list_replacing(w, "workload.output_len") == nullptr);
    w.context_lens = {512};
    CHECK(std::string(moe::length_list_replacing(w, "workload.batch")) == "workload.context_lens");
    CHECK(std::string(moe::length_list_replacing(w, "workload.context_len")) == "workload.context_lens");
    CHECK(moe::length_list_replacing(w, "parallel.ep") == nullptr);
    CHECK(moe::length_list_replacing(w, "serving.isl") == nullptr);
}
