// test_serving.cpp — the serving layer (core/serving.h, core/engine.h): fields, errors, the hand-worked arithmetic of
// its parts, and its shape over concurrency.
#include <cmath>
#include <cstdio>

#include "core/serving/serving.h"
#include "test_helpers.h"

namespace {

moe::Estimate eval(const std::string& json_text) {
    moe::Estimate e = moe::evaluate(moe_test::scenario(json_text), moe::builtin_tables());
    for (const auto& err : e.errors) INFO(err.text());
    REQUIRE(e.ok);
    return e;
}

}  // namespace

TEST_CASE("serving: off by default, its columns empty") {
    const moe::Estimate e = eval(R"({"model":"qwen3-8b","hardware":"h200"})");
    CHECK_FALSE(e.serving.computed);
    const moe::Column* c = moe::find_column("serving.ttft_ms");
    REQUIRE(c);
    CHECK(moe::format_value(*c, e).empty());
    CHECK(moe::column_json(*c, e).is_null());
}

TEST_CASE("serving: nested fields round-trip through compact JSON and name their path in errors") {
    const char* text = R"({"model":"deepseek-v3","hardware":"h200","parallel":{"tp":1,"dp":8,"ep":8},
        "runtime":{"engine":"vllm"},
        "serving":{"mode":"disaggregated","isl":2048,"osl":512,
                   "prefill":{"parallel":{"tp":8},"workers":2,"batch":1},
                   "decode":{"parallel":{"dp":16,"ep":16},"workers":1,"batch":32}}})";
    const moe::Scenario s = moe_test::scenario(text);
    CHECK(s.serving.decode.parallel.ep == 16);
    CHECK(s.serving.prefill.workers == 2);
    const nlohmann::json j = moe::scenario_to_json(s, true);
    CHECK(j["serving"]["decode"]["parallel"]["ep"] == 16);
    CHECK(j["runtime"]["engine"] == "vllm");
    const moe::ParseResult back = moe::scenario_from_json(j, moe::builtin_catalog());
    REQUIRE(back.ok());
    CHECK(moe::scenario_to_json(back.scenario, true) == j);

    // a pool's layout is checked like `parallel`, with its own path
    moe::ParseResult bad = moe::parse_scenario(
        R"({"model":"deepseek-v3","hardware":"h200","serving":{"mode":"disaggregated","decode":{"parallel":{"dp":8,"ep":3}}}})",
        moe::builtin_catalog());
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.errors.front().text() == "serving.decode.parallel.ep: 3 does not divide tp*dp = 8");
    bad = moe::parse_scenario(R"({"model":"qwen3-8b","serving":{"decode":{"paralel":{"tp":2}}}})", moe::builtin_catalog());
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.errors.front().path == "serving.decode.paralel");
    bad = moe::parse_scenario(R"({"model":"qwen3-8b","runtime":{"engine":"tgi"}})", moe::builtin_catalog());
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.errors.front().path == "runtime.engine");
}

TEST_CASE("serving: one request on the ideal engine decodes at the step model's batch-1 step") {
    // concurrency 1: nobody else's prompt lands on its decode steps, so TPOT is the decode step itself (no engine
    // overhead on `ideal`), at the average context isl + osl/2.
    const moe::Estimate e = eval(R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":4},
        "runtime":{"engine":"ideal"},"serving":{"mode":"aggregated","isl":2048,"osl":512,"concurrency":1}})");
    const moe::Estimate step = moe_test::run(R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":4},
        "workload":{"phase":"decode","batch":1,"prompt_len":2048,"output_len":512,"context_len":2304},
        "runtime":{"decode_overhead_ms":0}})");
    // (the simulation's step-time surface is within 1% of estimate(): test_serving_sim.cpp)
    CHECK(e.serving.tpot_ms == doctest::Approx(step.decode.step_ms).epsilon(0.01));
    CHECK(e.serving.tpot_prefill_ms < 1e-6 * e.serving.tpot_ms);
    CHECK(e.serving.ttft_overhead_ms == 0.0);
    // closed loop: one client, one request per end-to-end latency
    CHECK(e.serving.requests_per_s == doctest::Approx(1000.0 / e.serving.e2e_latency_ms));
    CHECK(e.serving.e2e_latency_ms == doctest::Approx(e.serving.ttft_ms + 511 * e.serving.tpot_ms));
    CHECK(e.serving.output_tokens_per_s_per_gpu == doctest::Approx(e.serving.requests_per_s * 512 / 4));
}

