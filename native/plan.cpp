// plan.cpp — `moe-roofline plan` (see plan.h): the search on every core, then the rows as a table, CSV or JSON.
#include "plan.h"

#include <cstdio>
#include <iostream>
#include <vector>

#include "core/scenario/codec.h"
#include "core/step/columns.h"
#include "core/data/tables.h"
#include "output.h"
#include "values.h"

namespace cli {

namespace {

using nlohmann::json;

constexpr std::size_t kChunk = 256;  // points per work item (about a millisecond)

struct Row {
    std::size_t index;  // into the points
    int rank;           // 1-based place on the front; 0 = not on it
    std::string status; // "front", "dominated", or the verdict (no_fit, ttft, tpot, per_user, error)
};

std::string weights_text(const moe::Scenario& s, const moe::DtypeSel& w) {
    if (!w.is_auto) return moe::dtype_name(w.value);
    const moe::ModelSpec& m = s.model;
    if (m.weight_dtype == m.expert_dtype) return moe::dtype_name(m.weight_dtype);
    return std::string(moe::dtype_name(m.weight_dtype)) + "/" + moe::dtype_name(m.expert_dtype);
}

std::string kv_text(const moe::DtypeSel& kv) { return kv.is_auto ? "bf16" : moe::dtype_name(kv.value); }

std::string fixed(double v, int decimals) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string sla_text(const moe::Sla& sla) {
    std::string t;
    auto add = [&](const std::string& s) { t += (t.empty() ? "" : ", ") + s; };
    if (sla.ttft_ms > 0) add("TTFT <= " + number_text(sla.ttft_ms) + " ms");
    if (sla.tpot_ms > 0) add("TPOT <= " + number_text(sla.tpot_ms) + " ms");
    if (sla.min_tokens_per_s_per_user > 0) add(">= " + number_text(sla.min_tokens_per_s_per_user) + " tokens/s per user");
    return t.empty() ? "none" : t;
}

class PlanWriter {
public:
    PlanWriter(const moe::Scenario& base, const PlanOptions& o, const std::vector<moe::PlanPoint>& points,
               const std::vector<moe::PointResult>& results, const moe::PlanSummary& sum)
        : base_(base), o_(o), points_(points), results_(results), sum_(sum), scratch_(base) {}

    std::string preamble_table() const {
        const moe::PlanRequest& r = o_.request;
        std::string t = base_.model.name + " on " + std::to_string(r.gpus) + " x " + base_.gpu.name + " (" +
                        moe::serving_engine_name(r.engine) + "): prompt " + std::to_string(base_.workload.prompt_len) +
                        ", output " + std::to_string(base_.workload.output_len) + " tokens, prefill chunk " +
                        std::to_string(base_.workload.prefill_tokens) + "; SLA: " + sla_text(r.sla) + "\n";
        t += std::string("Pareto front of output tokens/s per GPU against tokens/s per user, best per GPU first (") +
             (base_.serving.mode == moe::ServingMode::off ? "step-level model" : "serving layer") + ")\n";
        char buf[256];
        std::snprintf(buf, sizeof buf, "%5s %10s %10s %9s %8s %9s %-6s %4s %4s %4s %3s %6s %3s %-9s %-4s %-3s %-18s\n", "rank",
                      "tok/s/GPU", "tok/s/user", "TTFT ms", "TPOT ms", "GPUs", "mode", "tp", "dp", "ep", "pp", "batch", "mtp",
                      "weights", "kv", "tbo", "a2a / status");
        t += buf;
        return t;
    }

    std::string summary_table() const {
        const std::size_t* c = sum_.counts;
        std::string t = "front: " + std::to_string(sum_.front.size()) + " rows of " +
                        std::to_string(c[int(moe::Verdict::candidate)]) + " points that fit and meet the SLA, of " +
                        std::to_string(points_.size()) + " searched; not candidates: " +
                        std::to_string(c[int(moe::Verdict::no_fit)]) + " do not fit, " +
                        std::to_string(c[int(moe::Verdict::ttft)]) + " miss TTFT, " +
                        std::to_string(c[int(moe::Verdict::tpot)]) + " miss TPOT, " +
                        std::to_string(c[int(moe::Verdict::per_user)]) + " below the tokens/s per user, " +
                        std::to_string(c[int(moe::Verdict::error)]) + " invalid\n";
        return t;
    }

