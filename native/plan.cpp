// plan.cpp — `moe-roofline plan` (see plan.h): the search on every core, then the rows as a table, CSV or JSON.
#include "plan.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/scenario/codec.h"
#include "core/serving/serving.h"
#include "core/step/columns.h"
#include "core/data/tables.h"
#include "output.h"
#include "values.h"

namespace cli {

namespace {

using nlohmann::json;

constexpr std::size_t kChunk = 256;                // points per work item (about a millisecond)
constexpr std::size_t kChunksPerThread = 16;        // a batch: the points in memory at once (~0.5 MB per thread)

// One row of the output: a point, its result, its place on the front (0: not on it) and its status.
struct Row {
    const moe::PlanPoint& point;
    const moe::PointResult& result;
    int rank;            // 1-based place on the front; 0 = not on it
    const char* status;  // "front", "dominated", or the verdict (no_fit, ttft, tpot, per_user, error)
    std::uint32_t group = 0;  // the search it came from (its hardware and engine)
};

// One search of the plan: a hardware and an engine (issue 28: several, one front).
struct Search {
    moe::Scenario base;
    moe::PlanRequest request;
    moe::PlanEnumerator space;
    std::string hardware;  // the preset id (or the GPU's name for an inline one)
};

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
    if (!t.empty() && sla.at_p90) t += " (each at the band's p90: --sla-at p90)";
    return t.empty() ? "none" : t;
}

class PlanWriter {
public:
    PlanWriter(const std::vector<Search>& searches, const PlanOptions& o, const moe::PlanFront& front)
        : searches_(searches), base_(searches.front().base), o_(o), front_(front), scratch_(base_) {}

    std::string preamble_table() const {
        const moe::PlanRequest& r = o_.request;
        std::string gpus_text = base_.gpu.name, engines_text = moe::serving_engine_name(searches_.front().request.engine);
        if (searches_.size() > 1) {
            gpus_text.clear();
            engines_text.clear();
            for (const Search& x : searches_) {
                if (gpus_text.find(x.hardware) == std::string::npos) gpus_text += (gpus_text.empty() ? "" : ", ") + x.hardware;
                const std::string e = moe::serving_engine_name(x.request.engine);
                if (engines_text.find(e) == std::string::npos) engines_text += (engines_text.empty() ? "" : ", ") + e;
            }
            gpus_text = "{" + gpus_text + "}";
        }
        std::string t = base_.model.name + " on " + std::to_string(r.gpus) + " x " + gpus_text + " (" +
                        engines_text + "): " +
                        // with the serving layer its request lengths are the plan's (issue 26: one set of lengths)
                        (base_.serving.mode != moe::ServingMode::off
                             ? "ISL " + std::to_string(base_.serving.isl) + ", OSL " + std::to_string(base_.serving.osl) + " tokens per request"
                             : "prompt " + std::to_string(base_.workload.prompt_len) + ", output " + std::to_string(base_.workload.output_len) + " tokens") +
                        ", prefill chunk " +
                        std::to_string(base_.workload.prefill_tokens) + "; SLA: " + sla_text(r.sla) +
                        (o_.ttft_default ? " (the TTFT limit is the serving default: --ttft-ms sets another, --ttft-ms none lifts it)" : "") + "\n";
        t += std::string(r.objective == moe::PlanObjective::cost
                             ? "Pareto front of USD per million output tokens against tokens/s per user, cheapest first ("
                             : "Pareto front of output tokens/s per GPU against tokens/s per user, best per GPU first (") +
             (base_.serving.mode == moe::ServingMode::off ? "step-level model" : "serving layer") + ")\n";
        char buf[320];
        std::snprintf(buf, sizeof buf, "%5s %10s %10s %8s %7s %9s %8s %9s %-12s %-6s %-6s %4s %4s %4s %3s %6s %3s %-9s %-4s %-3s %-18s\n",
                      "rank", "tok/s/GPU", "tok/s/user", "$/Mtok", "J/tok", "TTFT ms", "TPOT ms", "GPUs", "hardware", "engine",
                      "mode", "tp", "dp", "ep", "pp", "batch", "mtp", "weights", "kv", "tbo", "a2a / status");
        t += buf;
        return t;
    }

