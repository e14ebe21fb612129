// Speculative decoding by acceptance per position (issue 29): the published curves, the expected tokens per step,
// the verify step at its real token count, the draft methods' costs and weights, the older spelling, the errors.
#include <doctest/doctest.h>

#include <set>

#include "core/moe.h"
#include "core/plan/plan.h"
#include "core/base/embedded.h"

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

TEST_CASE("speculative: an EAGLE-3 head for Llama-3.1-8B, its parameters by hand") {
    // EAGLE-3 (Li et al. 2025; the EAGLE repo's cnets.py, SGLang's llama_eagle3.py): yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
    // is one LlamaDecoderLayer of the target's shapes (hidden 4096, 32 q / 8 kv heads of 128, FFN 14336) whose q, k, v
    // read [embedding, hidden] (2h = 8192 inputs), an fc fusing three target hidden states (3h -> h), four RMSNorms and
    // an LM head over draft_vocab_size 32,000 (d2t maps it to the target's 128,256); the embedding is the target's.
    //   q, k, v 8192 x (32 + 2 x 8) x 128 = 50,331,648; o 4096 x 4096 = 16,777,216; MLP 3 x 4096 x 14336 = 176,160,768;
    //   fc 3 x 4096 x 4096 = 50,331,648; LM head 4096 x 32000 = 131,072,000; norms 4 x 4096 = 16,384:
    //   424,689,664 parameters (EAGLE-1's head of the same target: 1 layer + a 2h x h fc, 260 M, and the target's LM
    //   head of 525 M shared).
    const moe::ModelSpec& m = moe_test::preset_model("llama-3.1-8b");
    CHECK(m.eagle3_draft_vocab() == 32000);
    CHECK(m.eagle3_head_params() == doctest::Approx(424689664.0));
    // In memory (one GPU, BF16 weights, FP32 norms): 424,673,280 x 2 B + 16,384 x 4 B
    const moe::Estimate e = run(R"({"model":"llama-3.1-8b","hardware":"h100-sxm","workload":{"phase":"decode","batch":1},
        "runtime":{"speculative":{"method":"eagle","draft_tokens":2}}})");
    CHECK(e.memory.weights_mtp_bytes == doctest::Approx(424673280.0 * 2 + 16384.0 * 4));
    const moe::Estimate n = run(R"({"model":"llama-3.1-8b","hardware":"h100-sxm","workload":{"phase":"decode","batch":1},
        "runtime":{"speculative":{"method":"ngram","draft_tokens":2}}})");
    CHECK(n.memory.weights_mtp_bytes == 0);
    // the head's one layer keeps its own KV cache
    CHECK(e.memory.kv_cache_bytes > n.memory.kv_cache_bytes);
    // Its operators: q, k, v at K = 8192, the fc at K = 12288 once per step, the LM head at N = 32,000 per draft
    const moe::OpRecord *qkv = nullptr, *fc = nullptr, *lm = nullptr;
    for (const moe::OpRecord& o : e.ops) {
        const std::string name = o.name;
        const moe::PhaseResult& p = o.phase == moe::Phase::prefill ? e.prefill : e.decode;
        const bool draft = std::string(p.groups[size_t(o.group)].label.c_str()) == "EAGLE draft";
        if (draft && name == "attn.qkv_proj") qkv = &o;
        if (name == "eagle.fc") fc = &o;
        if (name == "eagle.lm_head") lm = &o;
    }
    REQUIRE(qkv);
    REQUIRE(fc);
    REQUIRE(lm);
    CHECK(qkv->weight_bytes == doctest::Approx(50331648.0 * 2));
    CHECK(qkv->flops == doctest::Approx(2.0 * 1 * 8192 * 6144));
    CHECK(fc->weight_bytes == doctest::Approx(50331648.0 * 2));
    CHECK(fc->count == 1);
    CHECK(lm->weight_bytes == doctest::Approx(131072000.0 * 2));
    CHECK(lm->count == 2);
}

TEST_CASE("speculative: an EAGLE-3 head stays in the draft checkpoint's BF16 when the target's checkpoint is FP8") {
    // The public EAGLE-3 heads are BF16 checkpoints of their own (config.json torch_dtype bfloat16, e.g. SpecForge's
    // qwen3-32b-eagle3 and gpt-oss-120b-eagle3); SGLang loads them with their own (absent) quant config. A target whose
    // checkpoint is FP8 (Llama-3.1-70B-Instruct-FP8's formats, here as the preset with an FP8 quantization_config)
    // leaves the head in BF16; a format the scenario sets explicitly applies to the head too.
    //   Llama-3.1-70B's head, TP4: layer (8192 x 8192 x 2 inputs: q, k, v 2 x 8192 x 80 x 128 = 167,772,160; o
    //   67,108,864; MLP 704,643,072) / 4 = 234,881,024 a GPU; fc 3 x 8192^2 = 201,326,592 unsharded; LM head
    //   8192 x 32000 / 4 = 65,536,000; norms 4 x 8192 x 4 B.
    nlohmann::json cfg;
    for (const moe::EmbeddedFile& f : moe::embedded_files())
        if (std::string(f.path) == "presets/models/llama-3.1-70b.json")
            cfg = nlohmann::json::parse(std::string(f.data, f.size));
    REQUIRE(cfg.is_object());
    cfg["quantization_config"] = {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}};
    auto head = [&](const char* precision) {
        nlohmann::json s = {{"model", cfg}, {"hardware", "h100-sxm"}, {"parallel", {{"tp", 4}}},
                            {"workload", {{"phase", "decode"}, {"batch", 8}, {"context_len", 2048}}},
                            {"runtime", {{"speculative", {{"method", "eagle"}, {"draft_tokens", 3}, {"acceptance", {0.6}}}}}}};
        if (precision) s["precision"] = {{"weights", precision}};
        return run(s.dump());
    };
    const moe::Estimate ckpt = head(nullptr), fp8 = head("fp8");
    const double layer = 234881024, fc = 201326592, lm = 65536000, norms = 4 * 8192 * 4.0;
    CHECK(ckpt.weights_dtype == moe::Dtype::fp8);  // the target's attention
    CHECK(ckpt.memory.weights_mtp_bytes == doctest::Approx((layer + fc + lm) * 2 + norms).epsilon(1e-12));
    // precision.weights fp8 set explicitly: the layer at 1 B (per-tensor scales), fc and LM head still BF16
    CHECK(fp8.memory.weights_mtp_bytes == doctest::Approx(layer * (1 + 4.0 / 16384) + (fc + lm) * 2 + norms).epsilon(1e-12));
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
    CHECK(tight.serving.running_batch > 20);  // tens of requests decode together (the KV room holds ~28 at 0.88 of HBM)
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
