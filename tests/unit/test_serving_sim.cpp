// test_serving_sim.cpp — the serving simulation (core/serving/simulate.h) and its step-time surface (surface.h):
// the surface against direct estimate() calls, the simulation's hand-checkable cases (one client, the ideal engine),
// its closed-loop bookkeeping, and where the closed form (serving_model()) agrees with it.
#include <cmath>
#include <cstdio>

#include "core/serving/serving.h"
#include "core/serving/simulate.h"
#include "core/serving/surface.h"
#include "test_helpers.h"

namespace {

const moe::Tables& sim_tables() { return moe::builtin_tables(); }

// A serving scenario's decode (or prefill) step straight from estimate(), as the surface's grid points are made.
double direct_decode_ms(const moe::Scenario& s, int batch, int context) {
    moe::Scenario x = moe::serving_step_scenario(s, s.parallel);
    x.workload.phase = moe::PhaseSel::decode;
    x.workload.batch = batch;
    x.workload.context_len = context;
    const moe::Estimate e = moe::estimate(x, sim_tables());
    REQUIRE(e.ok);
    return e.decode.step_ms;
}
double direct_forward_ms(const moe::Scenario& s, int tokens) {
    moe::Scenario x = moe::serving_step_scenario(s, s.parallel);
    x.workload.phase = moe::PhaseSel::prefill;
    x.workload.batch = 1;
    x.workload.prefill_tokens = tokens;
    const moe::Estimate e = moe::estimate(x, sim_tables());
    REQUIRE(e.ok);
    return e.prefill.step_ms;
}

moe::EngineConstants ideal() { return moe::builtin_engines().get(moe::EngineKind::ideal); }

// DeepSeek-V3 disaggregated on H200, one prefill and one decode worker (TP 8, EP 8 each), one prompt at a time:
// one client in flight (serving.concurrency), two requests, 4,096-token prompts, 64 output tokens.
moe::Scenario one_client_disaggregated() {
    moe::Scenario s = moe_test::scenario(R"({"model":"deepseek-v3","hardware":"h200","parallel":{"tp":1,"dp":8,"ep":8},
        "runtime":{"engine":"ideal"},
        "serving":{"mode":"disaggregated","isl":4096,"osl":64,"requests_per_client":2,
                   "prefill":{"parallel":{"tp":8,"ep":8},"workers":1,"batch":1},
                   "decode":{"parallel":{"tp":8,"ep":8},"workers":1,"batch":1}}})");
    s.serving.concurrency = 1;
    return s;
}

}  // namespace

TEST_CASE("serving surface: between its grid points within 1% of a direct estimate()") {
    // Off-grid batches and contexts of three deployments (MoE with DP attention, MoE with TP, dense): the
    // interpolated decode step and prefill forward against estimate() at the same point.
    const char* cases[] = {
        R"({"model":"deepseek-v3","hardware":"h200","parallel":{"tp":1,"dp":8,"ep":8},"runtime":{"engine":"sglang"},
            "serving":{"mode":"aggregated","isl":2048,"osl":1024,"concurrency":512}})",
        R"({"model":"qwen3-235b-a22b","hardware":"h200","parallel":{"tp":8,"ep":8},"runtime":{"engine":"vllm"},
            "serving":{"mode":"aggregated","isl":1024,"osl":1024,"concurrency":200}})",
        R"({"model":"llama-3.1-70b","hardware":"h100-sxm","parallel":{"tp":4},"runtime":{"engine":"trtllm"},
            "serving":{"mode":"aggregated","isl":4096,"osl":512,"concurrency":96}})",
    };
    double worst = 0;
    int points = 0;
    for (const char* text : cases) {
        const moe::Scenario s = moe_test::scenario(text);
        const moe::StepSurface sf = moe::step_surface(s, sim_tables());
        REQUIRE(sf.ok);
        const int bmax = int(std::ceil(double(s.serving.concurrency) / s.parallel.dp));
        for (int b : {9, 11, 13, 18, 22, 27, 40, 50}) {  // (none a grid point: every batch to 8, 10, 12, ... 32, 48)
            if (b > bmax) continue;
            for (double f : {0.0, 0.3, 0.5, 1.0}) {
                const double ctx = sf.agg.ctx_lo + f * (sf.agg.ctx_hi - sf.agg.ctx_lo);
                const double direct = direct_decode_ms(s, b, int(std::lround(ctx)));
                const double err = std::fabs(sf.agg.decode_ms(b, std::lround(ctx)) / direct - 1);
                INFO(s.model.name << " decode b=" << b << " ctx=" << ctx << ": " << sf.agg.decode_ms(b, ctx) << " vs " << direct);
                CHECK(err < 0.01);
                worst = std::max(worst, err);
                ++points;
            }
        }
        for (int tokens : {100, 700, 1500, 3000, 5000, 7000}) {
            if (tokens > sf.chunk_tokens) continue;
            const double direct = direct_forward_ms(s, tokens);
            const double err = std::fabs(sf.agg.forward_ms(tokens) / direct - 1);
            INFO(s.model.name << " forward T=" << tokens << ": " << sf.agg.forward_ms(tokens) << " vs " << direct);
            CHECK(err < 0.01);
            worst = std::max(worst, err);
            ++points;
        }
        // one serving evaluation's cost in step-model calls (the <= 1 ms budget: bench/ measures the time)
        CHECK(sf.estimates <= 96);
    }
    MESSAGE("surface: " << points << " off-grid points, worst error " << 100 * worst << "%");
}

