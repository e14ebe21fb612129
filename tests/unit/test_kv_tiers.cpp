// Multi-turn sessions and the KV cache's tiers in the serving simulation (issue 29): the turns' prompts, the LRU
// stack over HBM / host / SSD, the reload at the tier's bandwidth, and what the serving outputs make of them.
#include <doctest/doctest.h>

#include "core/serving/kv_tiers.h"
#include "test_helpers.h"

using moe_test::scenario;

TEST_CASE("sessions: a turn's prompt is the system prompt, the session's history and the new user tokens") {
    const moe::Scenario s = scenario(R"({"serving":{"mode":"aggregated","osl":20},
        "workload":{"sessions":{"turns":3,"system_prompt_len":100,"user_len":50}}})");
    moe::SessionLengths len(s, 2);  // two clients: requests 0, 2, 4 are client 0's turns, 6 its next session
    int isl[8];
    for (int j = 0; j < 8; ++j) isl[j] = len.prompt(std::size_t(j), 0.5, 20);
    CHECK(isl[0] == 150);
    CHECK(isl[2] == 100 + 70 + 50);
    CHECK(isl[4] == 100 + 140 + 50);
    CHECK(isl[6] == 150);  // a new session
    CHECK(isl[1] == 150);
    // the mean turn: 100 + 50 x (3 + 1) / 2 + 20 x (3 - 1) / 2
    CHECK(s.serving.mean_isl() == doctest::Approx((150.0 + 220 + 290) / 3));
}

TEST_CASE("KV tiers: one LRU stack over HBM, host and SSD; reloads at the tier's bandwidth") {
    // 1 MB of KV per token on each GPU: 1 GB of host memory holds 1,000 tokens, the SSD 2,000; reads at 10 and 2 GB/s
    const moe::Scenario s = scenario(R"({"serving":{"mode":"aggregated","concurrency":2},
        "workload":{"sessions":{"turns":4}},
        "runtime":{"kv_offload":{"host_GB":1,"ssd_GB":2,"host_bandwidth_GBps":10,"ssd_bandwidth_GBps":2}}})");
    moe::KvTiers tiers(s, 1e6);
    REQUIRE(tiers.on());
    double pf = 0;
    const long long A = 0, B = 1;  // the sessions' keys
    auto kept = [&](int isl, int osl) { return tiers.kept_tokens(isl, osl, 0, true); };
    // turn 0 of sessions A (client 0) and B (client 1): nothing cached, every token computed
    CHECK(tiers.arrive(A, 100, 0, 0.0, 1e6, pf) == 0.0);
    CHECK(pf == 100);
    tiers.arrive(B, 100, 0, 0.0, 1e6, pf);
    tiers.finish(A, kept(100, 50), 1.0, 1e6);  // A's 150 tokens in HBM
    tiers.finish(B, kept(100, 60), 2.0, 200);  // B's 160 join them; 200 tokens of room: A (least recent) goes to host
    // A's turn 1: 150 tokens read back from host at 10 GB/s = 15 ms; its 50 new tokens computed
    CHECK(tiers.arrive(A, 200, 0, 10.0, 1e6, pf) == doctest::Approx(10.0 + 150 * 1e6 / 10e9 * 1000));
    CHECK(pf == 50);
    // B's turn 1: still in HBM, no wait
    CHECK(tiers.arrive(B, 210, 0, 10.0, 1e6, pf) == 10.0);
    CHECK(pf == 50);
    CHECK(tiers.stats().hit_host == 150);
    CHECK(tiers.stats().hit_gpu == 160);
    // both finish with no HBM room: each goes to host (1,000 tokens holds both); A's turn 2 reads its 250 back
    tiers.finish(A, kept(200, 50), 20.0, 0);
    tiers.finish(B, kept(210, 40), 21.0, 0);
    CHECK(tiers.arrive(A, 300, 0, 30.0, 0, pf) == doctest::Approx(30.0 + 250 * 1e6 / 10e9 * 1000));
    CHECK(tiers.stats().hit_host == 150 + 250);
    // moved: A down (150), A back (150), A and B down (250 + 250), A back (250)
    CHECK(tiers.stats().moved_tokens == 150 + 150 + 250 + 250 + 250);
}