TEST_CASE("serving: disaggregated KV transfer, worked by hand") {
    // Llama-3.1-70B KV per token, bf16: 80 layers x 8 KV heads x 128 x (K, V) x 2 bytes = 327,680 B;
    // a 1024-token prompt: 335,544,320 B.
    // Two TP8 workers need 16 GPUs, more than the 8 of one H100 node: RDMA, 8 lanes x 50 GB/s (the preset's NIC),
    // ideal engine (full bandwidth, no latency): 335,544,320 / 400e9 s = 0.838861 ms.
    const moe::Estimate e = eval(R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":8},
        "runtime":{"engine":"ideal"},
        "serving":{"mode":"disaggregated","isl":1024,"osl":256,
                   "prefill":{"parallel":{"tp":8},"workers":1,"batch":1},
                   "decode":{"parallel":{"tp":8},"workers":1,"batch":16}}})");
    CHECK(e.serving.kv_transfer_ms == doctest::Approx(335544320.0 / 400e9 * 1000.0).epsilon(1e-9));
    CHECK(e.serving.gpus == 16);
    // Two TP4 workers fit in one node: NVLink, 4 lanes x 450 GB/s = 1,800 GB/s -> 0.186414 ms.
    const moe::Estimate n = eval(R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":4},
        "runtime":{"engine":"ideal"},
        "serving":{"mode":"disaggregated","isl":1024,"osl":256,
                   "prefill":{"parallel":{"tp":4},"workers":1,"batch":1},
                   "decode":{"parallel":{"tp":4},"workers":1,"batch":16}}})");
    CHECK(n.serving.kv_transfer_ms == doctest::Approx(335544320.0 / 1800e9 * 1000.0).epsilon(1e-9));
    // TTFT holds the prefill forward, the transfer and the engine's overhead (none on ideal), at least
    CHECK(n.serving.ttft_ms >= n.serving.ttft_prefill_ms + n.serving.kv_transfer_ms);
    // MLA: every TP rank holds the whole latent, so each decode GPU pulls a whole copy and more lanes do not share
    // it. DeepSeek-V3, bf16 cache: 61 layers x (512 + 64) x 2 B = 70,272 B per token, 71,958,528 B for the prompt;
    // two TP8 workers over RDMA, one lane of 50 GB/s: 1.439171 ms (8 lanes would say 0.18).
    const moe::Estimate mla = eval(R"({"model":"deepseek-v3","hardware":"h200","parallel":{"tp":8},
        "runtime":{"engine":"ideal"},
        "serving":{"mode":"disaggregated","isl":1024,"osl":256,
                   "prefill":{"parallel":{"tp":8},"workers":1,"batch":1},
                   "decode":{"parallel":{"tp":8},"workers":1,"batch":16}}})");
    CHECK(mla.serving.kv_transfer_ms == doctest::Approx(71958528.0 / 50e9 * 1000.0).epsilon(1e-9));
    // attention DP: a request lives on one DP rank, so its KV moves over that rank's own lanes (TP 1: one)
    const moe::Estimate dpn = eval(R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":4},
        "runtime":{"engine":"ideal"},
        "serving":{"mode":"disaggregated","isl":1024,"osl":256,
                   "prefill":{"parallel":{"tp":1,"dp":4},"workers":1,"batch":1},
                   "decode":{"parallel":{"tp":4},"workers":1,"batch":16}}})");
    CHECK(dpn.serving.kv_transfer_ms == doctest::Approx(335544320.0 / 450e9 * 1000.0).epsilon(1e-9));
}

TEST_CASE("serving: TTFT and TPOT grow with concurrency, per-user rate falls, for every engine") {
    for (const char* engine : {"sglang", "vllm", "trtllm", "ideal"}) {
        double ttft = 0, tpot = 0;
        for (int c : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
            const moe::Estimate e = eval(std::string(R"({"model":"qwen3-30b-a3b","hardware":"h200",
                "runtime":{"engine":")") + engine + R"("},"serving":{"mode":"aggregated","isl":1024,"osl":1024,"concurrency":)" +
                                         std::to_string(c) + "}}");
            INFO(std::string(engine) << " concurrency " << c);
            // (the simulated benchmark is discrete: a concurrency whose rounds stay aligned can wait a little longer
            // than the next one up, whose arrivals spread; DeepSeek-V3's case is in test_serving_sim.cpp)
            CHECK(e.serving.ttft_ms >= 0.9 * ttft);
            CHECK(e.serving.tpot_ms >= tpot * (1 - 1e-9));
            CHECK(std::isfinite(e.serving.output_tokens_per_s_per_gpu));
            ttft = e.serving.ttft_ms;
            tpot = e.serving.tpot_ms;
        }
    }
}

