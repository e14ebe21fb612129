// workload.trace (issue 29): a list of requests with prefix ids replayed by the closed-loop clients, its prefix hits
// through the KV tiers; and the prefix cache of a disaggregated deployment's prefill pool (sessions and traces).
#include <doctest/doctest.h>

#include "core/serving/kv_tiers.h"
#include "core/serving/simulate.h"
#include "test_helpers.h"

using moe_test::scenario;

namespace {

// A trace of the prompts `isl` (every answer `osl` tokens), each naming prefix id `ids[i]` ("" none) with prefix_len
// `plen` (0: not given).
std::string trace_json(const std::vector<int>& isl, int osl, const std::vector<std::string>& ids, int plen) {
    std::string t = "[";
    for (std::size_t i = 0; i < isl.size(); ++i) {
        t += (i ? "," : "") + std::string(R"({"isl":)") + std::to_string(isl[i]) + R"(,"osl":)" + std::to_string(osl);
        if (!ids[i].empty()) t += R"(,"prefix_id":")" + ids[i] + "\"";
        if (plen > 0) t += R"(,"prefix_len":)" + std::to_string(plen);
        t += "}";
    }
    return t + "]";
}

moe::Estimate serve(const std::string& j) {
    moe::Estimate e = moe::evaluate(scenario(j), moe::builtin_tables());
    for (const auto& err : e.errors) INFO(err.text());
    REQUIRE(e.ok);
    REQUIRE(e.serving.computed);
    return e;
}

const std::vector<int> kIsl = {1000, 1200, 800, 1500, 1000, 900};  // sum 6,400

std::string one_client(const std::string& trace) {
    return R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm","serving":{"mode":"aggregated","concurrency":1},
        "workload":{"trace":)" + trace + "}}";
}

}  // namespace

TEST_CASE("trace: N requests sharing a prefix of P tokens on one client find (N - 1) x P of sum(isl) in HBM") {
    const std::vector<std::string> same(kIsl.size(), "sys");
    const moe::Estimate e = serve(one_client(trace_json(kIsl, 50, same, 600)));
    // the first request computes the prefix, the 5 others find its 600 tokens: 5 x 600 / 6,400
    CHECK(e.serving.prefix_hit_rate_gpu == doctest::Approx(5.0 * 600 / 6400).epsilon(1e-12));
    CHECK(e.serving.prefix_hit_rate_host == 0);
    CHECK(e.serving.prefix_hit_rate_ssd == 0);
    CHECK(e.serving.kv_bytes_moved_per_token == 0);
    // every request distinct: nothing found, and the prompts take longer to compute
    std::vector<std::string> distinct;
    for (std::size_t i = 0; i < kIsl.size(); ++i) distinct.push_back("doc-" + std::to_string(i));
    const moe::Estimate d = serve(one_client(trace_json(kIsl, 50, distinct, 600)));
    CHECK(d.serving.prefix_hit_rate_gpu == 0);
    CHECK(d.serving.ttft_ms > e.serving.ttft_ms);
    // without prefix_len a prefix id is a conversation: the id's previous request's prompt and answer are found
    // (request i finds min(isl[i-1] + 50, isl[i] - 1)): 1,050 + 799 + 850 + 999 + 899 of 6,400
    const moe::Estimate c = serve(one_client(trace_json(kIsl, 50, same, 0)));
    CHECK(c.serving.prefix_hit_rate_gpu == doctest::Approx((1050.0 + 799 + 850 + 999 + 899) / 6400).epsilon(1e-12));
}

TEST_CASE("trace: the means follow it, the run is its length, and it round-trips") {
    const moe::Scenario s = scenario(one_client(trace_json(kIsl, 50, std::vector<std::string>(kIsl.size(), ""), 0)));
    CHECK(s.serving.mean_isl() == doctest::Approx(6400.0 / 6));
    CHECK(s.serving.mean_osl() == 50);
    CHECK(moe::simulated_requests(s) == 6);
    const nlohmann::json j = moe::scenario_to_json(s, true);
    REQUIRE(j["workload"]["trace"].size() == 6);
    CHECK(j["workload"]["trace"][3]["isl"] == 1500);
    const moe::Scenario back = scenario(j.dump());
    CHECK(back.serving.mean_isl() == s.serving.mean_isl());
    // aggregated with dp 2: one rank replays every other request
    moe::Scenario x = s;
    x.parallel.dp = 2;
    CHECK(moe::simulated_requests(x) == 3);
}