    std::string summary_table() const {
        auto c = [&](moe::Verdict v) { return std::to_string(front_.count(v)); };
        std::string t = "front: " + std::to_string(front_.rows().size()) + " rows of " + c(moe::Verdict::candidate) +
                        " points that fit and meet the SLA, of " + std::to_string(front_.points()) +
                        " searched; not candidates: " + c(moe::Verdict::no_fit) + " do not fit, " +
                        c(moe::Verdict::ttft) + " miss TTFT, " + c(moe::Verdict::tpot) + " miss TPOT, " +
                        c(moe::Verdict::per_user) + " below the tokens/s per user, " + c(moe::Verdict::error) +
                        " invalid" +
                        (o_.ttft_default ? "; TTFT <= " + number_text(o_.request.sla.ttft_ms) +
                                               " ms by default (--ttft-ms none lifts it)"
                                         : std::string()) +
                        "\n";
        return t;
    }

    static std::string csv_header() { return moe::plan_csv_header(); }

    void table_row(const Row& row, std::string& out) {
        const moe::PlanPoint& p = row.point;
        const moe::PointResult& r = row.result;
        char buf[400];
        const std::string gpus = std::to_string(p.world()) + "x" + std::to_string(p.replicas);
        const std::string last = row.rank > 0 ? std::string(p.ep > 1 ? moe::a2a_backend_name(p.a2a) : "-") : std::string(row.status);
        const bool disagg = p.mode == moe::PlanMode::disaggregated;
        const double joules = row.rank > 0 ? joules_per_token(row) : 0;
        const Search& x = search(row);
        std::snprintf(buf, sizeof buf, "%5s %10s %10s %8s %7s %9s %8s %9s %-12s %-6s %-6s %4d %4d %4d %3d %6d %3d %-9s %-4s %-3s %-18s\n",
                      row.rank > 0 ? std::to_string(row.rank).c_str() : "-",
                      r.ok ? fixed(r.output_tokens_per_s_per_gpu, 0).c_str() : "",
                      r.ok ? fixed(r.tokens_per_s_per_user, 1).c_str() : "",
                      r.ok && r.usd_per_mtok > 0 ? fixed(r.usd_per_mtok, 3).c_str() : "",
                      joules > 0 ? fixed(joules, 3).c_str() : "", r.ok ? fixed(r.ttft_ms, 0).c_str() : "",
                      r.ok ? fixed(r.tpot_ms, 2).c_str() : "", gpus.c_str(), x.hardware.substr(0, 12).c_str(),
                      moe::serving_engine_name(x.request.engine), disagg ? "disagg" : "agg", p.tp, p.dp, p.ep,
                      p.pp, p.batch, int(p.mtp),
                      moe::plan_weights_text(x.base, p.weights).c_str(), moe::plan_kv_text(p.kv_cache).c_str(), p.two_batch_overlap ? "on" : "off",
                      last.c_str());
        out += buf;
        if (disagg)
            out += "      " + std::to_string(p.prefill_workers) + " prefill worker(s) of tp " + std::to_string(p.prefill_tp) +
                   " dp " + std::to_string(p.prefill_dp) + " ep " + std::to_string(p.prefill_ep) + ", " +
                   std::to_string(p.decode_workers) + " decode worker(s) of the layout above\n";
        if (row.rank > 0) {
            apply(row);
            if (disagg) out += "      $ " + moe::prefill_launch_command(scratch_, p, x.request.engine) + "\n";
            out += "      $ " + moe::launch_command(scratch_, p, x.request.engine) + "\n";
            out += "      " + moe::scenario_url(scratch_, o_.base_url) + "\n";
            const std::string note = queue_note(r);
            if (!note.empty()) out += "      note: " + note + "\n";
        } else {
            out += "      why: " + reason(row) + "\n";
        }
    }

    void csv_row(const Row& row, std::string& out) {
        const Search& x = search(row);
        apply(row);  // scratch_ holds the row's search's base
        moe::PlanCsvContext c;
        c.base = &x.base;
        c.scratch = &scratch_;
        c.sla = o_.request.sla;
        c.engine = x.request.engine;
        c.base_url = o_.base_url;
        c.hardware = x.hardware;
        moe::append_plan_csv_row(out, c, row.point, row.result, row.rank, row.status, row.rank > 0 ? joules_per_token(row) : 0);
    }

