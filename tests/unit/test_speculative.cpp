// Speculative decoding by acceptance per position (issue 29): the published curves, the expected tokens per step,
// the verify step at its real token count, the draft methods' costs and weights, the older spelling, the errors.
#include <doctest/doctest.h>

#include <set>

#include "core/moe.h"
#include "core/plan/plan.h"
#include "test_helpers.h"

using moe_test::run;
using moe_test::scenario;

namespace {
double tokens_of(const char* curve, int drafts) {
    moe::SpeculativeConfig sp;
    sp.draft_tokens = drafts;
    sp.acceptance.curve = moe::find_acceptance_curve(curve);
    REQUIRE(sp.acceptance.curve >= 0);
    return sp.tokens_per_step();
}
}  // namespace

TEST_CASE("speculative: the published curves give their published tokens per step") {
    // DeepSeek-V3 report §5.4.3: the second token is accepted 85-90% of the time (one MTP module).
    const double ds = tokens_of("deepseek-v3-mtp", 1);
    CHECK(ds >= 1.85);
    CHECK(ds <= 1.90);
    // vLLM PR #48892: 8 MTP drafts on GSM8K, acceptance length 4.50; the first position alone 76.17%.
    CHECK(tokens_of("vllm-mtp8-gsm8k", 8) == doctest::Approx(4.50).epsilon(0.002));
    CHECK(tokens_of("vllm-mtp8-gsm8k", 1) == doctest::Approx(1.7617).epsilon(1e-9));
    // EAGLE-3 head of Llama-3.1-8B on MT-bench, K = 7: acceptance length 2.77.
    CHECK(tokens_of("eagle3-llama3.1-8b-mtbench", 7) == doctest::Approx(2.77).epsilon(0.002));
    // Past a curve's positions its last conditional rate repeats: the 9th draft adds 0.2365 x (0.2365 / 0.2722).
    CHECK(tokens_of("vllm-mtp8-gsm8k", 9) - tokens_of("vllm-mtp8-gsm8k", 8) ==
          doctest::Approx(0.2365 * 0.2365 / 0.2722).epsilon(1e-9));
}

TEST_CASE("speculative: 1 + sum_k prod_{j<=k} a_j, a short list repeating its last rate") {
    moe::SpeculativeConfig sp;
    sp.draft_tokens = 3;
    sp.acceptance.n = 2;
    sp.acceptance.rates[0] = 0.9;
    sp.acceptance.rates[1] = 0.5;
    CHECK(sp.tokens_per_step() == doctest::Approx(1 + 0.9 + 0.45 + 0.225));
    sp.draft_tokens = 0;
    CHECK(sp.tokens_per_step() == 1.0);
}

TEST_CASE("speculative: the older mtp_draft_tokens / mtp_acceptance_rate spelling is the same scenario") {
    const char* old_json = R"({"model":"deepseek-v3","hardware":"h200","parallel":{"tp":8,"ep":8},
        "runtime":{"mtp_draft_tokens":2,"mtp_acceptance_rate":0.7},"workload":{"phase":"decode","batch":16}})";
    const char* new_json = R"({"model":"deepseek-v3","hardware":"h200","parallel":{"tp":8,"ep":8},
        "runtime":{"speculative":{"method":"mtp","draft_tokens":2,"acceptance":[0.7]}},"workload":{"phase":"decode","batch":16}})";
    const moe::Estimate a = run(old_json), b = run(new_json);
    CHECK(a.decode.step_ms == b.decode.step_ms);
    CHECK(a.decode.tpot_ms == b.decode.tpot_ms);
    CHECK(a.decode.tokens_per_step == doctest::Approx(16 * (1 + 0.7 + 0.49)));
    // written back in the new spelling only
    const nlohmann::json j = moe::scenario_to_json(scenario(old_json), true);
    CHECK(!j["runtime"].contains("mtp_draft_tokens"));
    CHECK(!j["runtime"].contains("mtp_acceptance_rate"));
    CHECK(j["runtime"]["speculative"]["draft_tokens"] == 2);
    CHECK(j["runtime"]["speculative"]["acceptance"] == nlohmann::json::array({0.7}));
    CHECK(moe::get_path(scenario(new_json), "runtime.mtp_acceptance_rate") == 0.7);
    // a named curve round-trips by name
    const nlohmann::json c = moe::scenario_to_json(
        scenario(R"({"model":"deepseek-v3","runtime":{"speculative":{"draft_tokens":1,"acceptance":"deepseek-v3-mtp"}}})"), true);
    CHECK(c["runtime"]["speculative"]["acceptance"] == "deepseek-v3-mtp");
}