TEST_CASE("serving: a prefix-cache hit cuts the prompt work, not the memory a request holds") {
    for (const char* engine : {"sglang", "vllm", "trtllm"}) {
        const std::string base = std::string(R"({"model":"qwen3-32b","hardware":"h100-sxm","parallel":{"tp":2},"runtime":{"engine":")") +
                                 engine + R"("},"serving":{"mode":"aggregated","isl":8192,"osl":512,"concurrency":16})";
        const moe::Estimate e0 = eval(base + "}");
        const moe::Estimate e9 = eval(base + R"(,"workload":{"prefix_cache_hit":0.9}})");
        INFO(engine);
        // 90% of each prompt read from the cache: TTFT falls by well over half, TPOT's interleaved-prefill part
        // falls, and no fewer requests decode at once (the memory of the whole context is held all the same)
        CHECK(e9.serving.ttft_ms < 0.5 * e0.serving.ttft_ms);
        CHECK(e9.serving.tpot_prefill_ms < e0.serving.tpot_prefill_ms);
        CHECK(e9.serving.running_batch >= 0.97 * e0.serving.running_batch);  // (within the simulated run's 1-2% jitter)
    }
}

TEST_CASE("serving: a decode step is host-bound past the engine's per-request host work") {
    // Llama-3.1-8B on one H200 at 512 clients (docs/serving.md, "Host-bound decode steps"): the kernels of a decode
    // step take ~10 ms; with 50 us of host work per running request the step takes the longer of the two.
    const moe::Scenario s = moe_test::scenario(R"({"model":"llama-3.1-8b","hardware":"h200","parallel":{"tp":8},
        "runtime":{"engine":"ideal"},"serving":{"mode":"aggregated","isl":1000,"osl":1000,"concurrency":512}})");
    const moe::Tables& t = moe::builtin_tables();
    moe::EngineConstants k = moe::builtin_engines().get(moe::EngineKind::ideal);
    const moe::ServingSteps st = moe::serving_steps(s, t, k);
    REQUIRE(st.ok);
    const moe::ServingResult gpu = moe::serving_model(s, st, k);
    REQUIRE(gpu.running_batch == 512.0);
    CHECK(gpu.tpot_decode_ms == doctest::Approx(st.decode_ms));          // the kernels alone
    CHECK(gpu.tpot_decode_ms < 25.6);
    k.decode_host_per_request_us = 50;                                     // 512 x 50 us = 25.6 ms of host work
    const moe::ServingResult host = moe::serving_model(s, st, k);
    CHECK(host.tpot_decode_ms == doctest::Approx(25.6).epsilon(1e-12));
    CHECK(moe::decode_step_ms(k, 30.0, 512) == 30.0);                     // a longer GPU step hides the host work
}

// SGLang turns its overlap scheduler off under speculative decoding (python/sglang/srt/server_args.py,
// _handle_speculative_decoding: "Overlap scheduler is disabled because of using eagle speculative decoding", unless
// SGLANG_ENABLE_SPEC_V2): engine_constants() gives a scenario with drafts on SGLang the synchronous loop, where the
// host's per-request work adds to the GPU's step instead of hiding behind it; vLLM and TensorRT-LLM keep theirs.
TEST_CASE("serving: SGLang's speculative decoding runs without the overlap scheduler") {
    auto with = [&](const char* engine, const char* spec) {
        const std::string text = std::string(R"({"model":"qwen3-30b-a3b","hardware":"h200","runtime":{"engine":")") + engine +
                                 "\"" + spec + R"(},"serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":8}})";
        return moe::engine_constants(moe::builtin_engines(), moe_test::scenario(text.c_str()));
    };
    const char* drafts = R"(,"speculative":{"method":"ngram","draft_tokens":3,"acceptance":0.7})";  // any method
    const moe::EngineConstants plain = with("sglang", ""), spec = with("sglang", drafts);
    CHECK(plain.overlap_schedule);
    CHECK(plain.host_overlap);
    CHECK_FALSE(spec.overlap_schedule);
    CHECK_FALSE(spec.host_overlap);
    CHECK(with("trtllm", drafts).overlap_schedule);
    CHECK(with("vllm", drafts).host_overlap);
    // 256 running requests at SGLang's fitted host time: 256 x decode_host_per_request_us beside a 30 ms GPU step,
    // hidden with the overlap, added without it
    const double host_ms = 256 * plain.decode_host_per_request_us / 1000.0;
    REQUIRE(host_ms > 1.0);
    CHECK(moe::decode_step_ms(plain, 30.0, 256) == 30.0);
    CHECK(moe::decode_step_ms(spec, 30.0, 256) == doctest::Approx(30.0 + host_ms).epsilon(1e-12));
    // and a whole evaluation, the simulation and the closed form, pays it: at the range's top, 80 us per running
    // request, a step of the drafting engine grows by 80 us x its running batch (TPOT: over the 1 + 0.7 + 0.49 +
    // 0.343 = 2.533 tokens a step gives), while the overlapping engine's GPU step still hides it
    const std::string scenario = R"({"model":"qwen3-30b-a3b","hardware":"h200","runtime":{"engine":"sglang")";
    const std::string serving = R"(,"serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":64}})";
    moe::EngineSet busy = moe::builtin_engines(), idle = moe::builtin_engines();
    busy.get(moe::EngineKind::sglang).decode_host_per_request_us = 80;
    idle.get(moe::EngineKind::sglang).decode_host_per_request_us = 0;
    for (const moe::ServingMethod method : {moe::ServingMethod::simulation, moe::ServingMethod::closed_form}) {
        auto tpot = [&](const std::string& runtime, const moe::EngineSet& set, double* batch) {
            const moe::Scenario s = moe_test::scenario((scenario + runtime + "}" + serving).c_str());
            moe::Estimate e;
            moe::evaluate_into(s, moe::builtin_tables(), set, nullptr, e, false, false, method);
            REQUIRE(e.ok);
            if (batch) *batch = e.serving.running_batch;
            return e.serving.tpot_ms;
        };
        double b = 0;
        const double with_host = tpot(drafts, busy, &b), without = tpot(drafts, idle, nullptr);
        CHECK(with_host - without == doctest::Approx(0.080 * b / 2.533).epsilon(0.1));
        CHECK(tpot("", busy, nullptr) == doctest::Approx(tpot("", idle, nullptr)).epsilon(1e-9));
    }
}

