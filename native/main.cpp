// main.cpp — `moe-roofline`, the headless front end of the MoE Roofline core (DESIGN §4.2).
//
//   moe-roofline eval SCENARIO [--set PATH=VALUE]... [--format json|table]
//   moe-roofline sweep SCENARIO --axis PATH=VALUES [--axis ...] [--set ...] [--columns LIST] [-o FILE.csv | -o -]
//   moe-roofline presets [models|hardware|scenarios|fields|columns]
//   moe-roofline url SCENARIO [--base URL] | url --decode URL
//   moe-roofline plan SCENARIO --gpus N [--ttft-ms X] [--tpot-ms Y] [--min-tokens-per-s-per-user Z] [--space FILE]
//                     [--engine sglang|vllm|trtllm[,...]] [--hardware ID[,...]] [--objective throughput|cost]
//                     [--format table|csv|json] [--all] [--threads N] [--shard K/N] [--sla-at mean|p90]
//   moe-roofline calibrate RUNS.csv -o ENGINES.json [--bootstrap N] [--folds K] [--test OTHER.csv] [--quiet]
//   (eval, sweep and plan take --engines ENGINES.json: a calibration instead of the shipped engine constants)
//
// Exit status: 0 success, 2 bad input (one stderr line per error naming its field, axis or file), 128+N on signal N,
// 1 on an internal error. Arguments are parsed here (CLI11); the work lives in inputs/sweep/report/output.
#include <algorithm>
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <csignal>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "core/scenario/codec.h"
#include "core/step/columns.h"
#include "core/step/estimate.h"
#include "core/data/tables.h"
#include "calibrate_cli.h"
#include "inputs.h"
#include "output.h"
#include "parallel.h"
#include "plan.h"
#include "report.h"
#include "sweep.h"
#include "core/serving/serving.h"
#include "values.h"

namespace {

using cli::kDefaultBase;

const char* kMainFooter = R"TXT(
SCENARIO is a JSON file, a preset scenario id (moe-roofline presets scenarios) or - for standard input.
A scenario names only what differs from the defaults, e.g. {"model":"deepseek-v3","hardware":"h800"}.
Wherever a model or GPU preset id goes, a path to a HuggingFace config.json (or a GPU JSON) works too.

Examples:
  moe-roofline presets models
  echo '{"model":"deepseek-v3","hardware":"h800","parallel":{"dp":32,"ep":32}}' | moe-roofline eval - --format table
  moe-roofline eval deepseek-v3-decode-h800-ep128 --set workload.batch=64 --format table
  moe-roofline sweep qwen3-30b-a3b-decode-h20-ep4 --axis workload.batch=1:512:x2 -o batch.csv
  moe-roofline url kimi-k2-decode-h200-ep16

Exit status: 0 success, 2 bad input (one line on stderr per problem), 130/143 interrupted.)TXT";

const char* kEvalFooter = R"TXT(
--format json prints one object: the output columns nested by their dots (prefill.step_ms ->
{"prefill":{"step_ms":...}}), plus "layers" (every operator with what bounds it), "errors" and "warnings".
--format table prints the headline numbers, the per-operator breakdown and the memory breakdown.
An invalid scenario exits 2 with one line on stderr per error ("parallel.ep: 48 does not divide 256 routed experts");
with --format json the object with its "errors" is still printed.

Examples:
  # DeepSeek-V3 decode on 32 H800s with DP-attention and EP32, as a table
  echo '{"model":"deepseek-v3","hardware":"h800","parallel":{"dp":32,"ep":32},"workload":{"phase":"decode"}}' \
    | moe-roofline eval - --format table
  # a preset scenario with FP8 KV cache and 64 sequences per rank, just the TPOT
  moe-roofline eval deepseek-v3-decode-h800-ep128 --set precision.kv_cache=fp8 --set workload.batch=64 \
    | jq .decode.tpot_ms
  # your own model: a HuggingFace config.json path wherever a preset id goes
  moe-roofline eval qwen3-30b-a3b-decode-h20-ep4 --set model=./my-model/config.json --format table)TXT";

const char* kSweepFooter = R"TXT(
VALUES (comma-separated items; numeric items may be ranges, and mix):
  1,2,4,8            a list                 1:1024:x2        geometric: 1, 2, 4, ..., 1024
  1024:8192:+1024    arithmetic (start, stop inclusive, step)
  deepseek-v3,kimi-k2   strings, for model, hardware, dtypes and choices (no ranges)