TEST_CASE("speculative: the verify step runs batch x (1 + drafts) tokens; the methods' draft costs differ") {
    auto decode = [](const char* spec) {
        return run(std::string(R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":4},
            "workload":{"phase":"decode","batch":8,"context_len":2048},"runtime":{"speculative":)") + spec + "}}");
    };
    const moe::Estimate off = decode(R"({"draft_tokens":0})");
    const moe::Estimate ngram = decode(R"({"method":"ngram","draft_tokens":3,"acceptance":[0.6]})");
    const moe::Estimate eagle = decode(R"({"method":"eagle","draft_tokens":3,"acceptance":[0.6]})");
    // n-gram: no draft group, but the verify forward of 32 tokens costs more than 8
    for (const moe::LayerGroup& g : ngram.decode.groups) CHECK(std::string(g.label.c_str()).find("draft") == std::string::npos);
    CHECK(ngram.decode.step_ms > off.decode.step_ms);
    CHECK(ngram.decode.step_ms < off.decode.step_ms * 1.5);  // memory-bound at 32 tokens: weights dominate
    // EAGLE adds 3 draft passes of its one-layer head: more than n-gram, far less than 3 x the 80-layer target
    CHECK(eagle.decode.step_ms > ngram.decode.step_ms);
    CHECK(eagle.decode.step_ms - ngram.decode.step_ms < 0.2 * off.decode.step_ms);
    // accepted tokens feed TPOT: step / (1 + 0.6 + 0.36 + 0.216)
    CHECK(ngram.decode.tpot_ms == doctest::Approx(ngram.decode.step_ms / 2.176));
    CHECK(ngram.decode.tokens_per_step == doctest::Approx(8 * 2.176));
}

TEST_CASE("speculative: an EAGLE head weighs one decoder layer of the target plus its 2h x h fusion") {
    // EAGLE's README: 0.99 B parameters for the LLaMA2-Chat-70B head (hidden 8192, FFN 28672, 64 q / 8 kv heads:
    // Llama-3.1-70B's shapes). bf16, one GPU.
    const moe::Estimate e = run(R"({"model":"llama-3.1-70b","hardware":"b200","workload":{"phase":"decode","batch":1},
        "runtime":{"speculative":{"method":"eagle","draft_tokens":2}}})");
    CHECK(e.memory.weights_mtp_bytes / 2.0 == doctest::Approx(0.99e9).epsilon(0.01));
    const moe::Estimate n = run(R"({"model":"llama-3.1-70b","hardware":"b200","workload":{"phase":"decode","batch":1},
        "runtime":{"speculative":{"method":"ngram","draft_tokens":2}}})");
    CHECK(n.memory.weights_mtp_bytes == 0);
    // the head's one layer keeps its own KV cache
    CHECK(e.memory.kv_cache_bytes > n.memory.kv_cache_bytes);
}

TEST_CASE("speculative: an EAGLE head's fc stays in the draft checkpoint's BF16 when the target is FP8 (issue 30)") {
    // The fc (2h x h) is a plain torch Linear of the draft checkpoint (SGLang llama_eagle3.py builds it without a
    // quant_config and unsharded); the public EAGLE-3 heads are stored in BF16 (config.json torch_dtype bfloat16,
    // e.g. SpecForge's qwen3-32b-eagle3 and gpt-oss-120b-eagle3). Llama-3.1-70B with FP8 weights, TP4 on H100:
    //   fc weights: 2 x 8192 x 8192 x 2 B = 268,435,456 B on every GPU (before issue 30: priced as the FP8 attention,
    //   134,217,728 B), read once per draft pass.
    // The decoder layer is priced in the target's formats (not changed here):
    //   attention 8192 x (64 + 2 x 8) x 128 + 64 x 128 x 8192 = 150,994,944, FFN 3 x 8192 x 28672 = 704,643,072,
    //   over tp 4 = 213,909,504 weights a GPU, at 2 B vs 1 B; norms 2 x 8192 x 4 B = 65,536 B.
    auto head = [](const char* weights) {
        return run(std::string(R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":4},"precision":{"weights":")") +
                   weights + R"("},"workload":{"phase":"decode","batch":8,"context_len":2048},
                   "runtime":{"speculative":{"method":"eagle","draft_tokens":3,"acceptance":[0.6]}}})");
    };
    const moe::Estimate fp8 = head("fp8"), bf16 = head("bf16");
    const double h = 8192, fc = 2 * h * h * 2.0;
    CHECK(fc == 268435456);
    const double layer_weights = (h * (64 + 16) * 128 + 64 * 128 * h + 3 * h * 28672) / 4;
    CHECK(layer_weights == 213909504);
    CHECK(bf16.memory.weights_mtp_bytes == doctest::Approx(layer_weights * 2 + fc + 2 * h * 4).epsilon(1e-12));
    // FP8 target: the layer at 1 B + 4 B per 128 x 128 block, the fc still 268,435,456 B: 482,462,720 B in all
    CHECK(fp8.memory.weights_mtp_bytes == doctest::Approx(layer_weights * (1 + 4.0 / 16384) + fc + 2 * h * 4).epsilon(1e-12));
    const moe::OpRecord* op = nullptr;
    for (const moe::OpRecord& o : fp8.ops)
        if (std::string(o.name) == "eagle.fc") op = &o;
    REQUIRE(op != nullptr);
    CHECK(op->weight_bytes == doctest::Approx(fc));
    CHECK(op->count == 3);
}