TEST_CASE("KV tiers: a write into SSD takes the drive's link, so a reload behind it waits; host writes do not") {
    // 1 MB of KV per token on each GPU, no HBM room, no host tier: every finished entry is written to SSD at 2 GB/s
    const moe::Scenario s = scenario(R"({"serving":{"mode":"aggregated","concurrency":2},
        "workload":{"sessions":{"turns":4}},
        "runtime":{"kv_offload":{"ssd_GB":10,"ssd_bandwidth_GBps":2}}})");
    moe::KvTiers tiers(s, 1e6);
    double pf = 0;
    const long long A = 0, B = 1;
    tiers.arrive(A, 100, 0, 0.0, 1e6, pf);
    tiers.arrive(B, 100, 0, 0.0, 1e6, pf);
    tiers.finish(A, 150, 1.0, 0);  // A's 150 tokens written to SSD from t = 1: 150 x 1 MB / 2 GB/s = 75 ms, to 76
    tiers.finish(B, 300, 2.0, 0);  // B's 300 queue behind it: 150 ms more, the drive busy until 226
    // A's next turn at t = 10 reads its 150 back after both writes: 226 + 75 = 301 ms
    CHECK(tiers.arrive(A, 200, 0, 10.0, 0, pf) == doctest::Approx(301.0).epsilon(1e-12));
    // with a host tier the same entries go down device-to-host (not timed): A's read from host at 10 GB/s is 15 ms
    const moe::Scenario h = scenario(R"({"serving":{"mode":"aggregated","concurrency":2},
        "workload":{"sessions":{"turns":4}},
        "runtime":{"kv_offload":{"host_GB":10,"host_bandwidth_GBps":10}}})");
    moe::KvTiers ht(h, 1e6);
    ht.arrive(A, 100, 0, 0.0, 1e6, pf);
    ht.arrive(B, 100, 0, 0.0, 1e6, pf);
    ht.finish(A, 150, 1.0, 0);
    ht.finish(B, 300, 2.0, 0);
    CHECK(ht.arrive(A, 200, 0, 10.0, 0, pf) == doctest::Approx(25.0).epsilon(1e-12));
}

TEST_CASE("KV tiers: past the last tier an entry is dropped, the next turn computes its history again") {
    const moe::Scenario s = scenario(R"({"serving":{"mode":"aggregated","concurrency":1},
        "workload":{"sessions":{"turns":2,"system_prompt_len":10}}})");
    moe::KvTiers tiers(s, 1e5);
    double pf = 0;
    tiers.arrive(0, 60, 0, 0.0, 1e6, pf);
    CHECK(pf == 60);                     // the rank's first request computes the system prompt too
    CHECK(tiers.kept_tokens(60, 40, 0, true) == 90);
    tiers.finish(0, 90, 1.0, 50);        // 90 tokens of history, 40 of room beyond the system prompt: dropped
    CHECK(tiers.arrive(0, 150, 0, 2.0, 1e6, pf) == 2.0);
    CHECK(pf == 140);                    // only the system prompt found
    CHECK(tiers.stats().moved_tokens == 0);
}