TEST_CASE("serving surface: its grid never repeats a point, whatever the batch it ends at") {
    // A rank's share of the clients that is not on the 1, 2, 3, 4, 6, 8, 12 ... grid ends the grid there: 24
    // clients on 8 DP ranks end at 3, 40 at 5 (a repeated point once gave a 0 ms step between them).
    for (int clients : {24, 40, 56, 200, 1000}) {
        const moe::Scenario s = moe_test::scenario(R"({"model":"deepseek-v3","hardware":"h200","parallel":{"tp":8,"dp":8,"ep":64},
            "runtime":{"engine":"sglang"},"serving":{"mode":"aggregated","isl":2048,"osl":1024,"concurrency":)" +
                                                   std::to_string(clients) + "}}");
        const moe::StepSurface sf = moe::step_surface(s, sim_tables());
        REQUIRE(sf.ok);
        const std::vector<double>& x = sf.agg.decode_lo.x;
        INFO(clients << " clients");
        for (std::size_t i = 1; i < x.size(); ++i) CHECK(x[i] > x[i - 1]);
        const int bmax = (clients + 7) / 8;
        CHECK(x.back() == bmax);
        CHECK(sf.agg.decode_ms(bmax, 2048) == doctest::Approx(direct_decode_ms(s, bmax, 2048)).epsilon(0.01));
    }
}

TEST_CASE("serving simulation: one client, the ideal engine — TTFT is the prompt's forward, TPOT the decode step") {
    // Nothing to wait for: one request at a time, no engine overhead. Its TTFT is its prompt's forward(s); each
    // later token one decode step at batch 1 whose context grows from isl to isl + osl - 1 (linear in the context:
    // the mean step is the step at the mean context).
    moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-32b","hardware":"h100-sxm","parallel":{"tp":2},
        "runtime":{"engine":"ideal"},
        "serving":{"mode":"aggregated","isl":3000,"osl":200,"concurrency":1,"requests_per_client":3}})");
    const moe::StepSurface sf = moe::step_surface(s, sim_tables());
    REQUIRE(sf.ok);
    const moe::ServingResult r = moe::simulate(s, sf, ideal());
    REQUIRE(r.computed);
    CHECK(r.ttft_ms == doctest::Approx(sf.agg.forward_ms(3000)).epsilon(1e-9));
    CHECK(r.ttft_queue_ms == doctest::Approx(0).epsilon(1e-9));
    const double mean_step = sf.agg.decode_ms(1, 3000 + 0.5 * 198);
    CHECK(r.tpot_ms == doctest::Approx(mean_step).epsilon(0.002));
    // and against estimate() directly at that context (the surface's 1%)
    CHECK(r.tpot_ms == doctest::Approx(direct_decode_ms(s, 1, 3099)).epsilon(0.01));
    CHECK(r.running_batch == doctest::Approx(1).epsilon(1e-6));
    // closed loop, one client: a request every TTFT + 199 steps
    CHECK(r.requests_per_s == doctest::Approx(1000.0 / (r.ttft_ms + 199 * r.tpot_ms)).epsilon(0.002));
}

TEST_CASE("serving simulation: with MTP a decode step gives each request its accepted tokens") {
    // One client on the ideal engine: TPOT is the decode step over the tokens a step makes (1 + the expected
    // accepted drafts, the step model's step_ms / tpot_ms), not the step itself.
    moe::Scenario s = moe_test::scenario(R"({"model":"deepseek-v3","hardware":"h200","parallel":{"tp":8,"ep":8},
        "runtime":{"engine":"ideal","mtp_draft_tokens":1,"mtp_acceptance_rate":0.8},
        "serving":{"mode":"aggregated","isl":2048,"osl":901,"concurrency":1,"requests_per_client":2}})");
    const moe::StepSurface sf = moe::step_surface(s, sim_tables());
    REQUIRE(sf.ok);
    CHECK(sf.tokens_per_step == doctest::Approx(1.8).epsilon(1e-6));  // 1 + 0.8 (one draft at acceptance 0.8)
    const moe::ServingResult r = moe::simulate(s, sf, ideal());
    REQUIRE(r.computed);
    // 900 tokens after the first in ceil(900 / 1.8) = 500 steps
    const double step = sf.agg.decode_ms(1, 2048 + 450);
    CHECK(r.tpot_ms == doctest::Approx(500 * step / 900).epsilon(0.01));
}