    static std::string csv_header() {
        return "rank,status,output_tokens_per_s_per_gpu,tokens_per_s_per_user,ttft_ms,tpot_ms,gpus,replicas,tp,dp,ep,pp,"
               "batch,concurrency,mtp_draft_tokens,weights,kv_cache,two_batch_overlap,a2a_backend,mode,prefill_workers,"
               "prefill_tp,prefill_dp,prefill_ep,decode_workers,reason,command,prefill_command,link\n";
    }

    void table_row(const Row& row, std::string& out) {
        const moe::PlanPoint& p = points_[row.index];
        const moe::PointResult& r = results_[row.index];
        char buf[320];
        const std::string gpus = std::to_string(p.world()) + "x" + std::to_string(p.replicas);
        const std::string last = row.rank > 0 ? std::string(p.ep > 1 ? moe::a2a_backend_name(p.a2a) : "-") : row.status;
        const bool disagg = p.mode == moe::PlanMode::disaggregated;
        std::snprintf(buf, sizeof buf, "%5s %10s %10s %9s %8s %9s %-6s %4d %4d %4d %3d %6d %3d %-9s %-4s %-3s %-18s\n",
                      row.rank > 0 ? std::to_string(row.rank).c_str() : "-",
                      r.ok ? fixed(r.output_tokens_per_s_per_gpu, 0).c_str() : "",
                      r.ok ? fixed(r.tokens_per_s_per_user, 1).c_str() : "", r.ok ? fixed(r.ttft_ms, 0).c_str() : "",
                      r.ok ? fixed(r.tpot_ms, 2).c_str() : "", gpus.c_str(), disagg ? "disagg" : "agg", p.tp, p.dp, p.ep,
                      p.pp, p.batch, int(p.mtp),
                      weights_text(base_, p.weights).c_str(), kv_text(p.kv_cache).c_str(), p.two_batch_overlap ? "on" : "off",
                      last.c_str());
        out += buf;
        if (disagg)
            out += "      " + std::to_string(p.prefill_workers) + " prefill worker(s) of tp " + std::to_string(p.prefill_tp) +
                   " dp " + std::to_string(p.prefill_dp) + " ep " + std::to_string(p.prefill_ep) + ", " +
                   std::to_string(p.decode_workers) + " decode worker(s) of the layout above\n";
        if (row.rank > 0) {
            apply(row);
            if (disagg) out += "      $ " + moe::prefill_launch_command(scratch_, p, o_.request.engine) + "\n";
            out += "      $ " + moe::launch_command(scratch_, p, o_.request.engine) + "\n";
            out += "      " + moe::scenario_url(scratch_, o_.base_url) + "\n";
        } else {
            out += "      why: " + reason(row) + "\n";
        }
    }

    void csv_row(const Row& row, std::string& out) {
        const moe::PlanPoint& p = points_[row.index];
        const moe::PointResult& r = results_[row.index];
        if (row.rank > 0) out += std::to_string(row.rank);
        out += ',';
        out += row.status;
        for (double v : {r.output_tokens_per_s_per_gpu, r.tokens_per_s_per_user, r.ttft_ms, r.tpot_ms}) {
            out += ',';
            if (r.ok) append_number(out, v);
        }
        for (int v : {p.world(), p.replicas, p.tp, p.dp, p.ep, p.pp, p.batch, p.batch * p.dp, int(p.mtp)}) {
            out += ',';
            out += std::to_string(v);
        }
        out += ',' + weights_text(base_, p.weights) + ',' + kv_text(p.kv_cache) + ',' +
               (p.two_batch_overlap ? "true" : "false") + ',' + moe::a2a_backend_name(p.a2a) + ',';
        const bool disagg = p.mode == moe::PlanMode::disaggregated;
        out += disagg ? "disaggregated" : "aggregated";
        for (int v : {int(p.prefill_workers), int(p.prefill_tp), int(p.prefill_dp), int(p.prefill_ep), int(p.decode_workers)}) {
            out += ',';
            if (disagg) out += std::to_string(v);
        }
        out += ',';
        moe::append_csv_cell(out, row.rank > 0 ? std::string() : reason(row));
        apply(row);
        out += ',';
        moe::append_csv_cell(out, moe::launch_command(scratch_, p, o_.request.engine));
        out += ',';
        moe::append_csv_cell(out, moe::prefill_launch_command(scratch_, p, o_.request.engine));
        out += ',';
        moe::append_csv_cell(out, moe::scenario_url(scratch_, o_.base_url));
        out += '\n';
    }

