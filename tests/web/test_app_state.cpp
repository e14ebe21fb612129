// test_app_state.cpp — the page's logic without ImGui or a browser (web/app_state.cpp): fragments in, edits,
// recompute, and the window.__moe hook. Built natively and as wasm (ctest: web_state_native / web_state_wasm).
#include <doctest/doctest.h>

#include <cmath>

#include "core/moe.h"
#include "web/app_state.h"

namespace {

web::AppState make_state() { return web::AppState(moe::builtin_catalog(), moe::builtin_tables()); }

std::string fragment_of(const char* scenario_json) {
    moe::ParseResult r = moe::parse_scenario(scenario_json, moe::builtin_catalog());
    REQUIRE(r.ok());
    return "#" + moe::encode_fragment(r.scenario);
}

}  // namespace

TEST_CASE("a fragment sets the scenario; recompute publishes every output column") {
    web::AppState st = make_state();
    web::load_fragment(st, fragment_of(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"dp":8,"ep":8}})"));
    CHECK(st.notice.empty());
    CHECK(st.dirty);
    CHECK_FALSE(st.fragment_dirty);  // a link is kept as it is until the user edits
    web::recompute(st);
    CHECK_FALSE(st.dirty);
    CHECK(st.publish_pending);
    const nlohmann::json hook = nlohmann::json::parse(web::hook_json(st));
    CHECK(hook["scenario"]["model"] == "deepseek-v3");
    CHECK(hook["scenario"]["parallel"]["ep"] == 8);
    for (const moe::Column& c : moe::output_columns()) CHECK_MESSAGE(hook["results"].contains(c.name), c.name);
    CHECK(hook["results"]["status"] == "ok");
    CHECK(hook["results"] == moe::estimate_to_flat_json(moe::estimate(st.scenario, moe::builtin_tables())));
    CHECK(hook["ui"].is_object());
    CHECK(hook["notice"] == "");
}