TEST_CASE("serving simulation: engine constants land where docs/serving.md says") {
    moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-32b","hardware":"h100-sxm","parallel":{"tp":2},
        "runtime":{"engine":"ideal"},
        "serving":{"mode":"aggregated","isl":1000,"osl":101,"concurrency":1,"requests_per_client":2}})");
    const moe::StepSurface sf = moe::step_surface(s, sim_tables());
    REQUIRE(sf.ok);
    const moe::ServingResult base = moe::simulate(s, sf, ideal());
    moe::EngineConstants k = ideal();
    k.request_overhead_ms = 7;             // + 7 ms on TTFT
    k.request_overhead_per_ktoken_ms = 2;  // + 2 ms per 1000 prompt tokens
    k.decode_overhead_per_layer_us = 10;   // + 10 us x 64 layers on every decode step
    const moe::ServingResult r = moe::simulate(s, sf, k);
    CHECK(r.ttft_ms - base.ttft_ms == doctest::Approx(7 + 2).epsilon(1e-6));
    CHECK(r.tpot_ms - base.tpot_ms == doctest::Approx(0.010 * s.model.num_layers).epsilon(1e-6));
    // host-bound: 100 ms of host work per running request per step is more than the GPU's step at batch 1
    k = ideal();
    k.decode_host_per_request_us = 100000;
    CHECK(moe::simulate(s, sf, k).tpot_ms == doctest::Approx(100.0).epsilon(1e-9));
}

TEST_CASE("serving simulation: the closed loop's bookkeeping") {
    moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-235b-a22b","hardware":"h200","parallel":{"tp":8,"ep":8},
        "runtime":{"engine":"vllm"},
        "serving":{"mode":"aggregated","isl":1024,"osl":512,"concurrency":64,"length_spread":0.2}})");
    const moe::StepSurface sf = moe::step_surface(s, sim_tables());
    REQUIRE(sf.ok);
    const moe::EngineConstants& k = moe::builtin_engines().get(moe::EngineKind::vllm);
    const moe::ServingResult r = moe::simulate(s, sf, k);
    REQUIRE(r.computed);
    // the same input, the same numbers (the lengths come from a fixed sequence)
    const moe::ServingResult r2 = moe::simulate(s, sf, k);
    CHECK(r.ttft_ms == r2.ttft_ms);
    CHECK(r.tpot_ms == r2.tpot_ms);
    // the parts of TTFT add up; TPOT is at least the decode step
    CHECK(r.ttft_overhead_ms + r.ttft_queue_ms + r.ttft_prefill_ms <= r.ttft_ms + 1e-9);
    CHECK(r.tpot_ms >= r.tpot_decode_ms);
    CHECK(r.running_batch <= 64.0 + 1e-9);
    CHECK(r.running_batch > 32.0);
    // Little's law over the run: clients = requests/s x the mean time a request is in the system (e2e), within the
    // start and the tail of the run where fewer than 64 clients are active
    const double little = r.requests_per_s * r.e2e_latency_ms / 1000.0;
    CHECK(little == doctest::Approx(64).epsilon(0.12));
    CHECK(little <= 64.0 + 1e-6);
}

TEST_CASE("serving simulation: more clients never give a shorter TTFT or a higher throughput per user") {
    for (const char* engine : {"sglang", "vllm", "trtllm"}) {
        double last_ttft = 0, last_user = INFINITY;
        for (int c : {1, 4, 16, 64, 256}) {
            moe::Scenario s = moe_test::scenario(std::string(R"({"model":"deepseek-v3","hardware":"h200","parallel":{"tp":1,"dp":8,"ep":8},
                "runtime":{"engine":")") + engine + R"("},
                "serving":{"mode":"aggregated","isl":2048,"osl":256,"concurrency":)" + std::to_string(c) + "}}");
            const moe::Estimate e = moe::evaluate(s, sim_tables());
            REQUIRE(e.ok);
            INFO(engine << " concurrency " << c << ": TTFT " << e.serving.ttft_ms << " per user " << e.serving.tokens_per_s_per_user);
            CHECK(e.serving.ttft_ms >= 0.97 * last_ttft);
            CHECK(e.serving.tokens_per_s_per_user <= 1.03 * last_user);
            last_ttft = e.serving.ttft_ms;
            last_user = e.serving.tokens_per_s_per_user;
        }
    }
}

