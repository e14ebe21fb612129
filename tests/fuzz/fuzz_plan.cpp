// fuzz_plan.cpp — libFuzzer target: a plan request and its --space file (issue 27), through the planner's streaming
// path (moe::PlanEnumerator, evaluate_plan_range, moe::PlanFront) as `moe-roofline plan` runs it.
//
// Input: JSON text, read by moe::parse_json_text (the CLI's parser: a failure must be located, a number beyond a
// double named by its field). Either a --space object itself ({"tp":[1,8],"batch":[16,64],...}) or a request:
//   {"space": {...}, "gpus": 64, "engine": "vllm", "sla": {"ttft_ms": 500, "tpot_ms": 30, "per_user": 20},
//    "scenario": {"model": "qwen3-30b-a3b", "serving": {"mode": "aggregated"}}}
// The promises: issues name "space..." (or "gpus") in at most 300 characters of valid UTF-8; the space's size,
// counted without listing it, is the number of points the walk gives; a space over the limit is refused with its
// size; the resolved space has no repeats; every evaluated point is finite or has an error; the streaming front equals
// pareto_front() over the same points; each front row's launch commands and link build.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/plan/plan.h"
#include "fuzz_common.h"

namespace {

using nlohmann::json;

constexpr std::uint64_t kMaxPoints = 3000;  // a larger space is refused (and its refusal checked)
constexpr std::size_t kEvaluated = 48;      // points evaluated per input, spread over the space

void check_plan_issues(const moe::Issues& issues, const char* where) {
    fuzz::check_issues(issues, where);
    for (const moe::Issue& i : issues) {
        if (i.text().size() > 300) fuzz::fail(std::string(where) + ": a message over 300 characters: " + i.text().substr(0, 120));
        if (i.path.rfind("space", 0) != 0 && i.path != "gpus") fuzz::fail(std::string(where) + ": an issue naming no field: " + i.text());
    }
}

// Nesting within `limit` levels (a scenario is at most 64 deep; deeper input is the parsers' business, not the plan's).
bool depth_ok(const json& v, int limit = 64) {
    if (limit < 0) return false;
    if (v.is_object() || v.is_array())
        for (const json& c : v)
            if (!depth_ok(c, limit - 1)) return false;
    return true;
}

bool is_whole(const json& v) { return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>()); }