    json json_row(const Row& row) {
        const moe::PlanPoint& p = row.point;
        const moe::PointResult& r = row.result;
        const double joules = row.rank > 0 ? joules_per_token(row) : 0;
        apply(row);
        const Search& x = search(row);
        json j = {{"rank", row.rank > 0 ? json(row.rank) : json()},
                  {"status", row.status},
                  {"output_tokens_per_s_per_gpu", r.ok ? json(r.output_tokens_per_s_per_gpu) : json()},
                  {"tokens_per_s_per_user", r.ok ? json(r.tokens_per_s_per_user) : json()},
                  {"usd_per_mtok_output", r.ok && r.usd_per_mtok > 0 ? json(r.usd_per_mtok) : json()},
                  {"joules_per_token", joules > 0 ? json(joules) : json()},
                  {"hardware", x.hardware},
                  {"engine", moe::serving_engine_name(x.request.engine)},
                  {"ttft_ms", r.ok ? json(r.ttft_ms) : json()},
                  {"tpot_ms", r.ok ? json(r.tpot_ms) : json()},
                  {"fits", r.fits},
                  {"gpus", p.world()},
                  {"replicas", p.replicas},
                  {"parallel", {{"tp", p.tp}, {"dp", p.dp}, {"ep", p.ep}, {"pp", p.pp}}},
                  {"batch", p.batch},
                  {"concurrency", p.clients()},
                  {"mtp_draft_tokens", p.mtp},
                  {"weights", moe::plan_weights_text(x.base, p.weights)},
                  {"kv_cache", moe::plan_kv_text(p.kv_cache)},
                  {"two_batch_overlap", p.two_batch_overlap},
                  {"a2a_backend", moe::a2a_backend_name(p.a2a)},
                  {"mode", p.mode == moe::PlanMode::disaggregated ? "disaggregated" : "aggregated"},
                  {"reason", reason(row)},
                  {"scenario", moe::scenario_to_json(scratch_, true)},
                  {"link", moe::scenario_url(scratch_, o_.base_url)}};
        // the band's high end with the serving layer on (issue 28): eval's serving.ttft_ms_p90 / serving.tpot_ms_p90,
        // at the same path (null: an engine without a band)
        if (x.base.serving.mode != moe::ServingMode::off)
            j["serving"] = {{"ttft_ms_p90", r.ok && r.ttft_ms_p90 > 0 ? json(r.ttft_ms_p90) : json()},
                            {"tpot_ms_p90", r.ok && r.tpot_ms_p90 > 0 ? json(r.tpot_ms_p90) : json()}};
        j["command"] = moe::launch_command(scratch_, p, x.request.engine);
        if (p.mode == moe::PlanMode::disaggregated) {
            j["prefill"] = {{"workers", p.prefill_workers},
                            {"parallel", {{"tp", p.prefill_tp}, {"dp", p.prefill_dp}, {"ep", p.prefill_ep}, {"pp", 1}}}};
            j["decode_workers"] = p.decode_workers;
            j["prefill_command"] = moe::prefill_launch_command(scratch_, p, x.request.engine);
        }
        return j;
    }

    json counts_json() const {
        json c = json::object();
        c["points"] = front_.points();
        for (int v = 0; v < 6; ++v) c[moe::verdict_name(moe::Verdict(v))] = front_.count(moe::Verdict(v));
        c["front"] = front_.rows().size();
        return c;
    }

private:
    const Search& search(const Row& row) const { return searches_[row.group < searches_.size() ? row.group : 0]; }
    // The serving fields go back to the base first: an aggregated row after a disaggregated one keeps no pools.
    // A row of another search (hardware, engine) starts from that search's base.
    void apply(const Row& row) {
        const Search& x = search(row);
        if (row.group != scratch_group_) {
            scratch_ = x.base;
            scratch_group_ = row.group;
        }
        scratch_.serving = x.base.serving;
        moe::apply_point(scratch_, row.point);
    }
    // J per output token of a front row (issue 28): the full evaluation of its scenario, energy included (the
    // search itself leaves energy out: a few front rows pay for it, not every point).
    double joules_per_token(const Row& row) {
        apply(row);
        const moe::Estimate e = moe::evaluate(scratch_, moe::builtin_tables());
        if (!e.ok) return 0;
        return e.serving.computed ? e.serving.joules_per_token : e.decode.joules_per_token;
    }
    std::string reason(const Row& row) const { return moe::plan_row_reason(row.result, row.rank, row.status, o_.request.sla); }
    static std::string queue_note(const moe::PointResult& r) { return moe::plan_queue_note(r); }