// SGLang's --scheduler-recv-interval N (serving.scheduler_recv_interval): SchedulerRecvSkipper
// (python/sglang/srt/managers/scheduler_recv_skipper.py) lets the scheduler take in new requests once every N decode
// forwards, so a request that arrives while the batch decodes waits (N - 1) / 2 forwards more on average:
// InferenceMAX's Qwen3.5 SGLang recipes (benchmarks/single_node/qwen3.5_fp8_b200.sh) set 10 below 16 clients, 30 from
// 16: 4.5 and 14.5 steps. vLLM and TensorRT-LLM receive at every step.
TEST_CASE("serving: SGLang's scheduler-recv-interval makes a new request wait (N - 1) / 2 decode steps") {
    moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-30b-a3b","hardware":"h200","runtime":{"engine":"sglang"},
        "serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":8}})");
    CHECK(s.serving.recv_wait_steps(moe::EngineKind::sglang) == 0.0);  // SGLang's default, 1: every forward
    s.serving.scheduler_recv_interval = 10;
    CHECK(s.serving.recv_wait_steps(moe::EngineKind::sglang) == 4.5);
    s.serving.scheduler_recv_interval = 30;
    CHECK(s.serving.recv_wait_steps(moe::EngineKind::sglang) == 14.5);
    CHECK(s.serving.recv_wait_steps(moe::EngineKind::vllm) == 0.0);
    CHECK(s.serving.recv_wait_steps(moe::EngineKind::trtllm) == 0.0);
    // the closed form adds the wait in decode steps of the running batch
    const moe::Tables& t = moe::builtin_tables();
    const moe::EngineConstants& k = moe::builtin_engines().get(moe::EngineKind::sglang);
    const moe::ServingSteps st = moe::serving_steps(s, t, k);
    REQUIRE(st.ok);
    s.serving.scheduler_recv_interval = 1;
    const moe::ServingResult every = moe::serving_model(s, st, k);
    s.serving.scheduler_recv_interval = 10;
    const moe::ServingResult ten = moe::serving_model(s, st, k);
    CHECK(ten.ttft_ms - every.ttft_ms == doctest::Approx(4.5 * every.tpot_decode_ms).epsilon(1e-6));
    // an overlap schedule (SGLang's event_loop_overlap, TensorRT-LLM's overlap scheduler: the next forward is
    // launched before the last one's results are read) takes a request in one forward later: one decode step more
    moe::EngineConstants sync = k;
    sync.overlap_schedule = false;
    const moe::ServingResult synchronous = moe::serving_model(s, st, sync);
    CHECK(ten.ttft_ms - synchronous.ttft_ms == doctest::Approx(1.0 * every.tpot_decode_ms).epsilon(1e-6));
    CHECK(moe::builtin_engines().get(moe::EngineKind::sglang).overlap_schedule);
    CHECK(moe::builtin_engines().get(moe::EngineKind::trtllm).overlap_schedule);
    CHECK_FALSE(moe::builtin_engines().get(moe::EngineKind::vllm).overlap_schedule);
    // the simulation: a later TTFT, and a flag a vLLM scenario does not take (a warning, no change)
    const moe::Estimate sg1 = eval(R"({"model":"qwen3-30b-a3b","hardware":"h200","runtime":{"engine":"sglang"},
        "serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":8}})");
    const moe::Estimate sg10 = eval(R"({"model":"qwen3-30b-a3b","hardware":"h200","runtime":{"engine":"sglang"},
        "serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":8,"scheduler_recv_interval":10}})");
    CHECK(sg10.serving.ttft_ms > sg1.serving.ttft_ms + 3.0 * sg1.serving.tpot_decode_ms);
    const moe::Estimate vl10 = eval(R"({"model":"qwen3-30b-a3b","hardware":"h200","runtime":{"engine":"vllm"},
        "serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":8,"scheduler_recv_interval":10}})");
    const moe::Estimate vl1 = eval(R"({"model":"qwen3-30b-a3b","hardware":"h200","runtime":{"engine":"vllm"},
        "serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":8}})");
    CHECK(vl10.serving.ttft_ms == vl1.serving.ttft_ms);
    bool warned = false;
    for (const std::string& w : vl10.warnings) warned = warned || w.find("serving.scheduler_recv_interval") != std::string::npos;
    CHECK(warned);
}