// The decode worker streams the tokens (Dynamo's disaggregated flow; TRT-LLM's and SGLang's decode workers send the
// prefill's token with their first): the first token arrives at the end of the first decode step, here of one
// request at its prompt's context. An idle decode worker starts the KV pull as the request arrives.
TEST_CASE("serving simulation: disaggregated, one client — TTFT is the prefill forward, the KV transfer and one decode step") {
    const moe::Scenario s = one_client_disaggregated();
    const moe::StepSurface sf = moe::step_surface(s, sim_tables());
    REQUIRE(sf.ok);
    const moe::ServingResult r = moe::simulate(s, sf, ideal());
    REQUIRE(r.computed);
    const double kv_ms = sf.kv_bytes_per_request / (sf.kv_link_GBps * 1e9) * 1000.0;  // ideal: efficiency 1, no latency
    CHECK(r.kv_transfer_ms == doctest::Approx(kv_ms).epsilon(1e-9));
    CHECK(r.ttft_ms == doctest::Approx(sf.prefill.forward_ms(4096) + kv_ms + sf.decode.decode_ms(1, 4096)).epsilon(1e-6));
}

// A prefill worker with attention DP over an MoE model runs its ranks in lockstep: every forward's MoE spans the
// whole EP group, the ranks without a prompt joining it with no tokens (TensorRT-LLM's dummy requests, SGLang's idle
// batches, vLLM's dummy runs). A lone prompt on one of DeepSeek-V3's 8 DP ranks: its rank's attention and
// all-to-all are a full forward's, its routed experts see 1/8 of the EP group's tokens.
TEST_CASE("step model: a prefill forward whose tokens sit on one attention-DP rank") {
    const moe::Scenario base = moe_test::scenario(R"({"model":"deepseek-v3","hardware":"h200","parallel":{"tp":1,"dp":8,"ep":8},
        "runtime":{"engine":"sglang"},"workload":{"phase":"prefill","batch":1,"prefill_tokens":4096}})");
    auto op_us = [](const moe::Estimate& e, const char* name) {
        double us = 0;
        for (const moe::OpRecord& o : e.ops)
            if (o.phase == moe::Phase::prefill && std::string_view(o.name) == name) us += o.time_us * o.count;
        return us;
    };
    moe::Scenario one = base, all_small = base;
    one.workload.prefill_busy_ranks = 1;
    all_small.workload.prefill_tokens = 4096 / 8;
    const moe::Estimate e_all = moe::estimate(base, sim_tables());
    const moe::Estimate e_one = moe::estimate(one, sim_tables());
    const moe::Estimate e_small = moe::estimate(all_small, sim_tables());
    REQUIRE(e_all.ok);
    REQUIRE(e_one.ok);
    REQUIRE(e_small.ok);
    // the routed experts of the EP group's 4,096 tokens: as 8 ranks of 512 each
    CHECK(op_us(e_one, "moe.routed_experts") == doctest::Approx(op_us(e_small, "moe.routed_experts")).epsilon(1e-9));
    CHECK(op_us(e_one, "moe.routed_experts") < 0.5 * op_us(e_all, "moe.routed_experts"));
    // the busy rank's own work: its attention, router and dispatch / combine at its 4,096 tokens
    for (const char* name : {"attn.core", "moe.router", "comm.dispatch", "comm.combine"})
        CHECK(op_us(e_one, name) == doctest::Approx(op_us(e_all, name)).epsilon(1e-9));
    CHECK(e_one.prefill.step_ms < e_all.prefill.step_ms);
    // every rank busy (the field at dp) is the plain forward
    moe::Scenario full = base;
    full.workload.prefill_busy_ranks = 8;
    CHECK(moe::estimate(full, sim_tables()).prefill.step_ms == doctest::Approx(e_all.prefill.step_ms).epsilon(1e-12));
}