TEST_CASE("speculative: bad input names the field") {
    auto first_error = [](const char* json) {
        const moe::ParseResult r = moe::parse_scenario(json, moe::builtin_catalog());
        REQUIRE(!r.ok());
        return r.errors.front();
    };
    moe::Issue e = first_error(R"({"model":"llama-3.1-8b","runtime":{"speculative":{"draft_tokens":2}}})");
    CHECK(e.path == "runtime.speculative.draft_tokens");
    CHECK(e.message.find("eagle or ngram") != std::string::npos);
    e = first_error(R"({"model":"llama-3.1-8b","runtime":{"mtp_draft_tokens":2}})");  // older spelling, same check
    CHECK(e.path == "runtime.speculative.draft_tokens");
    e = first_error(R"({"runtime":{"speculative":{"acceptance":"eagle-9"}}})");
    CHECK(e.path == "runtime.speculative.acceptance");
    CHECK(e.message.find("deepseek-v3-mtp") != std::string::npos);
    e = first_error(R"({"runtime":{"speculative":{"acceptance":[0.9,1.2]}}})");
    CHECK(e.path == "runtime.speculative.acceptance[1]");
    e = first_error(R"({"runtime":{"speculative":{"acceptance":[]}}})");
    CHECK(e.path == "runtime.speculative.acceptance");
    e = first_error(R"({"runtime":{"speculative":{"method":"medusa"}}})");
    CHECK(e.path == "runtime.speculative.method");
    e = first_error(R"({"runtime":{"speculative":{"draft_tokens":17}}})");
    CHECK(e.path == "runtime.speculative.draft_tokens");
}

TEST_CASE("speculative: serving and the planner take the accepted tokens") {
    // aggregated serving at a small batch: n-gram drafts that are always accepted cut TPOT; never accepted ones
    // only add the verify tokens
    auto serve = [](const char* acceptance) {
        return moe::evaluate(scenario(std::string(R"({"model":"llama-3.1-8b","hardware":"h100-sxm",
            "serving":{"mode":"aggregated","isl":512,"osl":256,"concurrency":4,"requests_per_client":2},
            "runtime":{"speculative":{"method":"ngram","draft_tokens":2,"acceptance":)") + acceptance + "}}}"),
                             moe::builtin_tables());
    };
    const moe::Estimate off = moe::evaluate(scenario(R"({"model":"llama-3.1-8b","hardware":"h100-sxm",
            "serving":{"mode":"aggregated","isl":512,"osl":256,"concurrency":4,"requests_per_client":2}})"),
                                            moe::builtin_tables());
    const moe::Estimate hit = serve("[1.0]"), miss = serve("[0.0]");
    REQUIRE(off.ok);
    REQUIRE(hit.ok);
    REQUIRE(miss.ok);
    CHECK(hit.serving.tpot_ms < 0.5 * off.serving.tpot_ms);
    CHECK(miss.serving.tpot_ms > off.serving.tpot_ms);
    CHECK(hit.serving.output_tokens_per_s_per_gpu > 2.0 * off.serving.output_tokens_per_s_per_gpu);
    // memory-bound with fractional tokens per step (2.05): a preempted request was admitted again into less room than
    // one decode step of the batch, preempted again, and no step ever ran ("the simulation finished no request")
    const moe::Estimate tight = moe::evaluate(scenario(R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm",
        "serving":{"mode":"aggregated","isl":4100,"osl":300,"concurrency":64,"requests_per_client":10},
        "runtime":{"speculative":{"method":"ngram","draft_tokens":2,"acceptance":[0.7,0.5]}}})"), moe::builtin_tables());
    for (const moe::Issue& i : tight.errors) INFO(i.text());
    REQUIRE(tight.ok);
    CHECK(tight.serving.running_batch > 30);
    CHECK(tight.serving.tpot_ms > 0);
    // the planner searches draft counts for a model without MTP layers once the method is eagle or ngram
    const moe::Scenario base =
        scenario(R"({"model":"llama-3.1-8b","hardware":"h100-sxm","runtime":{"speculative":{"method":"ngram"}}})");
    moe::PlanRequest req;
    req.gpus = 1;
    moe::Issues errs;
    REQUIRE(moe::plan_space_from_json(nlohmann::json::parse(R"({"batch":[8]})"), req.space, errs));
    const std::vector<moe::PlanPoint> pts = moe::enumerate_plan(base, req, errs);
    REQUIRE(errs.empty());
    std::set<int> drafts;
    for (const moe::PlanPoint& p : pts) drafts.insert(p.mtp);
    CHECK(drafts == std::set<int>{0, 1, 2, 3});
}