template <class T, class Eq>
bool has_repeats(const std::vector<T>& v, Eq eq) {
    for (std::size_t i = 0; i < v.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
            if (eq(v[i], v[k])) return true;
    return false;
}

void check_resolved(const moe::PlanSpace& s) {
    auto same = [](const auto& a, const auto& b) { return a == b; };
    auto same_dtype = [](const moe::DtypeSel& a, const moe::DtypeSel& b) { return a.is_auto == b.is_auto && a.value == b.value; };
    for (const std::vector<int>* v : {&s.tp, &s.dp, &s.ep, &s.pp, &s.batch, &s.mtp_draft_tokens, &s.two_batch_overlap,
                                      &s.prefill_workers, &s.decode_workers})
        if (v->size() < 4096 && has_repeats(*v, same)) fuzz::fail("resolve_space kept a repeated value");
    if (has_repeats(s.weights, same_dtype) || has_repeats(s.kv_cache, same_dtype) || has_repeats(s.a2a_backend, same) ||
        has_repeats(s.mode, same))
        fuzz::fail("resolve_space kept a repeated value");
    (void)moe::plan_space_to_json(s).dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const moe::Catalog& cat = moe::builtin_catalog();
    json j;
    moe::JsonTextError bad;
    if (!moe::parse_json_text(text, j, bad, "space")) {
        if (bad.message.empty() || bad.message.size() > 300 || !fuzz::valid_utf8(bad.message))
            fuzz::fail("parse_json_text: a message empty, too long or not UTF-8");
        if (bad.number_out_of_range && (bad.line < 1 || bad.column < 1 || bad.message.rfind("line ", 0) != 0))
            fuzz::fail("parse_json_text: a number out of range without its line and column: " + bad.message);
        return 0;
    }
    if (!j.is_object()) return 0;
    const bool request = j.contains("space") || j.contains("gpus") || j.contains("scenario") || j.contains("engine");

    // The base scenario: the request's (parsed as the CLI does, cross-field issues allowed: the plan sets the layout),
    // else DeepSeek-V3 on H200 with the serving layer.
    json scenario = {{"model", "deepseek-v3"}, {"hardware", "h200"}, {"serving", {{"mode", "aggregated"}, {"isl", 1024}, {"osl", 256}}}};
    if (request && j.contains("scenario") && j["scenario"].is_object() && depth_ok(j["scenario"])) scenario = j["scenario"];
    moe::ParseResult r = moe::scenario_from_json(scenario, cat);
    if (!r.ok()) {
        const moe::Issues cross = moe::validate_scenario(r.scenario);
        if (cross.size() != r.errors.size()) return 0;  // a field that does not parse: not the planner's input
    }
    const moe::Scenario& base = r.scenario;

    moe::PlanRequest req;
    req.max_points = kMaxPoints;
    req.gpus = 8;
    if (request) {
        if (j.contains("gpus") && is_whole(j["gpus"])) req.gpus = int(std::max(-1.0, std::min(1e6, j["gpus"].get<double>())));
        if (j.contains("engine") && j["engine"].is_string()) moe::parse_serving_engine(j["engine"].get<std::string>(), req.engine);
        if (j.contains("sla") && j["sla"].is_object()) {
            const json& sla = j["sla"];
            auto positive = [&](const char* key) {
                return sla.contains(key) && sla[key].is_number() && sla[key].get<double>() > 0 ? sla[key].get<double>() : 0.0;
            };
            req.sla.ttft_ms = positive("ttft_ms");
            req.sla.tpot_ms = positive("tpot_ms");
            req.sla.min_tokens_per_s_per_user = positive("per_user");
        }
    }
    const json& space_json = request ? (j.contains("space") ? j["space"] : json::object()) : j;
    moe::Issues errs;
    const bool space_ok = moe::plan_space_from_json(space_json, req.space, errs);
    check_plan_issues(errs, "plan_space_from_json");
    if (!space_ok) {
        if (errs.empty()) fuzz::fail("plan_space_from_json failed without an issue");
        return 0;
    }
    if (req.gpus < 1 || req.gpus > 65536) {
        moe::PlanEnumerator e;
        if (e.start(base, req, errs) || errs.empty() || errs.back().path != "gpus") fuzz::fail("a bad --gpus was not refused");
        return 0;
    }
    check_resolved(moe::resolve_space(base, req));

    moe::PlanEnumerator space;
    const bool started = space.start(base, req, errs);
    check_plan_issues(errs, "PlanEnumerator::start");
    if (!started) {
        if (errs.empty()) fuzz::fail("PlanEnumerator::start failed without an issue");
        // refused for its size: the size (counted, not listed) is over the limit and the message starts with it
        if (errs.back().path == "space" && errs.back().message.find("exceed the limit") != std::string::npos) {
            std::string size = std::to_string(space.size());
            for (int i = int(size.size()) - 3; i > 0; i -= 3) size.insert(std::size_t(i), ",");
            if (space.size() <= kMaxPoints || errs.back().message.rfind(size + " points (", 0) != 0)
                fuzz::fail("a space refused for its size without it: " + errs.back().text());
        }
        return 0;
    }
    if (space.size() > kMaxPoints) fuzz::fail("a space over max_points was not refused");

    // The walk gives exactly size() points; keep an even spread of them.
    const std::uint64_t n = space.size();
    const std::uint64_t stride = n > kEvaluated ? (n + kEvaluated - 1) / kEvaluated : 1;
    std::vector<moe::PlanPoint> sample;
    std::vector<std::uint64_t> index;
    std::uint64_t walked = 0;
    space.for_each([&](const moe::PlanPoint& p) {
        if (p.world() < 1 || p.world() > req.gpus || req.gpus % p.world() != 0 || p.replicas * p.world() != req.gpus)
            fuzz::fail("a point whose GPUs do not divide the budget");
        if (walked % stride == 0) sample.push_back(p), index.push_back(walked);
        ++walked;
        return true;
    });
    if (walked != n) fuzz::fail("size() " + std::to_string(n) + " but the walk gave " + std::to_string(walked));

    std::vector<moe::PointResult> res(sample.size());
    moe::evaluate_plan_range(base, sample, 0, sample.size(), moe::builtin_tables(), res.data());
    moe::PlanFront front(req.sla);
    std::vector<double> gpu, user;
    std::vector<bool> cand;
    for (std::size_t k = 0; k < sample.size(); ++k) {
        const moe::PointResult& pr = res[k];
        if (pr.ok) {
            for (double v : {pr.ttft_ms, pr.tpot_ms, pr.output_tokens_per_s_per_gpu, pr.tokens_per_s_per_user})
                fuzz::check_finite(v, "a plan point's objective");
        } else if (pr.error.empty() || !fuzz::valid_utf8(pr.error)) {
            fuzz::fail("a failed plan point without a readable error");
        }
        if (!fuzz::valid_utf8(moe::verdict_reason(pr, req.sla))) fuzz::fail("a verdict reason that is not UTF-8");
        const moe::Verdict v = front.add(index[k], sample[k], pr);
        gpu.push_back(pr.output_tokens_per_s_per_gpu);
        user.push_back(pr.tokens_per_s_per_user);
        cand.push_back(v == moe::Verdict::candidate);
    }
    const std::vector<std::size_t> expected = moe::pareto_front(gpu, user, cand);
    if (expected.size() != front.rows().size()) fuzz::fail("PlanFront and pareto_front disagree on the front's size");
    for (std::size_t k = 0; k < expected.size(); ++k)
        if (front.rows()[k].index != index[expected[k]]) fuzz::fail("PlanFront and pareto_front disagree on a row");
    moe::Scenario row = base;
    for (const moe::PlanFront::Row& f : front.rows()) {
        row.serving = base.serving;
        moe::apply_point(row, f.point);
        for (const std::string& t : {moe::launch_command(row, f.point, req.engine),
                                     moe::prefill_launch_command(row, f.point, req.engine), moe::scenario_url(row, "x/")})
            if (!fuzz::valid_utf8(t)) fuzz::fail("a launch command or link that is not UTF-8");
    }
    return 0;
}