TEST_CASE("serving surface: a lockstep prefill worker's forwards with some of its ranks busy") {
    // Kimi-K2.5 NVFP4 on GB200 under TensorRT-LLM, a prefill worker of 4 attention-DP ranks (EP 4): at off-grid
    // sizes, the forward with 1 to 4 busy ranks within 1% of estimate() with that many.
    const moe::Scenario s = moe_test::scenario(R"({"model":"kimi-k2.5-nvfp4","hardware":"gb200","parallel":{"tp":4,"ep":4},
        "runtime":{"engine":"trtllm"},
        "serving":{"mode":"disaggregated","isl":8192,"osl":1024,"concurrency":16,
                   "prefill":{"parallel":{"dp":4,"ep":4},"workers":1,"batch":1},
                   "decode":{"parallel":{"tp":4,"ep":4},"workers":1,"batch":16}}})");
    const moe::StepSurface sf = moe::step_surface(s, sim_tables());
    REQUIRE(sf.ok);
    REQUIRE(sf.prefill.lockstep_dp == 4);
    REQUIRE_FALSE(sf.prefill.forward_moe.x.empty());
    CHECK(sf.decode.forward_moe.x.empty());  // (the decode pool's forwards are not lockstep-priced)
    // `busy` ranks of the four holding T tokens each, at the mean prompt's attention (own_ms -1)
    auto ranks_ms = [](const moe::PoolSurface& p, double T, int busy) {
        double t[4] = {0, 0, 0, 0};
        const double own[4] = {-1, -1, -1, -1};
        for (int i = 0; i < busy; ++i) t[i] = T;
        return p.lockstep_ms(t, own, 4);
    };
    double worst = 0;
    for (int tokens : {700, 1500, 3000, 5000, 7000}) {
        for (int busy : {1, 2, 3, 4}) {
            moe::Scenario x = moe::serving_step_scenario(s, s.serving.prefill.parallel);
            x.workload.phase = moe::PhaseSel::prefill;
            x.workload.batch = 1;
            x.workload.prefill_tokens = tokens;
            x.workload.prefill_busy_ranks = busy;
            const moe::Estimate e = moe::estimate(x, sim_tables());
            REQUIRE(e.ok);
            const double err = std::fabs(ranks_ms(sf.prefill, tokens, busy) / e.prefill.step_ms - 1);
            INFO("T=" << tokens << " busy=" << busy << ": " << ranks_ms(sf.prefill, tokens, busy) << " vs "
                      << e.prefill.step_ms);
            CHECK(err < 0.01);
            worst = std::max(worst, err);
        }
    }
    MESSAGE("lockstep forwards: worst error " << 100 * worst << "%");
    // the simulation's per-rank form (PoolSurface::lockstep_ms): one busy rank, four equal ones, and uneven loads
    // between them (the slowest rank's own part plus the experts over the ranks' tokens)
    for (double T : {1500.0, 7000.0}) {
        const double one[4] = {T, 0, 0, 0}, all[4] = {T, T, T, T}, two[4] = {T, 0.5 * T, 0, 0}, none[4] = {0, 0, 0, 0};
        CHECK(sf.prefill.lockstep_ms(all, none, 4) == doctest::Approx(sf.prefill.forward_ms(T, 0)).epsilon(1e-12));
        CHECK(sf.prefill.lockstep_ms(two, none, 4) > sf.prefill.lockstep_ms(one, none, 4));
        CHECK(sf.prefill.lockstep_ms(two, none, 4) < sf.prefill.lockstep_ms(all, none, 4));
    }
    // one client: its prompt alone on one rank, so its TTFT takes forward_one (ideal engine: no overheads)
    moe::Scenario one = s;
    one.serving.concurrency = 1;
    one.serving.requests_per_client = 2;
    one.serving.length_spread = 0;
    const moe::StepSurface sf1 = moe::step_surface(one, sim_tables());
    REQUIRE(sf1.ok);
    moe::EngineConstants k = ideal();
    const moe::ServingResult r = moe::simulate(one, sf1, k);
    REQUIRE(r.computed);
    const double lone = ranks_ms(sf1.prefill, 8192, 1);
    CHECK(r.ttft_ms == doctest::Approx(lone + r.kv_transfer_ms + sf1.decode.decode_ms(1, 8192)).epsilon(1e-6));
    CHECK(lone < 0.9 * sf1.prefill.forward_ms(8192));
}