TEST_CASE("trace with attention DP: a prefix id's requests stay on one rank (cache-aware routing)") {
    // ids a a b b a a (600 shared tokens) over dp 2: ids go to ranks in order of first appearance (a -> 0, b -> 1),
    // so the simulated rank replays requests 0, 1, 4, 5 (1,000 + 1,200 + 1,000 + 900 = 4,100 prompt tokens), the last
    // three finding a's 600: 1,800 / 4,100. (Round-robin by request number would give it 0, 2, 4 = a b a: 600 / 2,800.)
    const std::vector<std::string> ids = {"a", "a", "b", "b", "a", "a"};
    std::string j = one_client(trace_json(kIsl, 50, ids, 600));
    j.insert(1, R"("parallel":{"dp":2},)");
    const moe::Scenario s = scenario(j);
    CHECK(moe::simulated_requests(s) == 4);
    const moe::Estimate e = serve(j);
    CHECK(e.serving.prefix_hit_rate_gpu == doctest::Approx(1800.0 / 4100).epsilon(1e-12));
    // requests without an id are dealt round-robin among themselves
    const moe::Scenario plain = scenario(one_client(trace_json(kIsl, 50, {"", "a", "", "a", "", ""}, 0)).insert(1, R"("parallel":{"dp":2},)"));
    CHECK(moe::simulated_requests(plain) == 2 + 2);  // the 1st and 3rd of the four plain ones, and both a's
}

TEST_CASE("closed form (the planner's screen): sessions and a trace compute what an unbounded cache leaves") {
    // the 600-token prefix of 6 requests: the 5 after the first find it, 5 x 600 / 6 = 500 tokens per request (the
    // simulation's 46.9% of 6,400 / 6); a conversation (no prefix_len) finds its previous prompt (and, aggregated, the
    // 50-token answer): (1,050 + 799 + 850 + 999 + 899) / 6 aggregated, (1,000 + 799 + 800 + 999 + 899) / 6 not
    const moe::Scenario p = scenario(one_client(trace_json(kIsl, 50, std::vector<std::string>(6, "sys"), 600)));
    CHECK(p.serving.mean_found_unbounded(true) == doctest::Approx(500.0).epsilon(1e-12));
    const moe::Scenario c = scenario(one_client(trace_json(kIsl, 50, std::vector<std::string>(6, "chat"), 0)));
    CHECK(c.serving.mean_found_unbounded(true) == doctest::Approx((1050.0 + 799 + 850 + 999 + 899) / 6).epsilon(1e-12));
    CHECK(c.serving.mean_found_unbounded(false) == doctest::Approx((1000.0 + 799 + 800 + 999 + 899) / 6).epsilon(1e-12));
    // sessions of 4 turns, 2,000 system + 500 user + 300 answer: the mean prompt 2,000 + 500 x 5/2 + 300 x 3/2 = 3,700,
    // of which 2,000 + (500 + 300) x 3/2 = 3,200 are found: 500 computed, the new user tokens
    const moe::Scenario ss = scenario(R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm","serving":{"mode":"aggregated",
        "osl":300,"concurrency":8},"workload":{"sessions":{"turns":4,"system_prompt_len":2000,"user_len":500}}})");
    CHECK(ss.serving.mean_isl() == doctest::Approx(3700.0));
    CHECK(ss.serving.mean_found_unbounded(true) == doctest::Approx(3200.0));
    // the screen's TTFT with the ids is below the same prompts' without (it computed every token before)
    auto closed_ttft = [](const moe::Scenario& x) {
        moe::Estimate e;
        moe::evaluate_into(x, moe::builtin_tables(), moe::builtin_engines(), nullptr, e, false, false, moe::ServingMethod::closed_form);
        REQUIRE(e.ok);
        return e.serving.ttft_ms;
    };
    const moe::Scenario none = scenario(one_client(trace_json(kIsl, 50, std::vector<std::string>(6, ""), 0)));
    CHECK(closed_ttft(p) < closed_ttft(none));
}