TEST_CASE("issue 29: a scenario with an inline workload.trace evaluates in the page; a link too long for one says why") {
    web::AppState st = make_state();
    const std::string trace = R"([{"isl":1000,"osl":50,"prefix_id":"sys","prefix_len":600},{"isl":1200,"osl":50,"prefix_id":"sys","prefix_len":600}])";
    web::load_fragment(st, fragment_of((R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm","serving":{"mode":"aggregated","concurrency":1},
        "workload":{"trace":)" + trace + "}}").c_str()));
    CHECK(st.notice.empty());
    REQUIRE(st.scenario.serving.trace.size() == 2);
    web::recompute(st);
    const nlohmann::json hook = nlohmann::json::parse(web::hook_json(st));
    CHECK(hook["scenario"]["workload"]["trace"].size() == 2);
    CHECK(hook["results"]["serving.prefix_hit_rate_gpu"] == doctest::Approx(600.0 / 2200));
    CHECK(hook["results"] == moe::estimate_to_flat_json(moe::evaluate(st.scenario, moe::builtin_tables())));
    // 20,000 requests: more than a link holds
    std::string big = "[";
    for (int i = 0; i < 20000; ++i) big += std::string(i ? "," : "") + R"({"isl":1000,"osl":50,"prefix_id":)" + std::to_string(i) + "}";
    web::load_fragment(st, fragment_of((R"({"serving":{"mode":"aggregated"},"workload":{"trace":)" + big + "]}}").c_str()));
    REQUIRE_FALSE(st.notice_details.empty());
    CHECK(st.notice_details.front().find("workload.trace") != std::string::npos);
}

TEST_CASE("a bad or hostile fragment gives the defaults and a notice naming the problem") {
    const moe::Scenario defaults = moe::decode_fragment("", moe::builtin_catalog()).scenario;
    for (const char* frag : {"#s=!!!", "#s=PGltZyBzcmM9eD4", "#x=1", "#s=eyJtb2RlbCI6Im5vLXN1Y2gifQ"}) {
        CAPTURE(frag);
        web::AppState st = make_state();
        web::load_fragment(st, frag);
        CHECK_FALSE(st.notice.empty());
        CHECK_FALSE(st.notice_details.empty());
        CHECK(moe::scenario_to_json(st.scenario, true) == moe::scenario_to_json(defaults, true));
        web::recompute(st);
        CHECK(st.estimate.ok);
        // The hook is valid JSON even when the details quote invalid UTF-8 from the link.
        CHECK_FALSE(nlohmann::json::parse(web::hook_json(st), nullptr, false).is_discarded());
    }
}

TEST_CASE("an edit marks the scenario and the URL dirty; a refused value changes nothing") {
    web::AppState st = make_state();
    web::load_fragment(st, "");
    web::recompute(st);
    const nlohmann::json before = moe::scenario_to_json(st.scenario, false);

    CHECK(web::edit_field(st, "workload.batch", 256));
    CHECK(st.dirty);
    CHECK(st.fragment_dirty);
    CHECK(st.scenario.workload.batch == 256);
    const double tpot_64 = st.estimate.decode.tpot_ms;
    web::recompute(st);
    CHECK(st.estimate.decode.tpot_ms != tpot_64);

    st.dirty = st.fragment_dirty = false;
    const nlohmann::json edited = moe::scenario_to_json(st.scenario, false);
    CHECK_FALSE(web::edit_field(st, "workload.batch", -3));
    CHECK_FALSE(web::edit_field(st, "workload.no_such_field", 1));
    CHECK_FALSE(st.edit_errors.empty());
    CHECK_FALSE(st.dirty);
    CHECK(moe::scenario_to_json(st.scenario, false) == edited);
    CHECK(edited != before);

    // The written fragment reads back as the edited scenario.
    web::AppState other = make_state();
    web::load_fragment(other, "#" + moe::encode_fragment(st.scenario));
    CHECK(other.notice.empty());
    CHECK(moe::scenario_to_json(other.scenario, false) == edited);
}

// Found by the hardening engineer under ASan: a pasted config nested a million levels deep overflowed the stack when
// the page printed it back into the config box. It is now refused with a notice before parsing.
TEST_CASE("a pasted JSON nested deeper than 64 levels is refused with a notice, not a crash") {
    web::AppState st = make_state();
    std::string deep = R"({"hidden_size":1,"x":)" + std::string(200000, '[') + std::string(200000, ']') + "}";
    CHECK(web::load_user_json(st, deep, "pasted text").empty());
    CHECK(st.notice.find("deeper than 64") != std::string::npos);
    // a quoted bracket run is not nesting
    std::string quoted = R"({"workload":{"batch":8},"description":")" + std::string(100, '[') + R"("})";
    CHECK(st.notice.find("deeper") != std::string::npos);
    web::load_user_json(st, quoted, "pasted text");
    CHECK(st.notice.find("deeper") == std::string::npos);
}

// Issue 27: a number beyond a double (1e999) is a notice with its line, column and field, not "not a JSON object".
TEST_CASE("a pasted scenario or config with 1e999 is refused with a notice naming where") {
    web::AppState st = make_state();
    CHECK(web::load_user_json(st, R"({"model":"deepseek-v3","workload":{"batch":1e999}})", "pasted text").empty());
    CHECK(st.notice == "The pasted text has a number out of range: line 1, column 44: workload.batch: 1e999 is out of range: "
                       "a number is at most 1.8e308 in magnitude");
    CHECK_FALSE(web::apply_model_config(st, R"({"hidden_size": 1e999})"));
    REQUIRE(st.config_errors.size() == 1);
    CHECK(st.config_errors[0].rfind("line 1, column 17: hidden_size: 1e999 is out of range", 0) == 0);
}

TEST_CASE("serving: recompute sweeps the deployment over its concurrency; step sweeps skip the serving layer") {
    web::AppState st = make_state();
    web::load_fragment(st, fragment_of(R"({"model":"llama-3.1-70b","hardware":"h200","parallel":{"tp":4},"runtime":{"engine":"vllm"},
                                           "serving":{"mode":"aggregated","isl":1024,"osl":1024,"concurrency":64}})"));
    web::recompute(st);
    REQUIRE(st.estimate.ok);
    CHECK(st.estimate.serving.computed);
    CHECK(st.requested_tab == 4);  // a link that serves opens the Serving tab
    // the Serving tab's sweep: serving.concurrency, 64 points, every one evaluated with the serving layer
    REQUIRE(st.serving.size() == 64);
    CHECK(web::sweep_axis_paths(st.serving.spec) == std::vector<std::string>{"serving.concurrency"});
    const int ttft = web::numeric_column_index("serving.ttft_ms");
    REQUIRE(ttft >= 0);
    for (std::size_t i = 0; i < st.serving.size(); ++i) CHECK(std::isfinite(st.serving.value(size_t(ttft), i)));
    // at the current concurrency the sweep gives the estimate's own number
    for (std::size_t i = 0; i < st.serving.size(); ++i)
        if (st.serving.x[i] == 64) CHECK(st.serving.value(size_t(ttft), i) == st.estimate.serving.ttft_ms);
    // the Sweep chart over batch (a step column): no serving layer, so the serving columns are empty there
    CHECK_FALSE(st.sweep.spec.serving);
    CHECK(std::isnan(st.sweep.value(size_t(ttft), 0)));
    // a serving column on the Sweep chart turns it on; dragging the concurrency does not recompute the Serving sweep
    web::set_sweep_y(st, "serving.ttft_ms");
    web::recompute(st);
    CHECK(st.sweep.spec.serving);
    CHECK(std::isfinite(st.sweep.value(size_t(ttft), 0)));
    const std::string key = st.serving_key;
    REQUIRE(web::edit_field(st, "serving.concurrency", 40));  // inside the same range (1 .. 256)
    web::recompute(st);
    CHECK(st.serving_key == key);
    // a serving axis in the link; its CSV header names the path
    web::set_sweep_axis(st, web::SweepAxis::concurrency);
    web::recompute(st);
    CHECK(web::sweep_y_column(st) == "serving.output_tokens_per_s_per_gpu");
    CHECK(web::current_sweep_csv(st).rfind("serving.concurrency,", 0) == 0);
    CHECK(web::build_fragment(st).find("&x=concurrency") != std::string::npos);
    // disaggregated: the pools' fields nest in the compact JSON, the Serving sweep is over the clients too
    REQUIRE(web::edit_field(st, "serving.mode", "disaggregated"));
    REQUIRE(web::edit_field(st, "serving.decode.parallel.tp", 4));
    REQUIRE(web::edit_field(st, "serving.prefill.parallel.tp", 4));
    web::recompute(st);
    CHECK(web::sweep_axis_paths(st.serving.spec) == std::vector<std::string>{"serving.concurrency"});
    const nlohmann::json hook = nlohmann::json::parse(web::hook_json(st));
    CHECK(hook["scenario"]["serving"]["decode"]["parallel"]["tp"] == 4);
    web::AppState st2 = make_state();
    web::load_fragment(st2, "#" + web::build_fragment(st));
    CHECK(moe::scenario_to_json(st2.scenario, true) == moe::scenario_to_json(st.scenario, true));
    // serving off: no Serving sweep
    REQUIRE(web::edit_field(st, "serving.mode", "off"));
    web::recompute(st);
    CHECK(st.serving.size() == 0);
}

TEST_CASE("plan: settings round-trip through the URL; a link with &plan= runs it; a loaded row gives the same plan") {
    web::PlanSettings p;
    p.gpus = 16;
    p.tpot_ms = 42.5;
    p.ttft_ms = 2000;
    p.disaggregated = false;
    p.mtp = false;
    web::PlanSettings q;
    REQUIRE(web::plan_settings_from_text(web::plan_settings_text(p), q));
    CHECK(q == p);
    CHECK(web::plan_settings_text(p) == "g16_ttft2000_tpot42.5_agg_fmt_tbo");
    // --sla-at p90, --hardware and --engine lists
    p.sla_p90 = true;
    p.hardware = {"h200", "b200"};
    p.engines = {moe::ServingEngine::sglang, moe::ServingEngine::trtllm};
    REQUIRE(web::plan_settings_from_text(web::plan_settings_text(p), q));
    CHECK(q == p);
    CHECK(web::plan_settings_text(p) == "g16_ttft2000_tpot42.5_agg_fmt_tbo_p90_hwh200+b200_ensglang+trtllm");
    for (const char* bad : {"", "g0_agg", "g8", "g8_agg_x", "g8_tpot-3_agg", "g8_tpotnan_agg", "g1.5_agg", "g8_tpot1e999_agg",
                            "g8_agg_hw", "g8_agg_hwh200++b200", "g8_agg_hwh200+h200", "g8_agg_hwH200", "g8_agg_enfoo",
                            "g8_agg_ensglang+sglang", "g8_agg_en"})
        CHECK_MESSAGE(!web::plan_settings_from_text(bad, q), bad);

    web::AppState st = make_state();
    const std::string frag = fragment_of(R"({"model":"qwen3-30b-a3b","hardware":"h200"})") + "&plan=g8_tpot40_agg_dis_fmt";
    web::load_fragment(st, frag);
    CHECK(st.plan.in_url);
    CHECK(st.plan.run_requested);
    CHECK(st.requested_tab == 5);
    CHECK(st.plan.settings.gpus == 8);
    web::recompute(st);
    web::start_plan(st);
    CHECK(st.plan.running);
    while (web::step_plan(st, 1000)) {
    }
    REQUIRE(web::plan_done(st.plan));
    REQUIRE(!st.plan.front.empty());
    CHECK(web::build_fragment(st).find("&plan=g8_tpot40_agg_dis_fmt") != std::string::npos);
    nlohmann::json hook = nlohmann::json::parse(web::hook_json(st));
    CHECK(hook["plan"]["state"] == "done");
    CHECK(hook["plan"]["front"].size() == st.plan.front.size());
    CHECK(hook["plan"]["space"]["mtp_draft_tokens"] == nlohmann::json::array({0}));
    CHECK(hook["plan"]["engine"] == "sglang");
    // the best row into the calculator: its serving numbers are the plan's
    const std::vector<moe::PlanFront::Row> front = st.plan.front;
    const moe::PointResult best = front[0].result;
    web::load_plan_row(st, 0);
    CHECK(st.dirty);
    web::recompute(st);
    CHECK(st.estimate.serving.output_tokens_per_s_per_gpu == best.output_tokens_per_s_per_gpu);
    CHECK(st.estimate.serving.tpot_ms == best.tpot_ms);
    CHECK(st.estimate.serving.tpot_ms <= 40);
    // running the plan again from the loaded row's scenario finds the same front
    web::start_plan(st);
    while (web::step_plan(st, 1000)) {
    }
    REQUIRE(st.plan.front.size() == front.size());
    for (std::size_t k = 0; k < front.size(); ++k) CHECK(st.plan.front[k].index == front[k].index);
    CHECK(st.plan.front[0].result.output_tokens_per_s_per_gpu == best.output_tokens_per_s_per_gpu);
}

TEST_CASE("plan over GPU types and engines (plan --hardware --engine), the SLA at p90: one front over every search") {
    web::AppState st = make_state();
    web::load_fragment(st, fragment_of(R"({"model":"qwen3-30b-a3b","hardware":"h200","runtime":{"engine":"sglang"}})") +
                               "&plan=g8_tpot30_agg_fmt");
    web::recompute(st);
    auto run = [&] {
        web::start_plan(st);
        REQUIRE(st.plan.error.empty());
        while (web::step_plan(st, 1000)) {
        }
        REQUIRE(web::plan_done(st.plan));
    };
    run();
    const std::vector<moe::PlanFront::Row> single = st.plan.front;
    const std::uint64_t single_points = st.plan.points;
    REQUIRE(!single.empty());
    // the scenario's own GPU and engine named as lists: the same plan
    st.plan.settings.hardware = {"h200"};
    st.plan.settings.engines = {moe::ServingEngine::sglang};
    run();
    REQUIRE(st.plan.front.size() == single.size());
    for (std::size_t k = 0; k < single.size(); ++k)
        CHECK(st.plan.front[k].result.output_tokens_per_s_per_gpu == single[k].result.output_tokens_per_s_per_gpu);
    // two GPUs x two engines: four searches, hardware outer, one front no worse than any one search's
    st.plan.settings.hardware = {"h200", "b200"};
    st.plan.settings.engines = {moe::ServingEngine::sglang, moe::ServingEngine::vllm};
    run();
    REQUIRE(st.plan.searches.size() == 4);
    CHECK(st.plan.search_hardware == std::vector<std::string>{"h200", "h200", "b200", "b200"});
    CHECK(st.plan.searches[1].base().runtime.engine == moe::EngineKind::vllm);
    CHECK(st.plan.searches[2].base().gpu.id == "b200");
    CHECK(st.plan.points > single_points);
    std::uint64_t counted = 0;
    for (std::uint64_t c : st.plan.counts) counted += c;
    CHECK(counted == st.plan.points);
    CHECK(st.plan.front[0].result.output_tokens_per_s_per_gpu >= single[0].result.output_tokens_per_s_per_gpu);
    nlohmann::json hook = nlohmann::json::parse(web::hook_json(st));
    CHECK(hook["plan"]["hardware"] == nlohmann::json::array({"h200", "b200"}));
    CHECK(hook["plan"]["engines"] == nlohmann::json::array({"sglang", "vllm"}));
    const std::string csv = web::plan_front_csv(st, "https://x/");
    CHECK(csv.rfind(moe::plan_csv_header(), 0) == 0);
    // at p90: fewer candidates, and every front row's band high end meets the SLA
    const std::uint64_t mean_candidates = st.plan.counts[int(moe::Verdict::candidate)];
    st.plan.settings.sla_p90 = true;
    run();
    CHECK(st.plan.counts[int(moe::Verdict::candidate)] < mean_candidates);
    for (const moe::PlanFront::Row& r : st.plan.front) {
        CHECK(r.result.tpot_ms_p90 > 0);
        CHECK(r.result.tpot_ms_p90 <= 30);
    }
    // a row loads with its own GPU and engine
    const std::size_t last = st.plan.front.size() - 1;
    const moe::PlanSearch& s = web::plan_search_of(st.plan, st.plan.front[last]);
    web::load_plan_row(st, int(last));
    CHECK(st.scenario.gpu.id == s.base().gpu.id);
    CHECK(st.scenario.runtime.engine == s.base().runtime.engine);
}

TEST_CASE("issue 26: one set of request lengths, the serving workload's steps, pools from the layout, use N GPUs") {
    web::AppState st = make_state();
    web::load_fragment(st, fragment_of(R"({"model":"qwen3-235b-a22b","hardware":"h200","parallel":{"tp":8},
                                           "workload":{"prompt_len":2048,"output_len":512}})"));
    web::recompute(st);
    REQUIRE(st.estimate.ok);
    CHECK_FALSE(st.steps.on);
    CHECK(&web::shown_estimate(st) == &st.estimate);
    // serving on: the Workload's lengths become ISL / OSL; the steps shown are at them and at the running batch
    REQUIRE(web::edit_field(st, "serving.mode", "aggregated"));
    CHECK(st.scenario.serving.isl == 2048);
    CHECK(st.scenario.serving.osl == 512);
    web::recompute(st);
    REQUIRE(st.steps.on);
    const moe::Scenario& steps = web::shown_scenario(st);
    CHECK(steps.serving.mode == moe::ServingMode::off);
    CHECK(steps.workload.prompt_len == 2048);
    CHECK(steps.workload.output_len == 512);
    CHECK(steps.workload.batch == int(std::lround(st.estimate.serving.running_batch)));
    CHECK(moe::estimate_to_flat_json(web::shown_estimate(st)) == moe::estimate_to_flat_json(moe::estimate(steps, moe::builtin_tables())));
    // an ISL edit keeps the Workload's prompt equal
    REQUIRE(web::edit_field(st, "serving.isl", 4096));
    CHECK(st.scenario.workload.prompt_len == 4096);
    // disaggregated: both pools start from the TP 8 layout (split from its 8 GPUs, or one worker each of it)
    REQUIRE(web::edit_field(st, "serving.mode", "disaggregated"));
    const moe::ServingConfig& sv = st.scenario.serving;
    const int pw = sv.prefill.parallel.tp * sv.prefill.parallel.dp, dw = sv.decode.parallel.tp * sv.decode.parallel.dp;
    const int total = sv.prefill.workers * pw + sv.decode.workers * dw;
    CHECK((total == 8 || (pw == 8 && dw == 8 && total == 16)));
    web::recompute(st);
    CHECK(st.steps.disaggregated);
    CHECK(web::shown_scenario(st).parallel.tp == sv.decode.parallel.tp);
    // fit the pools to 32 GPUs: 32 GPUs, and a deployment that fits
    REQUIRE(web::fit_pools_to(st, 32));
    web::recompute(st);
    CHECK(st.estimate.serving.gpus == 32);
    CHECK(st.estimate.serving.fits);
    CHECK_FALSE(web::fit_pools_to(st, 1));
    CHECK_FALSE(st.fit_pools_error.empty());
    // back to off: the served lengths stay the Workload's
    REQUIRE(web::edit_field(st, "serving.mode", "off"));
    CHECK(st.scenario.workload.prompt_len == 4096);

    // a model that does not fit: the smallest GPU count that holds it, and "use N GPUs" fits
    web::load_fragment(st, fragment_of(R"({"model":"deepseek-v3","hardware":"h200"})"));
    web::recompute(st);
    REQUIRE(st.estimate.ok);
    CHECK_FALSE(st.estimate.memory.fits);
    REQUIRE(st.fit_checked);
    REQUIRE(st.fit.ok);
    CHECK(st.fit.gpus >= 7);  // the weights alone need 7 H200s (the CLI's warning)
    const int n = st.fit.gpus;
    web::use_fit_layout(st);
    web::recompute(st);
    CHECK(st.scenario.world() == n);
    CHECK(st.estimate.memory.fits);
    CHECK_FALSE(st.fit_checked);
    const nlohmann::json hook = nlohmann::json::parse(web::hook_json(st));
    CHECK(hook["fits"] == true);
}

TEST_CASE("issue 29: a dropped .csv / .jsonl trace becomes the workload (serving on); a bad line is a notice naming it") {
    web::AppState st = make_state();
    web::load_fragment(st, fragment_of(R"({"model":"deepseek-v3","hardware":"h800","parallel":{"tp":1,"dp":32,"ep":32},
        "workload":{"batch":64},"runtime":{"two_batch_overlap":true}})"));
    const std::string msg = web::load_user_json(
        st, "isl,osl,prefix_id,prefix_len\n1000,64,sys,600\n1200,64,,\n800,80,sys,600\n1500,64,sys,600\n", "file trace.csv");
    INFO(st.notice);
    INFO((st.notice_details.empty() ? std::string() : st.notice_details[0]));
    CHECK(msg == "Serving the 4 requests of trace.csv");
    CHECK(st.last_action == "load:trace");
    CHECK(st.scenario.serving.mode == moe::ServingMode::aggregated);
    REQUIRE(st.scenario.serving.trace.size() == 4);
    CHECK(st.scenario.serving.mean_isl() == 1125);
    // JSONL too, and the same requests give the same scenario
    const moe::Scenario csv = st.scenario;
    CHECK(!web::load_user_json(st, "{\"isl\":1000,\"osl\":64,\"prefix_id\":\"sys\",\"prefix_len\":600}\n{\"isl\":1200,\"osl\":64}\n"
                                   "{\"isl\":800,\"osl\":80,\"prefix_id\":\"sys\",\"prefix_len\":600}\n"
                                   "{\"isl\":1500,\"osl\":64,\"prefix_id\":\"sys\",\"prefix_len\":600}\n", "file t.jsonl").empty());
    CHECK(moe::scenario_to_json(st.scenario, true) == moe::scenario_to_json(csv, true));
    // a bad line: nothing changes, the notice names the file and line
    CHECK(web::load_user_json(st, "isl,osl\n1000,64\n-3,64\n", "file bad.csv").empty());
    REQUIRE(!st.notice_details.empty());
    CHECK(st.notice_details[0].find("bad.csv line 3: isl") != std::string::npos);
    CHECK(moe::scenario_to_json(st.scenario, true) == moe::scenario_to_json(csv, true));
    // the Serving section's Clear trace: an empty list turns it off
    CHECK(web::edit_field(st, "workload.trace", nlohmann::json::array()));
    CHECK(!st.scenario.serving.trace.on());
    CHECK(!moe::scenario_to_json(st.scenario, true)["workload"].contains("trace"));
}