// The KV hand-over's descriptors (engine.h, kv_transfer_ms): vLLM's NIXL connector posts one per paged block per
// attention layer and plane, in the blocks vLLM runs (Scenario::kv_block_tokens). Kimi-K2.5 (61 MLA layers: one
// latent plane) at 8,192 tokens: on H200 in the default 16-token blocks 512 x 61 = 31,232 descriptors, 81.2 ms at
// 2.6 us each (vLLM RFC #50913's pulls, engine.cpp); on GB200, where FlashInfer MLA forces 64-token blocks
// (vllm/platforms/cuda.py), 128 x 61 = 7,808. Qwen3-32B (64 GQA layers, keys and values apart) at 4,096 tokens:
// 256 x 64 x 2 = 32,768. TensorRT-LLM's transceiver formats them into one buffer.
TEST_CASE("serving: the KV hand-over pays a descriptor per block per layer where the engine posts them one by one") {
    const moe::Scenario kimi = moe_test::scenario(R"({"model":"kimi-k2.5","hardware":"gb200","runtime":{"engine":"vllm"}})");
    const moe::Scenario kimi_h200 = moe_test::scenario(R"({"model":"kimi-k2.5","hardware":"h200","runtime":{"engine":"vllm"}})");
    const moe::Scenario qwen = moe_test::scenario(R"({"model":"qwen3-32b","hardware":"h100-sxm","runtime":{"engine":"vllm"}})");
    CHECK(kimi.kv_block_tokens() == 64);
    CHECK(kimi_h200.kv_block_tokens() == 16);
    // the RTX PRO 6000 (compute capability 12) starts vLLM's list with Triton MLA: the default 16
    CHECK(moe_test::scenario(R"({"model":"kimi-k2.5","hardware":"rtx-pro-6000","runtime":{"engine":"vllm"}})").kv_block_tokens() == 16);
    // the lanes a request's KV moves over: per stage its distinct shards, min(prefill TP, decode TP, KV heads);
    // Qwen3-235B has 4 KV heads, so TP8 to TP8 is 4 lanes (the other 4 ranks hold copies); MLA one
    auto lanes = [](const char* model, int ptp, int dtp) {
        return moe::kv_lanes(moe_test::scenario(std::string(R"({"model":")") + model + R"(","hardware":"h200",
            "serving":{"mode":"disaggregated","prefill":{"parallel":{"tp":)" + std::to_string(ptp) +
                                             R"(}},"decode":{"parallel":{"tp":)" + std::to_string(dtp) + "}}}}"));
    };
    CHECK(lanes("qwen3-235b-a22b", 8, 8) == 4);
    CHECK(lanes("qwen3-235b-a22b", 2, 8) == 2);
    CHECK(lanes("llama-3.1-70b", 8, 4) == 4);
    CHECK(lanes("deepseek-v3", 8, 8) == 1);
    CHECK(moe::kv_blocks_per_request(kimi, 8192) == 7808);
    CHECK(moe::kv_blocks_per_request(kimi_h200, 8192) == 31232);
    CHECK(moe::kv_blocks_per_request(qwen, 4096) == 32768);
    // a scenario's own page size wins
    moe::Scenario kimi16 = kimi;
    kimi16.runtime.kv_block_tokens = 16;
    CHECK(moe::kv_blocks_per_request(kimi16, 8192) == 31232);
    CHECK(moe::kv_blocks_per_request(qwen, 4097) == 257 * 128);  // a part-filled block is a whole descriptor
    const moe::EngineConstants& vllm = moe::builtin_engines().get(moe::EngineKind::vllm);
    const moe::EngineConstants& trt = moe::builtin_engines().get(moe::EngineKind::trtllm);
    CHECK(vllm.kv_transfer_per_block_us == 2.6);
    CHECK(trt.kv_transfer_per_block_us == 0.0);
    // 1 GB over 900 GB/s at 0.8 of it, the descriptors, the fixed 75 ms
    CHECK(moe::kv_transfer_ms(vllm, 1e9, 900, 31232) == doctest::Approx(1e9 / (900e9 * 0.8) * 1e3 + 81.2032 + 75.0).epsilon(1e-12));
    CHECK(moe::kv_transfer_ms(trt, 1e9, 900, 31232) == doctest::Approx(1e9 / (900e9 * 0.8) * 1e3 + 35.0).epsilon(1e-12));
    CHECK(moe::kv_transfer_ms(vllm, 1e9, 0, 31232) == 0.0);  // no link: aggregated
}

// disagg_serial_requests (vLLM's P/D proxy, trtllm-serve's disaggregated server, Dynamo's PrefillRouter): the decode
// server's request path starts when the prefill server has answered, so it adds to TTFT; the prefill server answers
// once without streaming, so the per-client share is the decode server's alone. Worked, one client, 4,096-token
// prompt, 10 ms + 2 ms per 1,000 prompt tokens + 1 ms per client: in parallel (SGLang's router) one path of
// 10 + 8.192 + 1 = 19.192 ms; in series 10 + 8.192 (prefill server) then 10 + 8.192 + 1 (decode server) = 37.384 ms.
TEST_CASE("serving simulation: disaggregated requests through two servers in series (disagg_serial_requests)") {
    const moe::Scenario s = one_client_disaggregated();
    const moe::StepSurface sf = moe::step_surface(s, sim_tables());
    REQUIRE(sf.ok);
    moe::EngineConstants k = ideal();
    k.request_overhead_ms = 10;
    k.request_overhead_per_ktoken_ms = 2;
    k.request_overhead_per_client_ms = 1;
    k.disagg_serial_requests = false;
    const moe::ServingResult parallel = moe::simulate(s, sf, k);
    k.disagg_serial_requests = true;
    const moe::ServingResult serial = moe::simulate(s, sf, k);
    REQUIRE(parallel.computed);
    REQUIRE(serial.computed);
    CHECK(parallel.ttft_overhead_ms == doctest::Approx(19.192).epsilon(1e-9));
    CHECK(serial.ttft_overhead_ms == doctest::Approx(37.384).epsilon(1e-9));
    CHECK(serial.ttft_ms - parallel.ttft_ms == doctest::Approx(37.384 - 19.192).epsilon(1e-6));
    CHECK(serial.tpot_ms == doctest::Approx(parallel.tpot_ms).epsilon(1e-9));
    // the engines' own flows (engine.cpp): vLLM and TRT-LLM in series, SGLang in parallel
    CHECK(moe::builtin_engines().get(moe::EngineKind::vllm).disagg_serial_requests);
    CHECK(moe::builtin_engines().get(moe::EngineKind::trtllm).disagg_serial_requests);
    CHECK_FALSE(moe::builtin_engines().get(moe::EngineKind::sglang).disagg_serial_requests);
}

// Disaggregated clients are serving.concurrency and the decode batch is each rank's limit (DESIGN 11.3): a file
// without a concurrency fills the slots; twice as many clients as slots wait a whole request for one. In a closed
// loop that keeps S slots busy, N clients cycle in N / S request latencies, so the extra S clients add one request's
// decode time (its TTFT and OSL x TPOT at full slots) to the TTFT, and the throughput does not move.
TEST_CASE("serving simulation: disaggregated clients beyond the decode slots wait for one") {
    const char* json = R"({"model":"qwen3-30b-a3b","hardware":"h200","runtime":{"engine":"ideal"},
        "serving":{"mode":"disaggregated","isl":1024,"osl":256,"requests_per_client":8,
                   "prefill":{"parallel":{"tp":1},"workers":2},"decode":{"parallel":{"tp":1,"dp":1},"workers":1,"batch":16}}})";
    moe::Scenario s = moe_test::scenario(json);
    CHECK(s.serving.concurrency == 16);  // 1 worker x DP 1 x batch 16
    CHECK(moe::scenario_to_json(s, true)["serving"]["concurrency"] == 16);  // written, so a link keeps it
    const moe::Estimate full = moe::evaluate(s, sim_tables());
    REQUIRE(full.ok);
    CHECK(full.serving.peak_running_batch == 16);
    s.serving.concurrency = 32;
    const moe::Estimate twice = moe::evaluate(s, sim_tables());
    REQUIRE(twice.ok);
    CHECK(twice.serving.peak_running_batch == 16);  // the limit holds
    CHECK(twice.serving.output_tokens_per_s_per_gpu == doctest::Approx(full.serving.output_tokens_per_s_per_gpu).epsilon(0.03));
    CHECK(twice.serving.ttft_ms - full.serving.ttft_ms == doctest::Approx(full.serving.e2e_latency_ms).epsilon(0.10));
    s.serving.concurrency = 8;  // fewer clients than slots: half of them run
    const moe::Estimate half = moe::evaluate(s, sim_tables());
    REQUIRE(half.ok);
    CHECK(half.serving.peak_running_batch == 8);
}

// Little's law over the closed loop: N clients, each always inside a request (it sends the next one when the last
// finishes), so the requests finished per second are N over the mean time from send to finish, the request latency.
// Within 15%: the run's ends (the first wave arriving together, the last requests finishing with fewer clients left)
// are inside the makespan the throughput divides by. The disaggregated run holds the whole deployment and counted
// it once per decode rank before (a 6-rank deployment reported 6x its requests/s: 454 where 78 finish).
TEST_CASE("serving simulation: requests/s is the clients over the request latency, both modes") {
    const char* cases[] = {
        R"({"model":"qwen3-30b-a3b","hardware":"b200","parallel":{"dp":2,"ep":2},"precision":{"kv_cache":"fp8","weights":"nvfp4"},
            "runtime":{"a2a_backend":"allgather","engine":"vllm"},
            "serving":{"mode":"disaggregated","isl":2048,"osl":1024,"concurrency":768,"prefill":{"workers":2},
                       "decode":{"batch":128,"parallel":{"dp":2,"ep":2},"workers":3}}})",
        R"({"model":"deepseek-v3","hardware":"h200","parallel":{"dp":8,"ep":8},
            "serving":{"mode":"disaggregated","isl":1024,"osl":512,"prefill":{"parallel":{"tp":8,"ep":8},"workers":1},
                       "decode":{"parallel":{"dp":8,"ep":8},"workers":2,"batch":32}}})",
        R"({"model":"qwen3-30b-a3b","hardware":"h200","parallel":{"dp":2,"ep":2},
            "serving":{"mode":"aggregated","isl":2048,"osl":512,"concurrency":128}})",
    };
    for (const char* json : cases) {
        const moe::Scenario s = moe_test::scenario(json);
        const moe::Estimate e = moe::evaluate(s, sim_tables());
        REQUIRE(e.ok);
        const double little = s.serving.concurrency / (e.serving.e2e_latency_ms / 1000.0);
        INFO(json);
        CHECK(e.serving.requests_per_s == doctest::Approx(little).epsilon(0.15));
        // and the tokens: requests/s x OSL over the GPUs
        CHECK(e.serving.output_tokens_per_s_per_gpu ==
              doctest::Approx(e.serving.requests_per_s * s.serving.osl / e.serving.gpus).epsilon(1e-6));
    }
}