    json json_row(const Row& row) {
        const moe::PlanPoint& p = points_[row.index];
        const moe::PointResult& r = results_[row.index];
        apply(row);
        json j = {{"rank", row.rank > 0 ? json(row.rank) : json()},
                  {"status", row.status},
                  {"output_tokens_per_s_per_gpu", r.ok ? json(r.output_tokens_per_s_per_gpu) : json()},
                  {"tokens_per_s_per_user", r.ok ? json(r.tokens_per_s_per_user) : json()},
                  {"ttft_ms", r.ok ? json(r.ttft_ms) : json()},
                  {"tpot_ms", r.ok ? json(r.tpot_ms) : json()},
                  {"fits", r.fits},
                  {"gpus", p.world()},
                  {"replicas", p.replicas},
                  {"parallel", {{"tp", p.tp}, {"dp", p.dp}, {"ep", p.ep}, {"pp", p.pp}}},
                  {"batch", p.batch},
                  {"concurrency", p.batch * p.dp},
                  {"mtp_draft_tokens", p.mtp},
                  {"weights", weights_text(base_, p.weights)},
                  {"kv_cache", kv_text(p.kv_cache)},
                  {"two_batch_overlap", p.two_batch_overlap},
                  {"a2a_backend", moe::a2a_backend_name(p.a2a)},
                  {"mode", p.mode == moe::PlanMode::disaggregated ? "disaggregated" : "aggregated"},
                  {"reason", row.rank > 0 ? std::string() : reason(row)},
                  {"scenario", moe::scenario_to_json(scratch_, true)},
                  {"link", moe::scenario_url(scratch_, o_.base_url)}};
        j["command"] = moe::launch_command(scratch_, p, o_.request.engine);
        if (p.mode == moe::PlanMode::disaggregated) {
            j["prefill"] = {{"workers", p.prefill_workers},
                            {"parallel", {{"tp", p.prefill_tp}, {"dp", p.prefill_dp}, {"ep", p.prefill_ep}, {"pp", 1}}}};
            j["decode_workers"] = p.decode_workers;
            j["prefill_command"] = moe::prefill_launch_command(scratch_, p, o_.request.engine);
        }
        return j;
    }

    json counts_json() const {
        json c = json::object();
        c["points"] = points_.size();
        for (int v = 0; v < 6; ++v) c[moe::verdict_name(moe::Verdict(v))] = sum_.counts[v];
        c["front"] = sum_.front.size();
        return c;
    }

private:
    // The serving fields go back to the base first: an aggregated row after a disaggregated one keeps no pools.
    void apply(const Row& row) {
        scratch_.serving = base_.serving;
        moe::apply_point(scratch_, points_[row.index]);
    }
    std::string reason(const Row& row) const {
        if (row.status == "dominated") return "dominated by a point of the front";
        return moe::verdict_reason(results_[row.index], o_.request.sla);
    }