    const std::vector<Search>& searches_;
    const moe::Scenario& base_;  // the first search's (the preamble's model and workload: the same in every search)
    const PlanOptions& o_;
    const moe::PlanFront& front_;
    moe::Scenario scratch_;  // a row's scenario, for its link and command
    std::uint32_t scratch_group_ = 0;
};

// Evaluates the points `space` walks, a batch at a time (kChunksPerThread chunks per thread) on `threads` threads (chunks of kChunk, so the results are
// those of one thread), and hands each batch to `done` in the space's order. `select(index)` picks the points to
// evaluate: take, skip, or stop the walk. Memory: one batch, whatever the space's size.
enum class Pick { take, skip, stop };
struct Batch {
    std::vector<moe::PlanPoint> points;
    std::vector<std::uint64_t> index;      // each point's place in the space's order
    std::vector<moe::PointResult> results;
};
template <class Select, class Done>
void stream_plan(const moe::PlanEnumerator& space, const moe::Scenario& base, int threads, Select&& select, Done&& done) {
    const moe::Tables& tables = moe::builtin_tables();
    // (--threads may say 4096: past 64 threads a batch keeps its size, 262,144 points and their results, ~35 MB)
    const std::size_t batch_size = kChunksPerThread * kChunk * std::size_t(std::min(threads, 64));
    Batch batch;
    batch.points.reserve(batch_size);
    batch.index.reserve(batch_size);
    auto flush = [&] {
        const std::size_t n = batch.points.size();
        batch.results.assign(n, moe::PointResult());
        parallel_chunks((n + kChunk - 1) / kChunk, threads, [&](std::size_t c) {
            if (interrupted()) throw Interrupted();
            const std::size_t begin = c * kChunk, end = std::min(n, begin + kChunk);
            moe::evaluate_plan_range(base, batch.points, begin, end, tables, batch.results.data() + begin);
        });
        if (interrupted()) throw Interrupted();
        done(batch);
        batch.points.clear();
        batch.index.clear();
    };
    std::uint64_t i = 0;
    space.for_each([&](const moe::PlanPoint& p) {
        const Pick pick = select(i);
        if (pick == Pick::stop) return false;
        if (pick == Pick::take) {
            batch.points.push_back(p);
            batch.index.push_back(i);
            if (batch.points.size() == batch_size) flush();
        }
        ++i;
        return true;
    });
    if (!batch.points.empty()) flush();
}

// Standard output (or PlanOptions::out) through a 1 MiB buffer.
class Stdout {
public:
    explicit Stdout(std::FILE* f = stdout) : file_(f) {}
    std::string& text() { return buf_; }
    void maybe_flush() {
        if (buf_.size() >= (1u << 20)) flush();
    }
    void flush() {
        if (interrupted()) throw Interrupted();
        std::fwrite(buf_.data(), 1, buf_.size(), file_);
        buf_.clear();
    }

private:
    std::FILE* file_;
    std::string buf_;
};

// A JSON row as an element of a top-level array: json::dump(2)'s own layout at that depth.
std::string indented(const json& row) {
    std::string t = row.dump(2);
    std::string out = "    ";
    for (char c : t) {
        out += c;
        if (c == '\n') out += "    ";
    }
    return out;
}

}  // namespace