TEST_CASE("serving: a stream interval changes no mean (the engines send the first token at once)") {
    // serving.stream_interval 20 (--stream-interval 20): SGLang streams a request's output when
    // `len(req.output_ids) == 1` or every stream_interval decode forwards (scheduler output processing), TensorRT-LLM
    // when `request.py_decoding_iter == 1` or every stream_interval iterations (PyExecutor._handle_responses): the
    // first token leaves at once, the rest in chunks. TTFT, the mean TPOT ((e2e - TTFT) / (osl - 1)) and E2E stay.
    const std::string base = R"({"model":"llama-3.1-70b","hardware":"b200","parallel":{"tp":2},"runtime":{"engine":"trtllm"},
        "serving":{"mode":"aggregated","isl":1024,"osl":1024,"concurrency":8)";
    const moe::Estimate a = eval(base + "}}");
    const moe::Estimate b = eval(base + R"(,"stream_interval":20}})");
    CHECK(b.serving.ttft_ms == a.serving.ttft_ms);
    CHECK(b.serving.tpot_ms == a.serving.tpot_ms);
    CHECK(b.serving.e2e_latency_ms == a.serving.e2e_latency_ms);
    CHECK(b.serving.requests_per_s == a.serving.requests_per_s);
}

TEST_CASE("serving: the steady-state wait for other prompts grows with concurrency and vanishes alone") {
    // Mean value analysis of the closed loop (docs/serving.md, "Serving"): one client never waits; at a steady
    // state the others' prompts queue ahead. vLLM on Qwen3-32B, 8K prompts: the wait at 32 clients is larger
    // than at 8.
    auto queue_at = [](int c) {
        return eval(R"({"model":"qwen3-32b","hardware":"h100-sxm","parallel":{"tp":2},"runtime":{"engine":"vllm"},
            "serving":{"mode":"aggregated","isl":8192,"osl":512,"concurrency":)" + std::to_string(c) + "}}")
            .serving.ttft_queue_ms;
    };
    CHECK(queue_at(1) == 0.0);
    const double q8 = queue_at(8), q32 = queue_at(32);
    CHECK(q8 > 0.0);
    CHECK(q32 > q8);
}

TEST_CASE("serving: spread request lengths run at their mean and break up synchronised rounds") {
    // serving.length_spread s draws each request's lengths uniformly from (1 - s) x to 1 x isl / osl (InferenceMAX's
    // client: --random-range-ratio 0.8, s = 0.2). With one request per client, 1000 / 1000 at s = 0.2 runs close to
    // the fixed-length 900 / 900 run: the same mean; its longest requests stretch the run's end (throughput).
    auto run = [](const char* engine, int isl, int osl, double spread, int rounds, int conc) {
        char b[512];
        std::snprintf(b, sizeof b, R"({"model":"qwen3-32b","hardware":"h100-sxm","parallel":{"tp":2},"runtime":{"engine":"%s"},
            "serving":{"mode":"aggregated","isl":%d,"osl":%d,"length_spread":%g,"requests_per_client":%d,"concurrency":%d}})",
                      engine, isl, osl, spread, rounds, conc);
        return eval(b).serving;
    };
    for (const char* engine : {"sglang", "vllm", "trtllm"}) {
        CAPTURE(engine);
        const moe::ServingResult a = run(engine, 1000, 1000, 0.2, 1, 32), b = run(engine, 900, 900, 0.0, 1, 32);
        CHECK(a.ttft_ms == doctest::Approx(b.ttft_ms).epsilon(0.02));
        CHECK(a.tpot_ms == doctest::Approx(b.tpot_ms).epsilon(0.02));
        CHECK(a.output_tokens_per_s_per_gpu == doctest::Approx(b.output_tokens_per_s_per_gpu).epsilon(0.10));
    }
    // Ten rounds on SGLang (prefill first keeps fixed-length rounds aligned): spread finishes arrive apart, so less
    // of the later rounds waits for the whole round's prompts. Same mean lengths, a shorter TTFT.
    const moe::ServingResult fixed = run("sglang", 7373, 922, 0.0, 10, 64), spread = run("sglang", 8192, 1024, 0.2, 10, 64);
    CHECK(spread.ttft_ms < fixed.ttft_ms);
    // bad input names the field
    const moe::ParseResult bad = moe::parse_scenario(R"({"model":"qwen3-8b","serving":{"length_spread":1.5}})", moe::builtin_catalog());
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.errors.front().path == "serving.length_spread");
}