TEST_CASE("serving: the closed form (the planner's screening pass) against the simulation") {
    // The planner ranks by the closed form and re-evaluates its front with the simulation. On decode-bound
    // deployments they agree closely on TPOT and throughput; TTFT under queueing differs more (the simulation
    // is the reference). This pins how far apart they are on the serving presets, and on each with speculative
    // drafts (DeepSeek-V3's MTP, Qwen3-235B's EAGLE-3 head): the closed form counts a request's decode steps as its
    // tokens over the tokens a step gives (it priced every token as a whole verify step before stop 46: 2.3x the
    // simulation's TPOT with 3 drafts at 0.7).
    const char* presets[] = {"deepseek-v3-serving-b200-sglang", "qwen3-235b-a22b-serving-h200-vllm"};
    const char* drafts[] = {R"({"method":"mtp","draft_tokens":3,"acceptance":0.7})", R"({"method":"eagle","draft_tokens":3,"acceptance":0.7})"};
    for (int v = 0; v < 4; ++v) {
        const char* id = presets[v % 2];
        const moe::CatalogEntry* entry = moe::builtin_catalog().scenario(id);
        REQUIRE(entry);
        nlohmann::json j = entry->json;
        if (v >= 2) j["runtime"]["speculative"] = nlohmann::json::parse(drafts[v % 2]);
        const moe::Scenario p = moe_test::scenario(j.dump());
        REQUIRE((v < 2 || p.runtime.speculative.draft_tokens == 3));
        moe::Estimate sim, cf;
        moe::evaluate_into(p, sim_tables(), moe::builtin_engines(), nullptr, sim, false, false, moe::ServingMethod::simulation);
        moe::evaluate_into(p, sim_tables(), moe::builtin_engines(), nullptr, cf, false, false, moe::ServingMethod::closed_form);
        REQUIRE(sim.ok);
        REQUIRE(cf.ok);
        const std::string label = std::string(id) + (v >= 2 ? " with drafts" : "");
        INFO(label << ": TPOT sim " << sim.serving.tpot_ms << " closed " << cf.serving.tpot_ms << "; tok/s/GPU sim "
                << sim.serving.output_tokens_per_s_per_gpu << " closed " << cf.serving.output_tokens_per_s_per_gpu);
        CHECK(cf.serving.tpot_ms == doctest::Approx(sim.serving.tpot_ms).epsilon(0.25));
        CHECK(cf.serving.output_tokens_per_s_per_gpu == doctest::Approx(sim.serving.output_tokens_per_s_per_gpu).epsilon(0.25));
    }
}

