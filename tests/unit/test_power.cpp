// test_power.cpp — the power model (issue 28; docs/model.md "Power and energy"): worked numbers of one step, the
// bounds it keeps, the columns, the serving layer's power and J/token, and bad input.
#include <doctest/doctest.h>

#include "core/step/power.h"
#include "core/plan/plan.h"
#include "test_helpers.h"

namespace {

moe::OpRecord op(moe::Engine engine, double flops, double hbm_bytes, double comm_bytes) {
    moe::OpRecord o;
    o.phase = moe::Phase::decode;
    o.count = 1;
    o.engine = engine;
    o.compute_dtype = moe::Dtype::bf16;
    o.flops = flops;
    o.activation_bytes = hbm_bytes;
    o.comm_bytes = comm_bytes;
    return o;
}

moe::GpuSpec test_gpu() {
    moe::GpuSpec g;
    g.dense_tflops_bf16 = 1000;
    g.hbm_bandwidth_GBps = 4000;
    g.nvlink_bandwidth_GBps = 450;
    g.rdma_bandwidth_GBps = 50;
    g.board_power_w = 700;
    g.idle_power_w = 100;
    return g;
}

}  // namespace

TEST_CASE("power: worked numbers of one step (idle + energy per FLOP, per HBM byte, per link byte)") {
    const moe::GpuSpec g = test_gpu();
    // a 10 ms step: 2 TFLOP of BF16 (2 ms of the 1,000 TFLOPS peak), 8 GB of HBM traffic (2 ms of 4,000 GB/s),
    // 0.9 GB over NVLink (2 ms of 450 GB/s), and 5 GB over RDMA (off the board: not counted)
    const std::vector<moe::OpRecord> ops = {op(moe::Engine::tensor, 2e12, 0, 0), op(moe::Engine::hbm, 0, 8e9, 0),
                                            op(moe::Engine::nvlink, 0, 0, 0.9e9), op(moe::Engine::rdma, 0, 0, 5e9)};
    const moe::StepPower p = moe::step_power(g, ops, moe::Phase::decode, 10.0);
    CHECK(p.tensor_utilisation == doctest::Approx(0.2));
    CHECK(p.hbm_utilisation == doctest::Approx(0.2));
    CHECK(p.link_utilisation == doctest::Approx(0.2));
    // tensor: (700 - 100) x 0.2 / (1550 / 1979) = 153.213 W; HBM: 64 pJ/B x 8e9 B / 0.01 s = 51.2 W;
    // NVLink: 40 pJ/B x 0.9e9 B / 0.01 s = 3.6 W; plus 100 W idle
    CHECK(p.power_w == doctest::Approx(100 + 153.2129 + 51.2 + 3.6).epsilon(1e-6));
    // records of the other phase do not count
    CHECK(moe::step_power(g, ops, moe::Phase::prefill, 10.0).power_w == doctest::Approx(100));
    // ten times the FLOPs: capped at the board power
    const std::vector<moe::OpRecord> hot = {op(moe::Engine::tensor, 2e13, 0, 0)};
    CHECK(moe::step_power(g, hot, moe::Phase::decode, 10.0).power_w == doctest::Approx(700));
    // no idle power given: board / 7
    moe::GpuSpec h = g;
    h.idle_power_w = 0;
    CHECK(moe::idle_power_w(h) == doctest::Approx(100));
    // no board power: no power at all (the outputs stay empty), utilisations still reported
    h.board_power_w = 0;
    CHECK(moe::step_power(h, ops, moe::Phase::decode, 10.0).power_w == 0);
    CHECK(moe::step_power(h, ops, moe::Phase::decode, 10.0).hbm_utilisation == doctest::Approx(0.2));
}