TEST_CASE("serving: a batch beyond memory waits for slots") {
    // DeepSeek-V3 FP8 on one 8 x H200 replica holds a few hundred 9K-token requests per DP rank at most;
    // 100,000 in flight must queue: TTFT is dominated by the wait, the running batch is the memory's.
    const moe::Estimate e = eval(R"({"model":"deepseek-v3","hardware":"h200","parallel":{"tp":1,"dp":8,"ep":8},
        "serving":{"mode":"aggregated","isl":8192,"osl":1024,"concurrency":100000}})");
    CHECK(e.serving.running_batch < 100000.0 / 8);
    CHECK(e.serving.ttft_queue_ms > 0.5 * e.serving.ttft_ms);
    CHECK(std::string(e.serving.bound) == "memory");
}

TEST_CASE("engines: the shipped constants parse, and bad ones name their path") {
    moe::EngineSet set = moe::default_engines();
    moe::Issues errs;
    CHECK(moe::parse_engines(moe::engines_to_json(moe::builtin_engines()), set, errs));
    CHECK(errs.empty());
    CHECK_FALSE(moe::builtin_engines().get(moe::EngineKind::sglang).mixed_batches);  // SGLang: separate prefill
    CHECK(moe::builtin_engines().get(moe::EngineKind::vllm).mixed_batches);
    // each validated engine ships its typical error against the serving set; the ideal engine has none
    for (moe::EngineKind k : {moe::EngineKind::sglang, moe::EngineKind::vllm, moe::EngineKind::trtllm}) {
        CHECK(moe::builtin_engines().get(k).ttft_typical_error > 0.0);
        CHECK(moe::builtin_engines().get(k).tpot_typical_error > 0.0);
    }
    CHECK(moe::builtin_engines().get(moe::EngineKind::ideal).ttft_typical_error == 0.0);
    errs.clear();
    CHECK_FALSE(moe::parse_engines(nlohmann::json::parse(R"({"sglang":{"ttft_typical_error":-0.1}})"), set, errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "engines.sglang.ttft_typical_error");
    errs.clear();
    CHECK_FALSE(moe::parse_engines(nlohmann::json::parse(R"({"vllm":{"decode_overhead_per_layer_us":-1}})"), set, errs));
    REQUIRE(errs.size() == 1);
    CHECK(errs[0].path == "engines.vllm.decode_overhead_per_layer_us");
    errs.clear();
    CHECK_FALSE(moe::parse_engines(nlohmann::json::parse(R"({"tgi":{}})"), set, errs));
    CHECK(errs[0].path == "engines.tgi");
}

TEST_CASE("engines: one set of constants per engine, each inside its documented range (issue 25)") {
    moe::EngineSet set = moe::default_engines();
    moe::Issues errs;
    // the per-GPU refinements of earlier files are refused, naming the block
    CHECK_FALSE(moe::parse_engines(nlohmann::json::parse(R"({"vllm":{"gpus":{"b200":{"request_overhead_ms":50}}}})"), set, errs));
    REQUIRE_FALSE(errs.empty());
    CHECK(errs.front().path == "engines.vllm.gpus");
    // a value outside its physical range is an error, not a clamp
    errs.clear();
    CHECK_FALSE(moe::parse_engines(nlohmann::json::parse(R"({"sglang":{"request_overhead_ms":234}})"), set, errs));
    REQUIRE_FALSE(errs.empty());
    CHECK(errs.front().path == "engines.sglang.request_overhead_ms");
    // kernel scales are gone: a kernel error is the kernel layer's to fix
    errs.clear();
    CHECK_FALSE(moe::parse_engines(nlohmann::json::parse(R"({"trtllm":{"decode_kernel_scale":1.1}})"), set, errs));
    CHECK(errs.front().path == "engines.trtllm.decode_kernel_scale");
    // the shipped constants: at most 8 fitted per engine, each inside its range
    CHECK(moe::fitted_engine_constants().size() <= 8);
    for (moe::EngineKind k : {moe::EngineKind::sglang, moe::EngineKind::vllm, moe::EngineKind::trtllm})
        for (const moe::EngineConstantInfo& i : moe::fitted_engine_constants()) {
            const double v = moe::builtin_engines().get(k).*i.field;
            INFO(i.name << " = " << v);
            CHECK(v >= i.lo);
            CHECK(v <= i.hi);
            // the range parse_engines() enforces is the same
            moe::EngineSet probe = moe::default_engines();
            moe::Issues e2;
            CHECK_FALSE(moe::parse_engines(nlohmann::json{{"vllm", {{i.name, i.hi * 1.01 + 0.01}}}}, probe, e2));
        }
}

TEST_CASE("nested groups: a key holding NUL bytes is an unknown key, read within bounds") {
    // fuzz_scenario found is_group() reading past "parallel.dp" for the key "dp\0\0\0" (strncmp stopped at the NUL);
    // the ASan build of this test catches a relapse.
    nlohmann::json j = {{"model", "qwen3-8b"}};
    j["parallel"][std::string("dp\0\0\0", 5)] = 16;
    j["serving"][std::string("decode\0\0\0\0\0\0\0\0\0\0", 16)] = 1;
    const moe::ParseResult r = moe::scenario_from_json(j, moe::builtin_catalog());
    REQUIRE(r.errors.size() == 2);
    for (const moe::Issue& i : r.errors) CHECK(i.message == "unknown key");
}

TEST_CASE("cost: $ per million tokens from the GPU-hour price (issue 28)") {
    using namespace moe_test;
    // H200's example price (presets/hardware/README.md: RunPod on-demand $3.59 per GPU-hour)
    moe::Estimate e = moe::evaluate(scenario(R"({"model":"qwen3-30b-a3b","hardware":"h200","workload":{"batch":64},
        "serving":{"mode":"aggregated","isl":1024,"osl":512,"concurrency":64}})"), moe::builtin_tables());
    REQUIRE(e.ok);
    CHECK(e.gpu_hour_usd == 3.59);
    // a GPU making 1,000 tokens/s at $3.59/h: 3.59 / 3.6 = $0.997 per million; here at the phase's own rate
    CHECK(e.decode.usd_per_mtok == doctest::Approx(3.59 / 3600.0 / e.decode.tokens_per_s_per_gpu * 1e6));
    CHECK(e.prefill.usd_per_mtok == doctest::Approx(3.59 / 3600.0 / e.prefill.tokens_per_s_per_gpu * 1e6));
    CHECK(e.serving.usd_per_mtok_output == doctest::Approx(3.59 / 3600.0 / e.serving.output_tokens_per_s_per_gpu * 1e6));
    // prompt and output tokens counted alike: 1024 + 512 per request, 512 of them output
    CHECK(e.serving.usd_per_mtok_total == doctest::Approx(e.serving.usd_per_mtok_output * 512.0 / 1536.0));
    // the scenario's own price wins; twice the price, twice the cost
    moe::Estimate f = moe::evaluate(scenario(R"({"model":"qwen3-30b-a3b","hardware":"h200","workload":{"batch":64},
        "serving":{"mode":"aggregated","isl":1024,"osl":512,"concurrency":64},"cost":{"gpu_hour_usd":7.18}})"), moe::builtin_tables());
    REQUIRE(f.ok);
    CHECK(f.serving.usd_per_mtok_output == doctest::Approx(2 * e.serving.usd_per_mtok_output));
    // no price (H20 has no example): the $ columns are empty, nothing else changes
    moe::Estimate g = run(R"({"model":"qwen3-8b","hardware":"h20","workload":{"phase":"decode"}})");
    CHECK(g.gpu_hour_usd == 0);
    const moe::Column* c = moe::find_column("decode.usd_per_mtok");
    REQUIRE(c);
    CHECK(moe::format_value(*c, g).empty());
    CHECK(!moe::format_value(*c, f).empty());
    // bad input names the field
    moe::ParseResult bad = moe::parse_scenario(R"({"cost":{"gpu_hour_usd":-1}})", moe::builtin_catalog());
    REQUIRE(!bad.errors.empty());
    CHECK(bad.errors[0].path == "cost.gpu_hour_usd");
}

// Under a serving engine an expert-parallel MoE is priced with the engine's own token movement, not DeepEP: none of
// SGLang (--moe-a2a-backend none), vLLM (--all2all-backend allgather_reducescatter) or TensorRT-LLM turns DeepEP on
// by itself. Until 2026-11-26 the serving layer switched serving off in the scenario it hands estimate(), which then
// took it for a step-level one and priced DeepEP low-latency in decode (Qwen3.5-397B on 8 H200, TP8 EP8 under
// SGLang: the served decode step 20.9 ms where the step-level view of the same scenario said 24.1 ms).
TEST_CASE("serving: an EP MoE under an engine is priced with the engine's token movement, as the step level is") {
    using namespace moe_test;
    for (const char* engine : {"sglang", "vllm", "trtllm"}) {
        INFO(engine);
        const moe::Scenario s = scenario(std::string(R"({"model":"qwen3-30b-a3b","hardware":"h200","parallel":{"tp":8,"ep":8},
            "runtime":{"engine":")") + engine + R"("},"serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":16}})");
        const moe::Scenario x = moe::serving_step_scenario(s, s.parallel);
        CHECK(x.runtime.a2a_backend == moe::A2ABackend::allgather);
        // the step the serving layer prices equals the step-level estimate with the engine's backend named
        moe::Scenario y = s;
        y.runtime.a2a_backend = moe::A2ABackend::allgather;
        y.workload.phase = moe::PhaseSel::decode;
        y.workload.batch = 16;
        moe::Scenario xs = x;
        xs.workload.phase = moe::PhaseSel::decode;
        xs.workload.batch = 16;
        y.workload.context_len = xs.workload.context_len;
        const moe::Estimate a = moe::estimate(xs, moe::builtin_tables()), b = moe::estimate(y, moe::builtin_tables());
        REQUIRE(a.ok);
        REQUIRE(b.ok);
        const moe::OpRecord* da = find_op(a, "comm.dispatch", moe::Phase::decode);
        CHECK(da == nullptr);  // no DeepEP dispatch
        const moe::OpRecord* ra = find_op(a, "comm.moe_allreduce", moe::Phase::decode);
        const moe::OpRecord* rb = find_op(b, "comm.moe_allreduce", moe::Phase::decode);
        REQUIRE(ra);
        REQUIRE(rb);
        CHECK(ra->time_us == doctest::Approx(rb->time_us));
    }
    // the ideal engine and step-level scenarios keep DeepEP (the seeds' wide-EP deployments)
    const moe::Scenario s = scenario(R"({"model":"qwen3-30b-a3b","hardware":"h200","parallel":{"tp":8,"ep":8},
        "runtime":{"engine":"ideal"},"serving":{"mode":"aggregated","isl":1024,"osl":256,"concurrency":16}})");
    CHECK(moe::serving_step_scenario(s, s.parallel).runtime.a2a_backend == moe::A2ABackend::auto_);
    const moe::Estimate e = run(R"({"model":"qwen3-30b-a3b","hardware":"h200","parallel":{"tp":8,"ep":8},"workload":{"phase":"decode"}})");
    CHECK(find_op(e, "comm.dispatch", moe::Phase::decode) != nullptr);
}