TEST_CASE("serving simulation: a benchmark too large to simulate is refused, naming the field") {
    // 10^6 clients x 10 requests would hold 10^7 requests (about 1 GB): refused, where the closed form answers.
    const moe::Scenario s = moe_test::scenario(R"({"model":"qwen3-8b","hardware":"h200",
        "runtime":{"engine":"vllm"},"serving":{"mode":"aggregated","isl":128,"osl":16,"concurrency":1000000}})");
    const moe::Estimate e = moe::evaluate(s, sim_tables());
    REQUIRE_FALSE(e.ok);
    REQUIRE_FALSE(e.errors.empty());
    CHECK(e.errors.front().path == "serving.requests_per_client");
    CHECK(e.errors.front().message.find("200000") != std::string::npos);
    moe::Estimate cf;
    moe::evaluate_into(s, sim_tables(), moe::builtin_engines(), nullptr, cf, false, false, moe::ServingMethod::closed_form);
    CHECK(cf.ok);
    // at the limit it runs: 20,000 clients x 10 requests
    moe::Scenario at = s;
    at.serving.concurrency = 20000;
    CHECK(moe::simulated_requests(at) == 200000);
    CHECK(moe::evaluate(at, sim_tables()).ok);
}

TEST_CASE("serving simulation: KV in whole pages, request by request (seed 002 §10's fragmentation)") {
    // TensorRT-LLM reserves each request's prompt + output (GUARANTEED_NO_EVICT) in 32-token blocks: 900 + 100 tokens
    // take ceil(1,000 / 32) x 32 = 1,024 slots, so a memory-bound rank runs floor(slots / 1,024) requests at once;
    // with 1-token pages the same slots would hold floor(slots / 1,000)
    const std::string j = R"({"model":"qwen3-32b","hardware":"h100-sxm","runtime":{"engine":"trtllm"},
        "serving":{"mode":"aggregated","isl":900,"osl":100,"length_spread":0,"concurrency":512,"requests_per_client":2}})";
    const moe::Scenario s = moe_test::scenario(j);
    const moe::StepSurface sf = moe::step_surface(s, sim_tables());
    REQUIRE(sf.ok);
    CHECK(sf.kv_block_tokens == 32);
    // the slots: the memory model's max batch (a whole number) at the mean context, 950 tokens = 960 in whole blocks
    CHECK(std::fmod(sf.kv_tokens_per_rank, 960.0) == 0.0);
    CHECK(sf.kv_tokens_per_rank >= 960.0 * 8);
    const moe::Estimate e = moe::evaluate(s, sim_tables());
    REQUIRE(e.ok);
    INFO("slots " << sf.kv_tokens_per_rank << ", peak " << e.serving.peak_running_batch);
    CHECK(e.serving.peak_running_batch == std::floor(sf.kv_tokens_per_rank / 1024.0));
    CHECK(e.serving.peak_running_batch < std::floor(sf.kv_tokens_per_rank / 1000.0));
}