    const moe::Scenario& base_;
    const PlanOptions& o_;
    const std::vector<moe::PlanPoint>& points_;
    const std::vector<moe::PointResult>& results_;
    const moe::PlanSummary& sum_;
    moe::Scenario scratch_;  // a row's scenario, for its link and command
};

}  // namespace

int run_plan(const ScenarioSource& base_src, const moe::Catalog& catalog, const PlanOptions& o) {
    if (o.format == "json" && o.shard.n > 1)
        throw UsageError("--shard: needs --format table or csv (JSON documents do not concatenate)");
    // The layout fields of the scenario are the planner's to choose: they may be anything that parses.
    moe::Scenario base = build_scenario(base_src, catalog, /*allow_cross_field=*/true);
    moe::PlanRequest req = o.request;
    // One engine for the numbers and the commands: --engine sets the scenario's runtime.engine (its serving
    // constants); without it the scenario's engine names the commands (ideal: SGLang's), as on the page.
    if (o.engine_given) base.runtime.engine = moe::engine_kind_of(req.engine);
    else req.engine = moe::serving_engine_of(base.runtime.engine);
    if (!o.space_file.empty()) {
        const json j = parse_json(read_file(o.space_file), o.space_file, "space");
        moe::Issues issues;
        if (!moe::plan_space_from_json(j, req.space, issues))
            throw UsageError("--space " + o.space_file + ": " + join_issues(issues));
    }
    moe::Issues issues;
    const std::vector<moe::PlanPoint> points = moe::enumerate_plan(base, req, issues);
    if (!issues.empty()) throw UsageError((issues[0].path == "gpus" ? "--gpus: " : "") + join_issues(issues));

    // The search: chunks of points on every core; results land at their point's index, so the output does not
    // depend on the number of threads.
    const moe::Tables& tables = moe::builtin_tables();
    std::vector<moe::PointResult> results(points.size());
    const std::size_t chunks = (points.size() + kChunk - 1) / kChunk;
    parallel_chunks(chunks, resolve_threads(o.threads), [&](std::size_t c) {
        if (interrupted()) throw Interrupted();
        const std::size_t begin = c * kChunk, end = std::min(points.size(), begin + kChunk);
        moe::evaluate_plan_range(base, points, begin, end, tables, results.data() + begin);
    });
    const moe::PlanSummary sum = moe::summarize_plan(points, results, req.sla);

    std::vector<Row> rows;
    std::vector<int> rank(points.size(), 0);
    for (std::size_t i = 0; i < sum.front.size(); ++i) {
        rows.push_back({sum.front[i], int(i + 1), "front"});
        rank[sum.front[i]] = int(i + 1);
    }
    if (o.all)
        for (std::size_t i = 0; i < points.size(); ++i)
            if (rank[i] == 0)
                rows.push_back({i, 0, sum.verdicts[i] == moe::Verdict::candidate ? "dominated" : moe::verdict_name(sum.verdicts[i])});

    PlanOptions opts = o;
    opts.request.engine = req.engine;  // the plan's engine (above), for the preamble and the launch commands
    PlanWriter writer(base, opts, points, results, sum);
    std::string out;
    if (o.format == "json") {
        json j = {{"model", base.model.name},
                  {"hardware", base.gpu.name},
                  {"gpus", req.gpus},
                  {"engine", moe::serving_engine_name(req.engine)},
                  {"sla", {{"ttft_ms", req.sla.ttft_ms > 0 ? json(req.sla.ttft_ms) : json()},
                           {"tpot_ms", req.sla.tpot_ms > 0 ? json(req.sla.tpot_ms) : json()},
                           {"min_tokens_per_s_per_user", req.sla.min_tokens_per_s_per_user > 0 ? json(req.sla.min_tokens_per_s_per_user) : json()}}},
                  {"space", moe::plan_space_to_json(moe::resolve_space(base, req))},
                  {"counts", writer.counts_json()}};
        json front = json::array(), others = json::array();
        for (const Row& r : rows) (r.rank > 0 ? front : others).push_back(writer.json_row(r));
        j["front"] = front;
        if (o.all) j["others"] = others;
        out = j.dump(2) + "\n";
    } else {
        const auto [begin, end] = o.shard.range(rows.size());
        const bool csv = o.format == "csv";
        if (o.shard.first()) out += csv ? PlanWriter::csv_header() : writer.preamble_table();
        for (std::uint64_t i = begin; i < end; ++i) {
            if (interrupted()) throw Interrupted();
            if (csv) writer.csv_row(rows[i], out);
            else writer.table_row(rows[i], out);
        }
        if (!csv && o.shard.last()) out += writer.summary_table();
        if (csv) std::fprintf(stderr, "%s", ("plan: " + writer.summary_table()).c_str());
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    return 0;
}

}  // namespace cli