Grid order: the cartesian product, first --axis outermost, last --axis innermost (fastest changing).
CSV: one header line; axis columns (named by their path) first, then the output columns, whose names carry
their unit (_ms, _bytes, tokens_per_s, _params). Number cells are shortest round-trip decimals; booleans
true/false. A point whose scenario is invalid (e.g. ep does not divide the experts) gets status=error, the
message in error, and empty number cells; the sweep goes on. --columns picks output columns (moe-roofline
presets columns lists them); status and error are always kept, last. With -o FILE the CSV is written to a
temporary file beside FILE and renamed when complete: an error, Ctrl-C or a kill never leaves a partial FILE.
A progress line goes to stderr when the sweep runs over a second (--quiet turns it off).

Examples:
  # how TPOT grows with context for DeepSeek-V3 decode on 128 H800s
  moe-roofline sweep deepseek-v3-decode-h800-ep128 --axis workload.context_len=1024:131072:x2 \
    --columns decode.tpot_ms,memory.max_batch
  # EP size x batch on 256 GPUs (experts tensor-parallel over 256/ep), to a file
  moe-roofline sweep deepseek-v3-decode-h800-ep128 --set parallel.dp=256 --axis parallel.ep=8:256:x2 \
    --axis workload.batch=16:256:x2 --columns decode.tpot_ms,decode.tokens_per_s_per_gpu -o ep.csv
  # two models and two all-to-all backends, to standard output
  moe-roofline sweep kimi-k2-decode-h200-ep16 --axis model=deepseek-v3,kimi-k2 \
    --axis runtime.a2a_backend=deepep_low_latency,pplx --columns decode.tpot_ms
  # a million points on every core, or split over 4 machines (cat the 4 files: the same CSV)
  moe-roofline sweep deepseek-v3-decode-h800-ep128 --axis workload.batch=1:1024:+1 \
    --axis workload.context_len=1024:124928:+1024 --shard 2/4 -o part2.csv)TXT";

const char* kPlanFooter = R"TXT(
Searches the layouts of SCENARIO's model on --gpus GPUs of its hardware, at its workload (prompt_len,
output_len, prefill_tokens): tp / dp / ep / pp whose product divides the budget (the rest runs replicas), the
decode batch per attention-DP rank, MTP draft tokens 0..3 (models with MTP layers), weight and KV-cache formats
the model and GPU allow, two-batch overlap and the all-to-all backend (where ep > 1). Drops what does not fit or
misses the SLA and prints the Pareto front of output tokens/s per GPU against tokens/s per user, best per GPU
first, each row with its page link and the --engine's launch command. --all adds every other point with the
reason it is not on the front. --hardware and --engine take lists: one search per pair, one front, each row naming
its GPU and engine; --objective cost ranks by USD per million output tokens (the GPU-hour price: cost.gpu_hour_usd,
else the preset's example price). --space FILE narrows or widens the search, e.g.
  {"tp": [1, 8], "ep": [8, 16, 32, 64], "batch": [32, 64, 128], "mtp_draft_tokens": [0, 1],
   "weights": ["auto"], "kv_cache": ["fp8"], "two_batch_overlap": [true], "a2a_backend": ["auto"],
   "pp": [1, 2], "min_gpus_per_replica": 8, "max_gpus_per_replica": 64}
--threads N (default: every core) and --shard K/N (table and csv) as for sweep: the same bytes for any N threads,
and the N shards' outputs concatenated equal the unsharded output (a shard still searches the whole space: the
front needs every point; it prints its K-th of the rows).

Examples:
  # DeepSeek-V3 on 64 H200 at 2K in / 1K out, TPOT <= 30 ms
  echo '{"model":"deepseek-v3","hardware":"h200","workload":{"prompt_len":2048,"output_len":1024}}' |
    moe-roofline plan - --gpus 64 --tpot-ms 30
  # the same as CSV with vLLM commands, every point listed
  moe-roofline plan dsv3.json --gpus 64 --tpot-ms 30 --engine vllm --format csv --all > plan.csv
  # which GPU and engine: one front over three GPUs and two engines, cheapest per million output tokens first
  moe-roofline plan dsv3.json --gpus 64 --tpot-ms 30 --hardware h200,b200,gb200 --engine sglang,vllm --objective cost)TXT";