TEST_CASE("power: every NVIDIA and AMD preset's board and idle power; the step stays between them") {
    using namespace moe_test;
    // board power from AIConfigurator systems/*.yaml (H100 / H200 700 W, B200 1000, GB200 1200, B300 1100, GB300
    // 1400, A100 400, L40S 350) and the datasheets (H20 400, H800 700, MI300X 750)
    const std::pair<const char*, double> boards[] = {{"h100-sxm", 700}, {"h200", 700}, {"b200", 1000}, {"gb200", 1200},
                                                     {"b300", 1100},    {"gb300", 1400}, {"a100-sxm-80g", 400},
                                                     {"l40s", 350},     {"h20", 400},   {"h800", 700}, {"mi300x", 750}};
    for (const auto& board : boards) {
        const char* id = board.first;  // (not a structured binding: clang 14 cannot capture one in doctest's lambdas)
        const double watts = board.second;
        const moe::GpuSpec* g = moe::builtin_catalog().gpu(id);
        REQUIRE(g);
        CHECK_MESSAGE(g->board_power_w == watts, id);
        CHECK_MESSAGE(moe::idle_power_w(*g) > 0, id);
        CHECK_MESSAGE(moe::idle_power_w(*g) < 0.3 * watts, id);
        const moe::Estimate e = run(std::string(R"({"model":"qwen3-30b-a3b","hardware":")") + id + R"("})");
        for (const moe::PhaseResult* p : {&e.prefill, &e.decode}) {
            CHECK_MESSAGE(p->power_w_per_gpu >= moe::idle_power_w(*g), id);
            CHECK_MESSAGE(p->power_w_per_gpu <= watts, id);
            CHECK_MESSAGE(p->joules_per_token == doctest::Approx(p->power_w_per_gpu / p->tokens_per_s_per_gpu), id);
        }
        // a prefill forward keeps the tensor cores busier than a decode step, and draws more power
        CHECK_MESSAGE(e.prefill.tensor_utilisation > e.decode.tensor_utilisation, id);
        CHECK_MESSAGE(e.prefill.power_w_per_gpu > e.decode.power_w_per_gpu, id);
    }
    // a GPU without a board power (Apple M3 Max): the power and energy columns are empty
    const moe::Estimate m = run(R"({"model":"qwen3-8b","hardware":"m3-max"})");
    for (const char* name : {"decode.power_w_per_gpu", "decode.joules_per_token", "prefill.power_w_per_gpu"}) {
        const moe::Column* c = moe::find_column(name);
        REQUIRE(c);
        CHECK_MESSAGE(moe::format_value(*c, m).empty(), name);
    }
    CHECK(!moe::format_value(*moe::find_column("decode.hbm_utilisation"), m).empty());
}

TEST_CASE("power: decode energy per token falls as the batch shares the weights") {
    using namespace moe_test;
    double last = 1e9;
    for (int batch : {1, 8, 64, 256}) {
        const moe::Estimate e = run(R"({"model":"llama-3.1-70b","hardware":"h200","parallel":{"tp":4},
            "workload":{"phase":"decode","batch":)" + std::to_string(batch) + "}}");
        INFO("batch " << batch);
        CHECK(e.decode.joules_per_token < last);
        last = e.decode.joules_per_token;
    }
}

TEST_CASE("power: the serving layer's power and J per token (issue 28)") {
    using namespace moe_test;
    const char* base = R"({"model":"qwen3-30b-a3b","hardware":"h200","parallel":{"tp":2},
        "serving":{"mode":"aggregated","isl":2048,"osl":512,"concurrency":CONC}})";
    double last = 1e9;
    for (int conc : {4, 32, 128}) {
        std::string text = base;
        text.replace(text.find("CONC"), 4, std::to_string(conc));
        const moe::Estimate e = moe::evaluate(scenario(text), moe::builtin_tables());
        REQUIRE(e.ok);
        const moe::ServingResult& r = e.serving;
        INFO("concurrency " << conc);
        CHECK(r.power_w_per_gpu > 100);   // H200's idle
        CHECK(r.power_w_per_gpu <= 700);  // its board
        CHECK(r.joules_per_token == doctest::Approx(r.power_w_per_gpu / r.output_tokens_per_s_per_gpu));
        // prompt and output tokens counted alike: 2048 + 512 per request, 512 of them output
        CHECK(r.joules_per_token_total == doctest::Approx(r.joules_per_token * 512.0 / 2560.0));
        // more clients share the weights and the idle power: less energy per token
        CHECK(r.joules_per_token < last);
        last = r.joules_per_token;
        const moe::Column* c = moe::find_column("serving.joules_per_token");
        REQUIRE(c);
        CHECK(moe::format_value(*c, e) == moe::format_number(r.joules_per_token));
    }
    // disaggregated: both pools priced, between idle and board power
    const moe::Estimate d = moe::evaluate(scenario(R"({"model":"qwen3-30b-a3b","hardware":"h200",
        "serving":{"mode":"disaggregated","isl":2048,"osl":512,"prefill":{"parallel":{"tp":2},"workers":1,"batch":1},
                   "decode":{"parallel":{"tp":2},"workers":1,"batch":32}}})"), moe::builtin_tables());
    REQUIRE(d.ok);
    CHECK(d.serving.power_w_per_gpu > 100);
    CHECK(d.serving.power_w_per_gpu <= 700);
    CHECK(d.serving.joules_per_token == doctest::Approx(d.serving.power_w_per_gpu / d.serving.output_tokens_per_s_per_gpu));
}