TEST_CASE("trace: a bad entry is refused naming its index and field") {
    auto first_error = [](const std::string& trace, const std::string& extra = "") {
        const moe::ParseResult r = moe::parse_scenario(R"({"serving":{"mode":"aggregated"},"workload":{"trace":)" + trace + "}" + extra + "}",
                                                       moe::builtin_catalog());
        REQUIRE(!r.ok());
        return r.errors.front();
    };
    moe::Issue e = first_error(R"([{"isl":100,"osl":10},{"isl":0,"osl":5}])");
    CHECK(e.path == "workload.trace[1].isl");
    CHECK(e.message.find("positive integer") != std::string::npos);
    CHECK(first_error(R"([{"isl":100,"osl":10.5}])").path == "workload.trace[0].osl");
    CHECK(first_error(R"([{"isl":100}])").path == "workload.trace[0].osl");
    CHECK(first_error(R"([{"isl":100,"osl":1e9}])").path == "workload.trace[0].osl");
    CHECK(first_error(R"([{"isl":100,"osl":1,"prefix_id":"a","prefix_len":101}])").path == "workload.trace[0].prefix_len");
    CHECK(first_error(R"([{"isl":100,"osl":1,"prefix_len":10}])").path == "workload.trace[0].prefix_len");
    CHECK(first_error(R"([{"isl":100,"osl":1,"prefix_id":[1]}])").path == "workload.trace[0].prefix_id");
    CHECK(first_error(R"([{"isl":100,"osl":1,"prefx":1}])").path == "workload.trace[0].prefx");
    CHECK(first_error(R"([5])").path == "workload.trace[0]");
    CHECK(first_error(R"("trace.csv")").message.find("CLI") != std::string::npos);
    // with sessions: one or the other
    e = first_error(R"([{"isl":100,"osl":10}],"sessions":{"turns":3})");
    CHECK(e.path == "workload.trace");
    CHECK(e.message.find("workload.sessions") != std::string::npos);
}

TEST_CASE("disaggregated: the prefill pool's prefix cache cuts TTFT (sessions and a trace)") {
    // Qwen3-30B-A3B, one TP-2 prefill worker and one TP-2 decode worker on H100: 32 clients, 4-turn sessions of a
    // 3,000-token system prompt and 400 user + 200 answer tokens per turn
    const std::string pools = R"("model":"qwen3-30b-a3b","hardware":"h100-sxm","parallel":{"tp":2},)";
    const std::string sv = R"("serving":{"mode":"disaggregated","osl":200,"concurrency":32,"requests_per_client":4,
        "prefill":{"parallel":{"tp":2}},"decode":{"parallel":{"tp":2},"batch":32}})";
    const moe::Scenario ss = scenario("{" + pools + sv + R"(,"workload":{"sessions":{"turns":4,"system_prompt_len":3000,"user_len":400}}})");
    const moe::Estimate with = serve("{" + pools + sv + R"(,"workload":{"sessions":{"turns":4,"system_prompt_len":3000,"user_len":400}}})");
    // the same prompts, as a trace without prefix ids: nothing cached
    moe::SessionLengths len(ss, 32);
    std::vector<int> isl;
    for (std::size_t j = 0; j < 128; ++j) isl.push_back(len.prompt(j, 0.5, 200));
    const std::string sv_trace = R"("serving":{"mode":"disaggregated","concurrency":32,
        "prefill":{"parallel":{"tp":2}},"decode":{"parallel":{"tp":2},"batch":32}})";
    const moe::Estimate without = serve("{" + pools + sv_trace + R"(,"workload":{"trace":)" +
                                        trace_json(isl, 200, std::vector<std::string>(isl.size(), ""), 0) + "}}");
    CHECK(with.serving.prefix_hit_rate_gpu > 0.5);  // the system prompt and the earlier turns' prompts
    CHECK(without.serving.prefix_hit_rate_gpu == 0);
    CHECK(with.serving.ttft_ms < without.serving.ttft_ms);
    bool warned = false;
    for (const std::string& w : with.warnings) warned = warned || w.find("workload.sessions") == 0;
    CHECK(!warned);
    // a trace of one shared prefix: found on the rank that holds it (every request routed there)
    std::vector<int> tisl(64, 4000);
    const moe::Estimate shared = serve("{" + pools + sv_trace + R"(,"workload":{"trace":)" +
                                       trace_json(tisl, 100, std::vector<std::string>(64, "sys"), 3500) + "}}");
    const moe::Estimate apart = serve("{" + pools + sv_trace + R"(,"workload":{"trace":)" +
                                      trace_json(tisl, 100, std::vector<std::string>(64, ""), 0) + "}}");
    CHECK(shared.serving.prefix_hit_rate_gpu > 0.5);
    CHECK(shared.serving.ttft_ms < apart.serving.ttft_ms);
}