const char* kCalibrateFooter = R"TXT(
RUNS.csv has the columns of reference/serving_public.csv (one measured serving run per line: backend, model_path,
system, mode, isl, osl, quant modes, layout, batch, silicon_ttft_ms, silicon_tpot_ms; docs/cli.md lists them).
model_path and system may be HuggingFace names and systems of that file or our preset ids. Each engine with runs
gets its six constants fitted inside their documented ranges (docs/serving.md, "Serving"); the report gives the
median |error| with the shipped constants, after the fit (in sample) and held out (leave-one-out up to 10 runs,
else 5-fold: each run predicted by constants fitted without it), each constant with a 90% bootstrap interval, and
warns when the runs cannot pin a constant. ENGINES.json is presets/engines.json with the calibrated engines
replaced (the band's quantiles from the held-out predictions); use it with --engines on eval, sweep and plan.

Examples:
  moe-roofline calibrate my-runs.csv -o my-engines.json
  moe-roofline eval my-scenario.json --engines my-engines.json --format table)TXT";

const char* kPresetsFooter = R"TXT(
Kinds: models, hardware, scenarios (all three when omitted); fields lists every scenario path --set and --axis
accept (type, unit, default, range); columns lists the output columns (name, unit).
--presets-dir DIR adds DIR/models/*.json (HF config.json files), DIR/hardware/*.json and DIR/scenarios/*.json,
each under its file name without .json.

Examples:
  moe-roofline presets models
  moe-roofline presets fields
  moe-roofline --presets-dir ./my-presets presets models)TXT";

const char* kUrlFooter = R"TXT(
Prints the page link that reproduces SCENARIO (only the fields that differ from the defaults, base64url-encoded in
the #s= fragment). --decode does the reverse: prints the compact scenario JSON of a link or fragment, which eval
accepts on standard input.

Examples:
  moe-roofline url deepseek-v3-decode-h800-ep128
  moe-roofline url my-scenario.json --set workload.batch=32 --base https://example.org/moe-roofline/
  moe-roofline url --decode "$(moe-roofline url kimi-k2-decode-h200-ep16)" | moe-roofline eval - --format table)TXT";

// Each line of `message` (one per error) as "moe-roofline: LINE", at most kMaxMessage bytes (then "...").
constexpr std::size_t kMaxMessage = 300;
void print_lines(const std::string& message) {
    std::size_t start = 0;
    for (;;) {
        const std::size_t nl = message.find('\n', start);
        std::string line = "moe-roofline: " + message.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        if (line.size() > kMaxMessage) {
            std::size_t cut = kMaxMessage - 3;
            while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
            line = line.substr(0, cut) + "...";
        }
        std::fprintf(stderr, "%s\n", line.c_str());
        if (nl == std::string::npos) return;
        start = nl + 1;
    }
}

int fail(const std::string& message) {
    print_lines(message);
    return 2;
}

cli::ScenarioSource load_with_sets(const std::string& arg, const std::vector<std::string>& sets,
                                   const moe::Catalog& catalog) {
    cli::ScenarioSource src = cli::load_scenario_source(arg, catalog);
    for (const std::string& s : sets) cli::apply_set(src, s, catalog);
    return src;
}

int run_eval(const moe::Catalog& catalog, const std::string& arg, const std::vector<std::string>& sets,
             const std::string& format) {
    // Parsed here rather than by build_scenario: an invalid scenario still gets its JSON with "errors".
    moe::ParseResult r = moe::scenario_from_json(load_with_sets(arg, sets, catalog).json, catalog);
    moe::Estimate e;
    if (r.ok()) {
        e = moe::evaluate(r.scenario, moe::builtin_tables());  // validates, and reports errors in e.errors
    } else {
        e.ok = false;
        e.errors = std::move(r.errors);
    }
    if (format == "json") {
        std::cout << moe::estimate_to_json(e).dump(2) << '\n';
    } else if (e.ok) {
        std::cout << cli::estimate_table(r.scenario, e);
    }
    std::cout.flush();
    if (!e.ok) return fail(cli::issue_lines(e.errors));
    return 0;
}

int run_url(const moe::Catalog& catalog, const std::string& arg, const std::vector<std::string>& sets,
            const std::string& base, const std::string& decode) {
    if (!decode.empty()) {
        if (!arg.empty()) throw cli::UsageError("url: give either SCENARIO or --decode, not both");
        const std::size_t hash = decode.find('#');
        const std::string fragment = hash == std::string::npos ? decode : decode.substr(hash);
        moe::ParseResult r = moe::decode_fragment(fragment, catalog);
        if (!r.ok()) throw cli::UsageError(cli::issue_lines(r.errors, "--decode: "));
        std::cout << moe::scenario_to_json(r.scenario, true).dump() << '\n';
        return 0;
    }
    if (arg.empty()) throw cli::UsageError("url: give a SCENARIO (or --decode URL)");
    const moe::Scenario s = cli::build_scenario(load_with_sets(arg, sets, catalog), catalog);
    std::cout << moe::scenario_url(s, base) << '\n';
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"MoE Roofline: how fast and how big is this MoE (or dense) LLM deployment?", "moe-roofline"};
    app.require_subcommand(1);
    app.fallthrough();  // global options (--presets-dir) may follow the subcommand
    app.footer(kMainFooter);
    app.set_version_flag("--version", "moe-roofline 0.1.0");
    std::string presets_dir;
    app.add_option("--presets-dir", presets_dir,
                   "Add your own presets: DIR/models/*.json, DIR/hardware/*.json, DIR/scenarios/*.json")
        ->type_name("DIR");

    std::string scenario_arg, format = "json", columns, output = "-", base = kDefaultBase, decode, kind;
    std::vector<std::string> sets, axes;
    bool quiet = false, all = false;
    int threads = 0;
    std::string shard, space_file, engine = "sglang", hardware_list, objective = "throughput";
    int gpus = 0;
    double ttft_ms = 0, tpot_ms = 0, min_per_user = 0;
    std::string ttft_text;  // --ttft-ms: a number of ms, or none
    // A positive finite number, with a message that does not print the range's bounds.
    const CLI::Validator positive(
        [](std::string& v) -> std::string {
            double x = 0;
            if (!cli::parse_number(v, x) || !(x > 0)) return "must be a positive number, got '" + v.substr(0, 40) + "'";
            return {};
        },
        "X>0");
    auto add_scale_out = [&](CLI::App* sub) {
        sub->add_option("--threads", threads, "Threads (default: every core); the output does not depend on it")
            ->check(CLI::Range(1, 4096))
            ->type_name("N");
        sub->add_option("--shard", shard, "Write only part K of N of the rows (header in part 1): for CI matrices")
            ->type_name("K/N");
    };
    auto add_sets = [&](CLI::App* sub) {
        sub->add_option("--set", sets, "Override one scenario field (repeatable), e.g. --set parallel.ep=8")
            ->type_name("PATH=VALUE")
            ->allow_extra_args(false);
    };

    std::string engines_file;
    auto add_engines = [&](CLI::App* sub) {
        sub->add_option("--engines", engines_file, "Engine constants from a calibration (moe-roofline calibrate -o FILE) instead of the shipped ones")
            ->type_name("FILE");
    };
    std::string sla_at = "mean";
    cli::CalibrateCliOptions calibrate_options;

    CLI::App* eval = app.add_subcommand("eval", "Evaluate one scenario: times, throughput, operators, memory");
    eval->add_option("SCENARIO", scenario_arg, "Scenario file, preset scenario id, or - for standard input")
        ->required();
    add_sets(eval);
    eval->add_option("--format", format, "Output format (default json)")
        ->check(CLI::IsMember({"json", "table"}))
        ->type_name("json|table");
    add_engines(eval);
    eval->footer(kEvalFooter);

    CLI::App* sweep = app.add_subcommand("sweep", "Evaluate a grid of scenarios, one CSV row per point");
    sweep->add_option("SCENARIO", scenario_arg, "Base scenario: file, preset scenario id, or - for standard input")
        ->required();
    sweep->add_option("--axis", axes, "A grid axis (repeatable; the first is outermost), e.g. workload.batch=1:256:x2")
        ->type_name("PATH=VALUES")
        ->allow_extra_args(false)
        ->required();
    add_sets(sweep);
    sweep->add_option("--columns", columns, "Output columns, comma-separated (default: all)")->type_name("LIST");
    sweep->add_option("-o,--output", output, "CSV file, or - for standard output (default -)")->type_name("FILE");
    sweep->add_flag("-q,--quiet", quiet, "No progress line on stderr");
    add_scale_out(sweep);
    add_engines(sweep);
    sweep->footer(kSweepFooter);

    CLI::App* plan = app.add_subcommand("plan", "The best layouts on a GPU budget under an SLA (Pareto front)");
    plan->add_option("SCENARIO", scenario_arg, "Model, hardware and workload: file, preset scenario id, or -")
        ->required();
    add_sets(plan);
    plan->add_option("--gpus", gpus, "GPU budget")->required()->check(CLI::Range(1, 65536))->type_name("N");
    plan->add_option("--ttft-ms", ttft_text,
                     "SLA: largest time to first token (with the serving layer on, 10000 by default; none: no limit)")
        ->type_name("X|none");
    plan->add_option("--tpot-ms", tpot_ms, "SLA: largest time per output token")->check(positive)->type_name("Y");
    plan->add_option("--min-tokens-per-s-per-user", min_per_user, "SLA: smallest tokens/s seen by one user")
        ->check(positive)
        ->type_name("Z");
    plan->add_option("--space", space_file, "JSON file narrowing or widening the search space")->type_name("FILE");
    plan->add_option("--engine", engine, "Engine(s) of the plan: serving constants, limits on layouts, launch commands (default: the scenario's runtime.engine); a list searches each and merges the fronts")
        ->type_name("sglang|vllm|trtllm[,...]");
    plan->add_option("--hardware", hardware_list, "GPU preset id(s) to plan on instead of the scenario's hardware; a list searches each and merges the fronts")
        ->type_name("ID[,...]");
    plan->add_option("--objective", objective, "What the front ranks by: output tokens/s per GPU, or USD per million output tokens (default throughput)")
        ->check(CLI::IsMember({"throughput", "cost"}))
        ->type_name("throughput|cost");
    plan->add_option("--format", format, "Output format (default table)")
        ->check(CLI::IsMember({"table", "csv", "json"}))
        ->type_name("table|csv|json");
    plan->add_flag("--all", all, "Also list every point not on the front, with the reason");
    plan->add_option("--base", base, "Page address of the links")->type_name("URL");
    plan->add_option("--sla-at", sla_at, "Check the TTFT / TPOT limits against the mean or the band's p90 (default mean)")
        ->check(CLI::IsMember({"mean", "p90"}))
        ->type_name("mean|p90");
    add_scale_out(plan);
    add_engines(plan);
    plan->footer(kPlanFooter);

    CLI::App* calibrate = app.add_subcommand("calibrate", "Fit the engine constants to your measured serving runs");
    calibrate->add_option("RUNS", calibrate_options.runs, "CSV of measured runs (reference/serving_public.csv's columns)")
        ->required()
        ->type_name("RUNS.csv");
    calibrate->add_option("-o,--output", calibrate_options.output, "Engines file to write (presets/engines.json's format)")
        ->required()
        ->type_name("ENGINES.json");
    calibrate->add_option("--bootstrap", calibrate_options.bootstrap, "Bootstrap resamples for the intervals (default 30)")
        ->check(CLI::Range(0, 1000))
        ->type_name("N");
    calibrate->add_option("--folds", calibrate_options.folds, "Held-out folds (default: leave-one-out up to 10 runs, else 5)")
        ->check(CLI::Range(2, 100))
        ->type_name("K");
    calibrate->add_flag("-q,--quiet", calibrate_options.quiet, "No progress lines on stderr");
    calibrate->add_option("--test", calibrate_options.test, "Runs kept out of the fit: their error with the shipped and the calibrated constants")
        ->type_name("OTHER.csv");
    calibrate->footer(kCalibrateFooter);

    CLI::App* presets = app.add_subcommand("presets", "List preset models, hardware and scenarios");
    presets->add_option("KIND", kind, "models, hardware, scenarios, fields or columns")
        ->check(CLI::IsMember({"models", "hardware", "scenarios", "fields", "columns"}));
    presets->footer(kPresetsFooter);

    CLI::App* url = app.add_subcommand("url", "Print the shareable page link for a scenario");
    url->add_option("SCENARIO", scenario_arg, "Scenario file, preset scenario id, or - for standard input");
    add_sets(url);
    url->add_option("--base", base, "Page address the fragment is appended to")->type_name("URL");
    url->add_option("--decode", decode, "Print the compact scenario JSON of a page link or #s= fragment")
        ->type_name("URL");
    url->footer(kUrlFooter);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        const CLI::App* sub = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
        std::string hint = sub ? "moe-roofline " + sub->get_name() + " --help" : "moe-roofline --help";
        return fail(std::string(e.what()) + " (see " + hint + ")");
    }

    try {
        const moe::Catalog catalog = cli::load_catalog(presets_dir);
        if (*calibrate) {
            if (calibrate_options.output == "-") throw cli::UsageError("calibrate: -o needs a file (the report goes to standard output)");
            return cli::run_calibrate(catalog, calibrate_options);
        }
        moe::EngineSet engines;
        if (!engines_file.empty()) engines = cli::load_engines_file(engines_file);
        const cli::EnginesScope engines_scope(engines_file.empty() ? nullptr : &engines);
        if (*eval) return run_eval(catalog, scenario_arg, sets, format);
        if (*sweep) {
            cli::install_interrupt_handlers();
            cli::SweepOptions options;
            options.axes = axes;
            options.columns = columns;
            options.output = output;
            options.progress = !quiet;
            options.threads = threads;
            if (!shard.empty()) options.shard = cli::parse_shard(shard, "--shard");
            return cli::run_sweep(load_with_sets(scenario_arg, sets, catalog), catalog, options);
        }
        if (*plan) {
            cli::install_interrupt_handlers();
            const auto split_list = [](const std::string& text) {  // "a,b,,c" -> a, b, c
                std::vector<std::string> out;
                std::size_t at = 0;
                while (at <= text.size()) {
                    const std::size_t comma = std::min(text.find(',', at), text.size());
                    if (comma > at) out.push_back(text.substr(at, comma - at));
                    at = comma + 1;
                }
                return out;
            };
            cli::PlanOptions options;
            options.request.gpus = gpus;
            if (ttft_text.empty()) {
                options.ttft_default = true;
            } else if (ttft_text != "none") {
                if (!cli::parse_number(ttft_text, ttft_ms) || !(ttft_ms > 0))
                    throw cli::UsageError("--ttft-ms: must be a positive number or none, got '" + ttft_text.substr(0, 40) + "'");
            }
            options.request.sla.ttft_ms = ttft_ms;
            options.request.sla.tpot_ms = tpot_ms;
            options.request.sla.min_tokens_per_s_per_user = min_per_user;
            options.request.sla.at_p90 = sla_at == "p90";
            // --engine and --hardware take comma lists (issue 28): one search per pair, one front
            for (const std::string& e : split_list(engine)) {
                moe::ServingEngine k;
                if (!moe::parse_serving_engine(e, k))
                    throw cli::UsageError("--engine: '" + e.substr(0, 40) + "' is not sglang, vllm or trtllm");
                if (std::find(options.engines.begin(), options.engines.end(), k) == options.engines.end()) options.engines.push_back(k);
            }
            options.request.engine = options.engines.empty() ? moe::ServingEngine::sglang : options.engines.front();
            options.engine_given = plan->count("--engine") > 0;
            if (!options.engine_given || options.engines.size() == 1) options.engines.clear();
            for (const std::string& h : split_list(hardware_list)) {
                if (!catalog.gpu(h)) throw cli::UsageError("--hardware: '" + h.substr(0, 40) + "' is not a hardware preset (moe-roofline presets hardware)");
                if (std::find(options.hardware.begin(), options.hardware.end(), h) == options.hardware.end()) options.hardware.push_back(h);
            }
            moe::parse_plan_objective(objective, options.request.objective);
            options.space_file = space_file;
            options.format = plan->count("--format") ? format : "table";
            options.all = all;
            options.threads = threads;
            if (!shard.empty()) options.shard = cli::parse_shard(shard, "--shard");
            options.base_url = base;
            return cli::run_plan(load_with_sets(scenario_arg, sets, catalog), catalog, options);
        }
        if (*presets) {
            std::string out;
            cli::presets_listing(catalog, kind, out);
            std::cout << out;
            return 0;
        }
        if (*url) return run_url(catalog, scenario_arg, sets, base, decode);
    } catch (const cli::UsageError& e) {
        return fail(e.what());
    } catch (const cli::Interrupted&) {
        const int sig = cli::g_interrupt_signal;
        if (sig == SIGPIPE) return 128 + sig;  // the reader went away (`| head`): nobody to tell
        print_lines(std::string("interrupted; ") +
                    (output == "-" ? "the output is incomplete" : cli::shown_path(output) + " was left as it was"));
        return 128 + sig;
    } catch (const std::exception& e) {
        print_lines(std::string("internal error: ") + e.what());
        return 1;
    }
    return 0;
}