// Attention tensor-parallel over the whole EP group (dp 1) leaves every rank holding all the tokens after its
// all-reduce: an all-gather MoE then gathers nothing, and the experts' partial outputs are summed by one all-reduce,
// the same collective (and bytes) as the experts tensor-parallel. Before 2026-11-26 the step priced an all-gather and
// a reduce-scatter of the sequence-parallel shards on top of the attention's all-reduce (three collectives a layer
// where the engines run two). With attention DP the ranks hold different tokens and the gather stays.
TEST_CASE("comm: an all-gather MoE without attention DP is one all-reduce; with attention DP it gathers") {
    using namespace moe_test;
    const moe::Estimate ag = run(R"({"model":"qwen3-30b-a3b","hardware":"h200","parallel":{"tp":8,"ep":8},
        "runtime":{"a2a_backend":"allgather"},"workload":{"phase":"decode","batch":64}})");
    const moe::Estimate tpm = run(R"({"model":"qwen3-30b-a3b","hardware":"h200","parallel":{"tp":8,"ep":1},
        "workload":{"phase":"decode","batch":64}})");
    const moe::OpRecord* a = find_op(ag, "comm.moe_allreduce", moe::Phase::decode);
    const moe::OpRecord* b = find_op(tpm, "comm.moe_allreduce", moe::Phase::decode);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(find_op(ag, "comm.allgather", moe::Phase::decode) == nullptr);
    CHECK(find_op(ag, "comm.reduce_scatter", moe::Phase::decode) == nullptr);
    // 64 tokens x hidden 2048 x 2 bytes, over 8 ranks: the same all-reduce either way
    CHECK(a->time_us == doctest::Approx(b->time_us));
    const moe::Estimate dp = run(R"({"model":"qwen3-30b-a3b","hardware":"h200","parallel":{"tp":1,"dp":8,"ep":8},
        "runtime":{"a2a_backend":"allgather"},"workload":{"phase":"decode","batch":64}})");
    CHECK(find_op(dp, "comm.allgather", moe::Phase::decode) != nullptr);
    CHECK(find_op(dp, "comm.reduce_scatter", moe::Phase::decode) != nullptr);
}