namespace {
moe::Estimate serve_sessions(const char* kv_offload, double think_s) {
    const std::string j = std::string(R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm",
        "serving":{"mode":"aggregated","osl":300,"concurrency":64,"requests_per_client":10},
        "workload":{"sessions":{"turns":5,"system_prompt_len":2000,"user_len":500,"think_time_s":)") +
                          std::to_string(think_s) + R"(}},"runtime":{"kv_offload":)" + kv_offload + "}}";
    moe::Estimate e = moe::evaluate(scenario(j), moe::builtin_tables());
    REQUIRE(e.ok);
    return e;
}
}  // namespace

TEST_CASE("sessions in the simulation: prefix hits from what is still cached; a host tier turns misses into reloads") {
    // Qwen3-30B-A3B on one H100 (96 KB of KV per token): 64 clients, 5-turn sessions of a 2,000-token system prompt
    // and 500 user + 300 answer tokens per turn. HBM holds ~140k KV tokens: the running requests' and a few idle
    // sessions'.
    const moe::Estimate none = serve_sessions("{}", 30), host = serve_sessions(R"({"host_GB":64})", 30);
    // at most every token but the new user tokens (and the rank's first system prompt) is found:
    // (2,000 + 2,800 + 3,600 + 4,400 + 5,200) / (2,500 + 3,300 + 4,100 + 4,900 + 5,700) = 0.878
    const double best = 18000.0 / 20500.0;
    CHECK(none.serving.prefix_hit_rate_gpu < best);
    CHECK(none.serving.prefix_hit_rate_gpu > 2000.0 / 4100.0);  // at least the system prompt
    CHECK(none.serving.prefix_hit_rate_host == 0);
    CHECK(none.serving.kv_bytes_moved_per_token == 0);
    // 64 GB of host memory per GPU holds every session (64 x ~6k tokens x 96 KB = 38 GB): what HBM drops, host keeps
    CHECK(host.serving.prefix_hit_rate_gpu + host.serving.prefix_hit_rate_host == doctest::Approx(best).epsilon(0.01));
    CHECK(host.serving.prefix_hit_rate_host > 0.2);
    CHECK(host.serving.kv_bytes_moved_per_token > 0);
    CHECK(host.serving.kv_transfer_ms > 0);
    CHECK(host.serving.ttft_ms < none.serving.ttft_ms);
    CHECK(host.serving.output_tokens_per_s_per_gpu > none.serving.output_tokens_per_s_per_gpu);
    // a slower SSD tier in place of host memory: the same tokens found, read back slower
    const moe::Estimate ssd = serve_sessions(R"({"ssd_GB":64,"ssd_bandwidth_GBps":6})", 30);
    CHECK(ssd.serving.prefix_hit_rate_ssd > 0.2);
    CHECK(ssd.serving.prefix_hit_rate_host == 0);
    CHECK(ssd.serving.kv_transfer_ms > host.serving.kv_transfer_ms);
}

TEST_CASE("KV tiers: a tier without a bandwidth is refused naming its field") {
    const moe::ParseResult r = moe::parse_scenario(R"({"hardware":{"base":"h100-sxm","host_bandwidth_GBps":0},
        "runtime":{"kv_offload":{"host_GB":100}}})", moe::builtin_catalog());
    REQUIRE(!r.ok());
    CHECK(r.errors.front().path == "runtime.kv_offload.host_GB");
    const moe::ParseResult q = moe::parse_scenario(R"({"runtime":{"kv_offload":{"ssd_GB":100}}})", moe::builtin_catalog());
    REQUIRE(!q.ok());
    CHECK(q.errors.front().path == "runtime.kv_offload.ssd_GB");
}

TEST_CASE("sessions in the simulation, worked: one client, two 3-turn sessions, every prefix still in HBM") {
    // Qwen3-30B-A3B on one H100 (HBM holds ~140k KV tokens: nothing is ever evicted here), one client, 6 requests:
    // two sessions of 3 turns, system prompt 100, user 50, answer 20 tokens (no length spread). Prompts and what is
    // found (kv_tiers.h: the system prompt once the rank's first request computed it; a session's entry holds its
    // last prompt past the system prompt plus its answer):
    //   session 1: turn 0 150 (nothing: the system prompt is not cached yet), turn 1 100 + 70 + 50 = 220 (100 + 70),
    //              turn 2 100 + 140 + 50 = 290 (100 + 140)
    //   session 2: turn 0 150 (the system prompt, 100), turn 1 220 (170), turn 2 290 (240)
    // hit rate = (0 + 170 + 240 + 100 + 170 + 240) / (2 x (150 + 220 + 290)) = 920 / 1,320 = 0.69697.
    const moe::Estimate e = moe::evaluate(scenario(R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm",
        "serving":{"mode":"aggregated","osl":20,"concurrency":1,"requests_per_client":6},
        "workload":{"sessions":{"turns":3,"system_prompt_len":100,"user_len":50}}})"), moe::builtin_tables());
    REQUIRE(e.ok);
    REQUIRE(e.serving.computed);
    CHECK(e.serving.prefix_hit_rate_gpu == doctest::Approx(920.0 / 1320).epsilon(1e-12));
    CHECK(e.serving.prefix_hit_rate_host == 0);
    CHECK(e.serving.kv_bytes_moved_per_token == 0);
    CHECK(e.serving.kv_transfer_ms == 0);
}

TEST_CASE("KV tiers, worked: two sessions taking turns with HBM room for one; bytes moved per output token") {
    // Qwen3-30B-A3B's KV on one GPU: 48 layers x 4 KV heads x 128 x (K + V) x 2 B = 98,304 B per token. Host tier
    // 1 GB (10,172 tokens: never full here) read back at 10 GB/s. Sessions A and B (3 turns, system 100, user 50,
    // answer 20) take turns on one rank; when a turn finishes HBM has room for the system prompt and one entry.
    const double b = 48.0 * 4 * 128 * 2 * 2;
    CHECK(b == 98304);
    const moe::Scenario s = scenario(R"({"serving":{"mode":"aggregated","osl":20},
        "workload":{"sessions":{"turns":3,"system_prompt_len":100,"user_len":50}},
        "runtime":{"kv_offload":{"host_GB":1,"host_bandwidth_GBps":10}}})");
    moe::KvTiers tiers(s, b);
    REQUIRE(tiers.on());
    const long long A = 0, B = 1;
    double pf = 0;
    auto turn_done = [&](long long key, int isl, double now) {
        const double kept = tiers.kept_tokens(isl, 20, 0, true);  // isl - 100 + 20
        tiers.finish(key, kept, now, 100 + kept);                // room: the system prompt and this entry
    };
    // turn 0: A computes all 150 (the system prompt is not cached yet), B finds the system prompt
    tiers.arrive(A, 150, 0, 0.0, 1e6, pf);
    CHECK(pf == 150);
    tiers.arrive(B, 150, 0, 0.0, 1e6, pf);
    CHECK(pf == 50);
    turn_done(A, 150, 10.0);  // A's 70 in HBM
    turn_done(B, 150, 11.0);  // B's 70 join; room for 70: A (least recent) moves to host (70 tokens moved)
    // turn 1: A reads its 70 back: 70 x 98,304 B / 10 GB/s = 0.688128 ms (70 more moved); B finds 100 + 70 in HBM
    CHECK(tiers.arrive(A, 220, 0, 20.0, 1e6, pf) == doctest::Approx(20.0 + 0.688128).epsilon(1e-12));
    CHECK(pf == 50);
    CHECK(tiers.arrive(B, 220, 0, 20.0, 1e6, pf) == 20.0);
    CHECK(pf == 50);
    turn_done(A, 220, 30.0);  // A's 140
    turn_done(B, 220, 31.0);  // B's 140; A to host (140 moved)
    // turn 2: A reads 140 back, 1.376256 ms (140 moved); B finds 100 + 140
    CHECK(tiers.arrive(A, 290, 0, 40.0, 1e6, pf) == doctest::Approx(40.0 + 1.376256).epsilon(1e-12));
    CHECK(tiers.arrive(B, 290, 0, 40.0, 1e6, pf) == 40.0);
    // found in HBM: 0 + 100 (B0) + 100 (A1's system prompt) + 170 (B1) + 100 (A2) + 240 (B2) = 710 of 1,320 prompt
    // tokens = 0.537879; from host: 70 + 140 = 210 = 0.159091 (together B's and A's 920, as with room for both).
    // Moved: 70 + 70 + 140 + 140 = 420 tokens x 98,304 B over 6 x 20 output tokens = 344,064 B per output token;
    // reload wait (0.688128 + 1.376256) / 6 requests = 0.344064 ms.
    const moe::KvTierStats& st = tiers.stats();
    CHECK(st.prompt_tokens == 1320);
    CHECK(st.hit_gpu == 710);
    CHECK(st.hit_host == 210);
    CHECK(st.moved_tokens == 420);
    moe::ServingResult r;
    const double wait_ms = moe::kv_tier_outputs(st, b, 1, 6, 120, r);
    CHECK(r.prefix_hit_rate_gpu == doctest::Approx(710.0 / 1320).epsilon(1e-12));
    CHECK(r.prefix_hit_rate_host == doctest::Approx(210.0 / 1320).epsilon(1e-12));
    CHECK(r.prefix_hit_rate_ssd == 0);
    CHECK(r.kv_bytes_moved_per_token == doctest::Approx(344064).epsilon(1e-12));
    CHECK(wait_ms == doctest::Approx(0.344064).epsilon(1e-12));
    // a rank of 4 GPUs (TP 4): each GPU moves its quarter of a token's KV, the rank 4 quarters: the same bytes per
    // token of the scenario's per-GPU KV times 4
    moe::ServingResult r4;
    moe::kv_tier_outputs(st, b / 4, 4, 6, 120, r4);
    CHECK(r4.kv_bytes_moved_per_token == doctest::Approx(344064).epsilon(1e-12));
}