TEST_CASE("power: bad GPU power fields name the field") {
    for (const char* text : {R"({"hardware":{"base":"h200","board_power_w":-5}})", R"({"hardware":{"base":"h200","idle_power_w":800}})"}) {
        moe::ParseResult r = moe::parse_scenario(text, moe::builtin_catalog());
        INFO(text);
        REQUIRE(!r.errors.empty());
        CHECK(r.errors[0].path.find("hardware.") == 0);
        CHECK(r.errors[0].path.find("power_w") != std::string::npos);
    }
}

TEST_CASE("plan: --objective cost ranks the front by USD per million output tokens (issue 28)") {
    // two GPUs' rows: A makes 100 tokens/s per GPU at $1.80/h ($5.00 per million), B 150 at $3.24/h ($6.00)
    moe::PointResult a, b;
    for (moe::PointResult* r : {&a, &b}) r->ok = r->fits = true, r->tokens_per_s_per_user = 20;
    a.output_tokens_per_s_per_gpu = 100, a.usd_per_mtok = moe::usd_per_mtok(1.80, 100);
    b.output_tokens_per_s_per_gpu = 150, b.usd_per_mtok = moe::usd_per_mtok(3.24, 150);
    CHECK(a.usd_per_mtok == doctest::Approx(5.0));
    CHECK(b.usd_per_mtok == doctest::Approx(6.0));
    CHECK(moe::objective_value(a, moe::PlanObjective::cost) == doctest::Approx(200000));  // tokens per USD
    moe::PlanPoint p;
    moe::PlanFront by_throughput(moe::Sla{}, moe::PlanObjective::throughput), by_cost(moe::Sla{}, moe::PlanObjective::cost);
    for (moe::PlanFront* f : {&by_throughput, &by_cost}) {
        f->add(0, p, a, /*group=*/0);
        f->add(0, p, b, /*group=*/1);
    }
    // throughput: B's 150 tokens/s dominates A's 100 at the same per-user rate; cost: A's $5 dominates B's $6
    REQUIRE(by_throughput.rows().size() == 1);
    CHECK(by_throughput.rows()[0].group == 1);
    REQUIRE(by_cost.rows().size() == 1);
    CHECK(by_cost.rows()[0].group == 0);
    // summarize_plan agrees with the streaming front
    const moe::PlanSummary s = moe::summarize_plan({p, p}, {a, b}, moe::Sla{}, moe::PlanObjective::cost);
    REQUIRE(s.front.size() == 1);
    CHECK(s.front[0] == 0);
    // the planner prices every point at the scenario's GPU-hour price (H200's example, $3.59)
    const moe::Scenario h200 = moe_test::scenario(R"({"model":"qwen3-8b","hardware":"h200"})");
    const moe::PointResult r = moe::evaluate_point(h200, moe::builtin_tables());
    REQUIRE(r.ok);
    CHECK(r.usd_per_mtok == doctest::Approx(moe::usd_per_mtok(3.59, r.output_tokens_per_s_per_gpu)));
    moe::PlanObjective o;
    CHECK(moe::parse_plan_objective("cost", o));
    CHECK(o == moe::PlanObjective::cost);
    CHECK(!moe::parse_plan_objective("cheap", o));
}