int run_plan(const ScenarioSource& base_src, const moe::Catalog& catalog, const PlanOptions& given) {
    PlanOptions o = given;
    if (o.format == "json" && o.shard.n > 1)
        throw UsageError("--shard: needs --format table or csv (JSON documents do not concatenate)");
    // issue 28: one search per (hardware, engine); the scenario's own hardware and engine when no list is given.
    const std::vector<std::string> hardware = o.hardware.empty() ? std::vector<std::string>{""} : o.hardware;
    std::vector<moe::ServingEngine> engines = o.engines;
    const bool engines_given = !engines.empty() || o.engine_given;
    if (engines.empty()) engines.push_back(o.request.engine);
    const std::size_t n_searches = hardware.size() * engines.size();
    if (n_searches > 1 && o.all) throw UsageError("--all: needs one --hardware and one --engine (it walks one search again)");
    moe::PlanSpace space_given = o.request.space;
    if (!o.space_file.empty()) {
        const json j = parse_json(read_file(o.space_file), o.space_file, "space");
        moe::Issues issues;
        if (!moe::plan_space_from_json(j, space_given, issues)) throw UsageError(issue_lines(issues, "--space " + o.space_file + ": "));
    }
    std::vector<Search> searches;
    searches.reserve(n_searches);
    for (const std::string& hw : hardware) {
        ScenarioSource src = base_src;
        if (!hw.empty()) apply_set(src, "hardware=" + hw, catalog);
        // The layout fields of the scenario are the planner's to choose: they may be anything that parses.
        const moe::Scenario built = build_scenario(src, catalog, /*allow_cross_field=*/true);
        for (moe::ServingEngine engine : engines) {
            Search& x = searches.emplace_back();
            x.base = built;
            x.hardware = !hw.empty() ? hw : !built.gpu.id.empty() ? built.gpu.id : built.gpu.name;
            x.request = o.request;
            x.request.space = space_given;
            // One engine for the numbers and the commands: --engine sets the scenario's runtime.engine (its serving
            // constants); without it the scenario's engine names the commands (ideal: SGLang's), as on the page.
            if (engines_given) x.base.runtime.engine = moe::engine_kind_of(engine), x.request.engine = engine;
            else x.request.engine = moe::serving_engine_of(x.base.runtime.engine);
            if (o.request.objective == moe::PlanObjective::cost && !(x.base.cost.gpu_hour_usd > 0) && !(x.base.gpu.gpu_hour_usd > 0))
                throw UsageError("--objective cost: " + x.hardware + " has no example GPU-hour price; set one with --set cost.gpu_hour_usd=USD");
        }
    }
    moe::Scenario& base = searches.front().base;
    if (o.request.sla.at_p90 && base.serving.mode == moe::ServingMode::off)
        throw UsageError("--sla-at p90: the band exists with the serving layer only (set serving.mode)");
    // issue 26: a serving plan without a TTFT limit gets the default one (stated in the preamble and the summary)
    if (o.ttft_default) o.request.sla.ttft_ms = moe::plan_ttft_limit_ms(base, 0);
    o.ttft_default = o.ttft_default && o.request.sla.ttft_ms > 0;
    for (Search& x : searches) {
        x.request.sla = o.request.sla;
        moe::Issues issues;
        if (!x.space.start(x.base, x.request, issues))
            throw UsageError((n_searches > 1 ? x.hardware + ", " + moe::serving_engine_name(x.request.engine) + ": " : std::string()) +
                             issue_lines(issues, issues[0].path == "gpus" ? "--gpus: " : ""));
    }
    const moe::PlanRequest& req = searches.front().request;
    const moe::PlanEnumerator& space = searches.front().space;

    // The search: the front and the counts, the points streamed through (memory: one batch and the front); with
    // several searches, each one's front (its rows tagged with the search) merged into one.
    const int threads = resolve_threads(o.threads);
    moe::PlanFront front(req.sla, o.request.objective);
    for (std::uint32_t g = 0; g < searches.size(); ++g) {
        moe::PlanFront part(req.sla, o.request.objective);
        stream_plan(searches[g].space, searches[g].base, threads, [](std::uint64_t) { return Pick::take; }, [&](const Batch& b) {
            for (std::size_t k = 0; k < b.points.size(); ++k) part.add(b.index[k], b.points[k], b.results[k], g);
        });
        front.merge(part);
    }
    // re-rank the front by the serving simulation (what `eval` gives for each row; the search screened with the
    // closed form)
    if (base.serving.mode != moe::ServingMode::off)
        front.refine([&](const moe::PlanFront::Row& r) {
            moe::Scenario s = searches[r.group].base;
            moe::apply_point(s, r.point);
            return moe::evaluate_point_simulated(s, moe::builtin_tables());
        });
    front.finish();
    const std::uint64_t on_front = front.rows().size();

    PlanOptions opts = o;
    opts.request.engine = req.engine;  // the plan's engine (above), for the preamble and the launch commands
    PlanWriter writer(searches, opts, front);
    // (the CSV's summary goes to stderr before the first row, as it always has)
    if (o.format == "csv") {
        if (o.csv_summary) *o.csv_summary = writer.summary_table();
        else std::fprintf(stderr, "%s", ("plan: " + writer.summary_table()).c_str());
    }
    // --all: every point not on the front, in the space's order, from a second walk (the front must be known
    // before the first of them is printed); only the points of this shard's rows are evaluated again.
    auto others = [&](std::uint64_t first, std::uint64_t last, auto&& render) {
        std::uint64_t other = 0;
        stream_plan(space, base, threads, [&](std::uint64_t i) {
            if (front.on_front(i)) return Pick::skip;
            const std::uint64_t k = other++;
            return k < first ? Pick::skip : k >= last ? Pick::stop : Pick::take;
        }, [&](const Batch& b) {
            for (std::size_t k = 0; k < b.points.size(); ++k) {
                const moe::Verdict v = moe::judge(b.results[k], req.sla);
                render(Row{b.points[k], b.results[k], 0, v == moe::Verdict::candidate ? "dominated" : moe::verdict_name(v)});
            }
        });
    };
    Stdout out(o.out);
    if (o.format == "json") {
        json hw_list = json::array(), engine_list = json::array();
        for (const Search& x : searches) {
            if (std::find(hw_list.begin(), hw_list.end(), json(x.hardware)) == hw_list.end()) hw_list.push_back(x.hardware);
            const json e = moe::serving_engine_name(x.request.engine);
            if (std::find(engine_list.begin(), engine_list.end(), e) == engine_list.end()) engine_list.push_back(e);
        }
        json j = {{"model", base.model.name},
                  {"hardware", n_searches > 1 ? json(hw_list) : json(base.gpu.name)},
                  {"gpus", req.gpus},
                  {"engine", n_searches > 1 ? json(engine_list) : json(moe::serving_engine_name(req.engine))},
                  {"objective", moe::plan_objective_name(o.request.objective)},
                  {"sla", {{"ttft_ms", req.sla.ttft_ms > 0 ? json(req.sla.ttft_ms) : json()},
                           {"tpot_ms", req.sla.tpot_ms > 0 ? json(req.sla.tpot_ms) : json()},
                           {"min_tokens_per_s_per_user", req.sla.min_tokens_per_s_per_user > 0 ? json(req.sla.min_tokens_per_s_per_user) : json()}}},
                  {"space", moe::plan_space_to_json(space.space())},
                  {"counts", writer.counts_json()}};
        json rows = json::array();
        for (std::size_t i = 0; i < front.rows().size(); ++i) {
            const moe::PlanFront::Row& f = front.rows()[i];
            rows.push_back(writer.json_row(Row{f.point, f.result, int(i + 1), "front", f.group}));
        }
        j["front"] = std::move(rows);
        // "others" streams: the document is written around it (keys in nlohmann's order; after "others" come only
        // "sla" and "space", which hold no user text, so the placeholder is found from the end).
        constexpr const char* kPlaceholder = "\"@@others@@\"";
        if (o.all) j["others"] = "@@others@@";
        const std::string doc = j.dump(2) + "\n";
        const std::size_t at = o.all ? doc.rfind(kPlaceholder) : std::string::npos;
        if (at == std::string::npos) {
            out.text() = doc;
        } else {
            out.text() = doc.substr(0, at) + "[";
            bool any = false;
            others(0, UINT64_MAX, [&](const Row& row) {
                out.text() += any ? ",\n" : "\n";
                out.text() += indented(writer.json_row(row));
                any = true;
                out.maybe_flush();
            });
            out.text() += any ? "\n  ]" : "]";
            out.text() += doc.substr(at + std::strlen(kPlaceholder));
        }
    } else {
        const std::uint64_t total = o.all ? front.points() : on_front;
        const auto [begin, end] = o.shard.range(total);
        const bool csv = o.format == "csv";
        auto write = [&](const Row& row) {
            if (csv) writer.csv_row(row, out.text());
            else writer.table_row(row, out.text());
            out.maybe_flush();
        };
        if (o.shard.first()) out.text() += csv ? PlanWriter::csv_header() : writer.preamble_table();
        for (std::uint64_t i = begin; i < std::min(end, on_front); ++i) {
            const moe::PlanFront::Row& f = front.rows()[i];
            write(Row{f.point, f.result, int(i + 1), "front", f.group});
        }
        if (o.all && end > on_front) others(std::max(begin, on_front) - on_front, end - on_front, write);
        if (!csv && o.shard.last()) out.text() += writer.summary_table();
    }
    out.flush();
    std::fflush(o.out);
    return 0;
}

}  // namespace cli
