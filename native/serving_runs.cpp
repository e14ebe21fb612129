// serving_runs.cpp — measured serving runs as scenarios (see serving_runs.h).
#include "serving_runs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "core/scenario/codec.h"
#include "serving_recipes.h"

namespace runs {
namespace {

struct ModelMap {
    const char* hf_name;   // model_path in the CSV
    const char* preset;    // our preset id
    const char* family;    // left out together in the fit
    // The FP8 checkpoint InferenceMAX serves for an "fp8" run is 128 x 128 block-scaled (its config's
    // weight_block_size, ../shared/anchors/aic/model_configs): MiniMaxAI--MiniMax-M2.5, zai-org--GLM-5-FP8; Qwen's
    // FP8 releases all are (Qwen3-235B-A22B-FP8, Qwen3-30B-A3B-FP8, Qwen3-32B-FP8 there; Qwen3.5-397B-A17B-FP8's
    // config is not in the set and is taken as its family's). Llama's FP8 checkpoints (NVIDIA ModelOpt) are per tensor.
    bool fp8_block = false;
};
// Models of the file and our presets (configs: ../shared/anchors/aic/model_configs, presets/models/README.md).
const ModelMap kModels[] = {
    {"MiniMaxAI/MiniMax-M2.5", "minimax-m2.5", "MiniMax-M2.5", true},
    {"openai/gpt-oss-120b", "gpt-oss-120b", "gpt-oss"},
    {"meta-llama/Llama-3.1-70B", "llama-3.1-70b", "Llama-3.1"},
    {"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", "Llama-3.1"},
    {"nvidia/Llama-3.1-8B-Instruct-FP8", "llama-3.1-8b", "Llama-3.1"},
    {"Qwen/Qwen3-32B", "qwen3-32b", "Qwen3-32B"},
    {"nvidia/Qwen3-32B-NVFP4", "qwen3-32b", "Qwen3-32B"},
    {"Qwen/Qwen3.5-397B-A17B", "qwen3.5-397b-a17b", "Qwen3.5", true},
    {"zhipuai/GLM-5", "glm-5", "GLM-5", true},
    {"moonshotai/Kimi-K2.5", "kimi-k2.5", "Kimi-K2.5"},
};
// The checkpoint a run served, where its own config prices it better than one format for every layer. A quantised
// checkpoint keeps some modules in BF16 (its exclusion list: core/scenario/quant_exclusions.cpp), which the CSV's
// quant-mode columns do not say: they name one format for all GEMMs ("nvfp4" for every FP4 run, gpt-oss's MXFP4
// included). Each of these runs takes the preset of the checkpoint it served with its formats left to that config:
// - gpt-oss "fp4": openai/gpt-oss-120b itself, MXFP4 experts, attention / router / embeddings BF16
//   (modules_to_not_convert);
// - Kimi-K2.5 "int4": moonshotai/Kimi-K2.5 itself, INT4 experts, attention / shared / dense layers BF16 (ignore);
// - the other "fp4" runs: NVIDIA's NVFP4 checkpoints (ModelOpt), attention left in BF16 in each; Qwen3.5's shared
//   experts and MTP layer too, GLM-5's DSA indexer and MTP layer (their ignore / exclude_modules).
// Configs: ../shared/anchors/aic/model_configs (presets/models/README.md). Other rows keep the CSV's formats: FP8
// checkpoints quantise every linear layer but the router and the LM head, as the model prices them anyway; the FP4
// runs of Llama-3.1-70B and Qwen3-32B, whose NVFP4 configs are not in the set, quantise every layer; AIC's five "fp8"
// gpt-oss runs (TensorRT-LLM on H100) keep FP8, the harness's format for them not being published.
struct ServedCheckpoint {
    const char* hf_name;    // model_path in the CSV
    const char* precision;  // the CSV's precision
    const char* preset;     // the checkpoint's preset
    // TensorRT-LLM's launch keeps the KV cache at the model dtype on Hopper (the checkpoint has no KV quantisation):
    // InferenceMAX's gpt-oss launch sets kv_cache_config dtype fp8 on B200 and auto (BF16) on H200
    // (benchmarks/single_node/gptoss_fp4_{b200,h200}_trt.sh)
    bool trtllm_bf16_kv_on_hopper = false;
};
const ServedCheckpoint kServed[] = {
    {"openai/gpt-oss-120b", "fp4", "gpt-oss-120b", true},
    {"moonshotai/Kimi-K2.5", "int4", "kimi-k2.5"},
    {"moonshotai/Kimi-K2.5", "fp4", "kimi-k2.5-nvfp4"},
    {"MiniMaxAI/MiniMax-M2.5", "fp4", "minimax-m2.5-nvfp4"},
    {"Qwen/Qwen3.5-397B-A17B", "fp4", "qwen3.5-397b-a17b-nvfp4"},
    {"zhipuai/GLM-5", "fp4", "glm-5-nvfp4"},
};
const ServedCheckpoint* served_checkpoint(const std::string& model, const std::string& precision) {
    for (const ServedCheckpoint& c : kServed)
        if (model == c.hf_name && precision == c.precision) return &c;
    return nullptr;
}

// DESIGN §8.3: systems to hardware ids.
const std::pair<const char*, const char*> kSystems[] = {
    {"h100_sxm", "h100-sxm"}, {"h200_sxm", "h200"}, {"b200_sxm", "b200"},
    {"b300_sxm", "b300"},     {"gb200", "gb200"},   {"gb300", "gb300"},
};

int to_int(const std::string& s, int dflt) {
    if (s.empty()) return dflt;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    return end && *end == 0 && std::isfinite(v) ? int(v) : dflt;
}

// Cell `c` of a CSV line `v` by the header's column map; "" when the column or the cell is missing.
std::string cell_of(const std::map<std::string, size_t>& col, const std::vector<std::string>& v, const char* c) {
    const auto it = col.find(c);
    return it != col.end() && it->second < v.size() ? v[it->second] : "";
}

// The run's concurrency from the source column ("...; silicon_concurrency=5; ..."), 0 if absent.
int source_concurrency(const std::string& source) {
    const std::string key = "silicon_concurrency=";
    const size_t at = source.find(key);
    return at == std::string::npos ? 0 : std::max(0, std::atoi(source.c_str() + at + key.size()));
}

// The benchmark client of a row, from its source column. InferenceMAX's runs (its dashboard exports
// "source_file=<date>.csv model=... image=...", its database dump "db-dump/... workflow_run_id=...", and the
// "gap-analysis" file that repeats them) use its sa-bench client: lengths drawn uniformly from [0.8 L, L]
// (`--random-range-ratio 0.8`: serving.length_spread 0.2) and 10 x concurrency prompts (serving.requests_per_client
// 10, the default). The other sources are AIConfigurator's own collection (one file per model), whose client settings
// are not published.
bool inferencemax_source(const std::string& source) {
    const bool dated_export = source.rfind("source_file=20", 0) == 0 && source.find(" model=") != std::string::npos;
    return dated_export || source.rfind("db-dump/", 0) == 0 || source.find("gap-analysis") != std::string::npos;
}
// The length spread of a row's benchmark. AIConfigurator's collection: taken as fixed ISL / OSL, closed-loop clients
// that all finish together send together again, so the simulated engine sees the same burst every round (the first
// wave never disperses: vLLM's 114 AIC-collected runs came out a median 2.7x too slow in TTFT). The measured TTFTs
// show the bursts do disperse: by the clients' and frontend's jitter, or lengths that are not quite fixed. Neither is
// published, so the validator gives those runs a 10% length spread as that dispersion's stand-in: the best in-sample
// median of 0, 0.05, 0.1, 0.2 and 0.3 with the engine constants held (TTFT 24.8, 23.7, 22.9, 23.5, 23.9%; measured
// 2026-11-26 on the 2,728 evaluated runs). One number for one harness, not a product constant: a user's scenario says
// its own serving.length_spread.
constexpr double kAicLengthSpread = 0.1;
double length_spread_of(const std::string& source) { return inferencemax_source(source) ? 0.2 : kAicLengthSpread; }

// The layout an InferenceMAX run was launched with, from its id: the recipe's TP (the GPUs one server uses) and EP_SIZE,
// written "_tp4_ep4_" or "_tp4_0_ep4_0_" (the dashboard exports, the gap-analysis files). {0, 0}: the id names none.
struct IdLayout {
    int gpus = 0, ep = 0;
};
IdLayout id_layout(const std::string& id) {
    for (size_t at = id.find("_tp"); at != std::string::npos; at = id.find("_tp", at + 1)) {
        size_t i = at + 3;
        auto number = [&](int& out) {
            const size_t start = i;
            while (i < id.size() && std::isdigit(static_cast<unsigned char>(id[i]))) ++i;
            if (i == start || i - start > 4) return false;
            out = std::atoi(id.c_str() + start);
            if (id.compare(i, 2, "_0") == 0 && (i + 2 == id.size() || id[i + 2] == '_')) i += 2;  // "4_0": 4.0
            return out > 0;
        };
        IdLayout l;
        if (!number(l.gpus) || id.compare(i, 3, "_ep") != 0) continue;
        i += 3;
        if (number(l.ep) && i < id.size() && id[i] == '_') return l;
    }
    return {};
}

// The layout columns of an aggregated row, as the model's parallel {tp, dp, ep}. Two of the serving set's sources
// write the columns of expert-parallel runs scaled by the EP size: InferenceMAX's 2026-04-06 dashboard export and its
// database dump. The same measurement (identical TTFT and TPOT) appears in the 2026-03-25 export or a gap-analysis
// file with the columns its id names: Qwen3.5 on B200 launched TP 4, EP 4 (4 GPUs) is tp_size 4, moe_tp 1, ep 4 there
// and tp_size 16, moe_tp 4, ep 4 in the dump and the later export; gpt-oss on B200 with attention DP, TP 4, EP 4 is
// attention DP 4 there and 16 in the later export; vLLM's attention-DP runs, TP 4, EP 4, write ep 16. So:
//   * a row whose id names the launch (IdLayout) takes it: gpus = TP, ep = EP_SIZE, attention DP over all of them
//     when the row marks attention DP (the recipes' DP_ATTENTION), else TP over them;
//   * a database-dump row (its id names no layout) with ep > 1 reverses the dump's scaling, as every dump row with a
//     twin in the exports shows (58 pairs, three layouts): without attention DP the GPUs are moe_tp_size (tp_size
//     is moe_tp x ep), with it the GPUs are tp_size and ep is ep / attention DP.
// `fixed` says the columns were not taken as written.
struct AggLayout {
    int tp = 1, dp = 1, ep = 1, pp = 1;
    bool fixed = false;     // the columns disagreed with the id, or a dump row's scaling was reversed
};
AggLayout agg_layout(const std::string& id, const std::string& source, int tp_col, int dp_col, int moe_tp_col, int ep_col, int pp_col) {
    AggLayout l;
    l.tp = std::max(1, tp_col), l.dp = std::max(1, dp_col), l.ep = std::max(1, ep_col), l.pp = std::max(1, pp_col);
    const IdLayout n = id_layout(id);
    if (n.gpus > 0) {
        const bool agree = l.tp * l.dp == n.gpus && l.ep == n.ep;
        if (!agree && n.gpus % n.ep == 0) {
            l.dp = dp_col > 1 ? n.gpus : 1;
            l.tp = n.gpus / l.dp;
            l.ep = n.ep;
            l.fixed = true;
        }
    } else if (source.rfind("db-dump/", 0) == 0 && ep_col > 1) {
        const int gpus = dp_col > 1 ? std::max(1, tp_col) : std::max(1, moe_tp_col);
        const int ep = dp_col > 1 ? ep_col / dp_col : ep_col;
        if (ep >= 1 && gpus % ep == 0 && (dp_col <= 1 || ep_col % dp_col == 0)) {
            l.dp = dp_col > 1 ? gpus : 1;
            l.tp = gpus / l.dp;
            l.ep = ep;
            l.fixed = true;
        }
    }
    return l;
}

// A short name for the row's source: InferenceMAX's dashboard export, database dump or gap analysis, or the file of
// AIConfigurator's own collection; " (wip)" when the source marks the run work in progress (wip=True).
std::string source_label(const std::string& source) {
    std::string label;
    if (source.rfind("db-dump/", 0) == 0) label = "InferenceMAX database dump";
    else if (source.find("gap-analysis") != std::string::npos) label = "InferenceMAX gap analysis";
    else if (inferencemax_source(source)) label = "InferenceMAX dashboard export";
    else if (source.rfind("source_file=", 0) == 0) label = "AIConfigurator file " + source.substr(12, source.find(';') == std::string::npos ? std::string::npos : source.find(';') - 12);
    else label = source.empty() ? "(no source)" : "other";
    if (source.find("wip=True") != std::string::npos) label += " (wip)";
    return label;
}

// The engine build of a row: the container image its source names (a "repo/name:tag" field, as InferenceMAX's
// sources write it), else the backend and its backend_version column ("sglang 0.5.1.post1").
std::string build_label(const std::string& source, const std::string& backend, const std::string& version) {
    size_t start = 0;
    while (start < source.size()) {
        size_t end = source.find(';', start);
        if (end == std::string::npos) end = source.size();
        std::string f = source.substr(start, end - start);
        while (!f.empty() && f.front() == ' ') f.erase(f.begin());
        while (!f.empty() && f.back() == ' ') f.pop_back();
        if (f.find('/') != std::string::npos && f.find(':') != std::string::npos && f.find('=') == std::string::npos) return f;
        start = end + 1;
    }
    return version.empty() ? backend : backend + " " + version;
}

// A quant mode of the CSV as our dtype ("" = the checkpoint's own).
bool quant_dtype(const std::string& q, std::string& out) {
    if (q.empty()) { out = "auto"; return true; }
    if (q == "fp8" || q == "fp8_block") { out = "fp8"; return true; }
    if (q == "nvfp4") { out = "nvfp4"; return true; }
    if (q == "bf16" || q == "float16") { out = "bf16"; return true; }
    if (q == "int4_wo") { out = "int4"; return true; }  // weight-only INT4 (Kimi-K2.5's compressed-tensors experts)
    return false;
}

// "runs.csv line 7, column isl"
std::string at(const std::string& path, int line, const char* column) {
    return path + " line " + std::to_string(line) + ", column " + column;
}

// Columns that hold numbers (an empty cell is "not given"), and those every run needs.
const char* const kNumeric[] = {"isl", "osl", "batch_size", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size",
                                "moe_ep_size", "prefill_batch_size", "prefill_num_workers", "prefill_tp_size",
                                "prefill_pp_size", "prefill_attention_dp_size", "prefill_moe_tp_size",
                                "prefill_moe_ep_size", "decode_batch_size", "decode_num_workers", "decode_tp_size",
                                "decode_pp_size", "decode_attention_dp_size", "decode_moe_tp_size",
                                "decode_moe_ep_size", "silicon_ttft_ms", "silicon_tpot_ms"};
const char* const kPositive[] = {"isl", "osl", "silicon_ttft_ms", "silicon_tpot_ms"};

// calibrate's checks of one row: its cell count, numbers, engine and mode. False with `err`.
bool strict_row(const std::string& path, int line, const std::vector<std::string>& header,
                const std::vector<std::string>& v, std::string& err) {
    if (v.size() != header.size()) {
        err = path + " line " + std::to_string(line) + ": " + std::to_string(v.size()) + " cells, the header has " +
              std::to_string(header.size());
        return false;
    }
    auto cell = [&](const char* c) -> const std::string* {
        for (size_t i = 0; i < header.size(); ++i)
            if (header[i] == c) return &v[i];
        return nullptr;
    };
    for (const char* c : kNumeric) {
        const std::string* s = cell(c);
        if (!s || s->empty()) continue;
        char* end = nullptr;
        const double x = std::strtod(s->c_str(), &end);
        if (end == s->c_str() || *end != 0 || !std::isfinite(x) || x < 0) {
            err = at(path, line, c) + ": '" + s->substr(0, 40) + "' is not a non-negative number";
            return false;
        }
    }
    for (const char* c : kPositive) {
        const std::string* s = cell(c);
        if (!s || s->empty() || !(std::strtod(s->c_str(), nullptr) > 0)) {
            err = at(path, line, c) + ": must be a positive number (got '" + (s ? s->substr(0, 40) : std::string()) + "')";
            return false;
        }
    }
    const std::string* b = cell("backend");
    if (!b || (*b != "sglang" && *b != "vllm" && *b != "trtllm")) {
        err = at(path, line, "backend") + ": '" + (b ? b->substr(0, 40) : std::string()) + "' is not sglang, vllm or trtllm";
        return false;
    }
    const std::string* m = cell("mode");
    if (!m || (*m != "agg" && *m != "disagg")) {
        err = at(path, line, "mode") + ": '" + (m ? m->substr(0, 40) : std::string()) + "' is not agg or disagg";
        return false;
    }
    return true;
}

}  // namespace

std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> cells;
    std::string cur;
    bool q = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (q) {
            if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') { cur += '"'; ++i; }
            else if (ch == '"') q = false;
            else cur += ch;
        } else if (ch == '"') q = true;
        else if (ch == ',') { cells.push_back(cur); cur.clear(); }
        else if (ch != '\r') cur += ch;
    }
    cells.push_back(cur);
    return cells;
}

std::vector<Run> parse_runs(const std::string& text, const std::string& path, const moe::Catalog& cat,
                            const moe::Tables& tables, const LoadOptions& o, std::string& err) {
    std::istringstream f(text);
    std::string line;
    std::getline(f, line);
    int line_no = 1;
    const std::vector<std::string> header = split_csv_line(line);
    std::map<std::string, size_t> col;
    for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
    for (const char* need : {"id", "backend", "model_path", "system", "mode", "isl", "osl", "gemm_quant_mode", "moe_quant_mode",
                             "batch_size", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size",
                             "silicon_ttft_ms", "silicon_tpot_ms"})
        if (!col.count(need)) {
            err = path + ": no column " + need;
            return {};
        }
    // The same measurement in several sources (InferenceMAX's runs appear in its dashboard exports, its database dump
    // and the gap-analysis files, up to four times): counted once. Key: model, system, engine, mode, lengths, the
    // source's concurrency and the measured TTFT and TPOT to 0.01 ms (the sources print different digits). Kept: the
    // row whose columns its id confirms (or that no id contradicts), then a row whose layout came from its id, then a
    // database-dump row, each preferring a copy whose source names its image; the first in the file among equals.
    std::map<std::string, std::pair<int, int>> best;  // key -> (rank, line) of the row kept
    std::vector<std::string> keys;                    // each line's key (index: line - 2)
    {
        std::istringstream g(text);
        std::string l;
        std::getline(g, l);
        int n = 1;
        while (std::getline(g, l)) {
            ++n;
            if (l.empty() || l == "\r") {
                keys.push_back("");
                continue;
            }
            const std::vector<std::string> v = split_csv_line(l);
            auto get = [&](const char* c) { return cell_of(col, v, c); };
            const std::string source = get("silicon_data_source");
            const double ttft = std::strtod(get("silicon_ttft_ms").c_str(), nullptr), tpot = std::strtod(get("silicon_tpot_ms").c_str(), nullptr);
            char cell[64];
            std::snprintf(cell, sizeof cell, "|%.2f|%.2f", ttft, tpot);
            const std::string key = get("model_path") + "|" + get("system") + "|" + get("backend") + "|" + get("mode") + "|" +
                                    get("isl") + "|" + get("osl") + "|" + std::to_string(source_concurrency(source)) + cell;
            const AggLayout la = agg_layout(get("id"), source, to_int(get("tp_size"), 1), to_int(get("attention_dp_size"), 1),
                                            to_int(get("moe_tp_size"), 1), to_int(get("moe_ep_size"), 1), 1);
            // (then, at the same rank, a copy whose source names the image it ran: the recipe keyed by the image,
            // inferencemax_mtp_recipe, needs it, and a file's order must not decide)
            const int rank = 2 * (source.rfind("db-dump/", 0) == 0 ? 2 : la.fixed ? 1 : 0) + (source.find("image=") == std::string::npos ? 1 : 0);
            keys.push_back(key);
            if (!(ttft > 0) || !(tpot > 0)) continue;  // nothing measured: not a repeat of anything
            auto [it, fresh] = best.insert({key, {rank, n}});
            if (!fresh && rank < it->second.first) it->second = {rank, n};
        }
    }
    std::vector<Run> rows;
    while (std::getline(f, line)) {
        ++line_no;
        if (line.empty() || line == "\r") continue;
        const std::vector<std::string> v = split_csv_line(line);
        auto get = [&](const char* c) { return cell_of(col, v, c); };
        if (o.strict && !strict_row(path, line_no, header, v, err)) return {};
        Run r;
        r.line = line_no;
        r.sim = o.simulate;
        r.id = get("id");
        r.model = get("model_path");
        r.system = get("system");
        r.backend = get("backend");
        r.mode = get("mode");
        r.isl = to_int(get("isl"), 0);
        r.osl = to_int(get("osl"), 0);
        r.ttft = std::strtod(get("silicon_ttft_ms").c_str(), nullptr);
        r.aic_client = !inferencemax_source(get("silicon_data_source"));
        r.source = source_label(get("silicon_data_source"));
        r.build = build_label(get("silicon_data_source"), r.backend, get("backend_version"));
        r.tpot = std::strtod(get("silicon_tpot_ms").c_str(), nullptr);
        const ModelMap* mm = nullptr;
        for (const ModelMap& m : kModels)
            if (r.model == m.hf_name) mm = &m;
        ModelMap own{r.model.c_str(), r.model.c_str(), r.model.c_str()};  // strict: a preset id is its own family
        if (!mm && o.strict && cat.model(r.model)) mm = &own;
        r.family = mm ? mm->family : r.model;
        const char* hw = nullptr;
        for (const auto& s : kSystems)
            if (r.system == s.first) hw = s.second;
        if (!hw && o.strict && cat.gpu(r.system)) hw = r.system.c_str();
        if (o.strict) {
            const char* bad = !mm ? "model_path" : !hw ? "system" : nullptr;
            if (bad) {
                err = at(path, line_no, bad) + ": '" + get(bad).substr(0, 60) + "' is " +
                      (std::string(bad) == "system" ? "neither a system of reference/serving_public.csv nor a hardware preset id (moe-roofline presets hardware)"
                                                    : "neither a model of reference/serving_public.csv nor a model preset id (moe-roofline presets models)");
                return {};
            }
            std::string q;
            for (const char* c : {"gemm_quant_mode", "moe_quant_mode"})
                if (!quant_dtype(get(c), q)) {
                    err = at(path, line_no, c) + ": '" + get(c).substr(0, 40) + "' is not a quant mode (empty, fp8, fp8_block, nvfp4, bf16, float16, int4_wo)";
                    return {};
                }
        }
        std::string wq, eq;
        if (!mm) r.skip = "no preset for model " + r.model;
        else if (!hw) r.skip = "no mapping for system " + r.system;
        else if (!cat.model(mm->preset)) r.skip = "no preset " + std::string(mm->preset);
        else if (!cat.gpu(hw)) r.skip = "no hardware preset " + std::string(hw);
        else if (!quant_dtype(get("gemm_quant_mode"), wq) || !quant_dtype(get("moe_quant_mode"), eq))
            r.skip = "unknown quant mode " + get("gemm_quant_mode") + "/" + get("moe_quant_mode");
        else if (!(r.ttft > 0) || !(r.tpot > 0) || r.isl <= 0 || r.osl <= 0)
            r.skip = "no measured TTFT/TPOT";
        if (r.skip.empty() && size_t(line_no - 2) < keys.size()) {
            const auto it = best.find(keys[size_t(line_no - 2)]);
            if (it != best.end() && it->second.second != line_no) {
                r.repeat = true;
                r.skip = "a repeat of another source's measurement (the same run, counted once)";
            }
        }
        if (r.skip.empty()) {
            const ServedCheckpoint* ckpt = served_checkpoint(r.model, get("precision"));
            nlohmann::json j = {{"model", ckpt ? ckpt->preset : mm->preset}, {"hardware", hw}};
            j["runtime"]["engine"] = r.backend;
            if (!ckpt) {
                j["precision"]["weights"] = wq;
                if (eq != "auto") j["precision"]["experts"] = eq;
            }
            // AIConfigurator's rows name the FP8 flavour in its own terms: fp8 (per-tensor scaled_mm) or fp8_block
            // (DeepGEMM's 128x128 blocks). InferenceMAX's say "fp8" for any FP8 checkpoint: the run served that
            // checkpoint's own scaling, block where ModelMap::fp8_block says so, else the preset's (auto: its
            // weight_block_size, else per tensor)
            const bool imax = inferencemax_source(get("silicon_data_source"));
            if (get("gemm_quant_mode") == "fp8" && (!imax || mm->fp8_block))
                j["precision"]["fp8_scaling"] = imax ? "block" : "tensor";
            else if (get("gemm_quant_mode") == "fp8_block") j["precision"]["fp8_scaling"] = "block";
            // TensorRT-LLM serves FP8 and NVFP4 checkpoints (NVIDIA ModelOpt) with an FP8 KV cache
            // (kv_cache_quant_algo FP8 in their hf_quant_config.json), but where the served checkpoint says otherwise
            // (ServedCheckpoint::trtllm_bf16_kv_on_hopper); the other engines default to the model dtype.
            const bool hopper = r.system == "h100_sxm" || r.system == "h200_sxm";
            const bool bf16_kv = ckpt && ckpt->trtllm_bf16_kv_on_hopper && hopper;
            if (r.backend == "trtllm" && (wq == "fp8" || wq == "nvfp4") && !bf16_kv) j["precision"]["kv_cache"] = "fp8";
            if (imax && r.mode == "agg" && inferencemax_fp8_kv(r.backend, get("model_path"), get("system"), get("precision")))
                j["precision"]["kv_cache"] = "fp8";
            j["serving"]["isl"] = r.isl;
            j["serving"]["osl"] = r.osl;
            j["serving"]["length_spread"] = length_spread_of(get("silicon_data_source"));
            // GLM-5 on H200 (the glm5-hopper image) ran its own client: benchmarks/single_node/glm5_fp8_h200.sh@0c82808
            // (PR #914) sends CONC x 5 prompts (--num-prompts), not sa-bench's x 10. (Its later version, @d695059, adds
            // EAGLE drafts and attention DP; the runs' TPOT is the model's without drafts, median bias 0-3%, so they
            // ran the first.)
            if (imax && r.backend == "sglang" && get("model_path") == "zhipuai/GLM-5" && r.system == "h200_sxm" && get("precision") == "fp8")
                j["serving"]["requests_per_client"] = 5;
            if (imax && inferencemax_mtp_recipe(r.backend, get("model_path"), get("precision"), get("silicon_data_source")))
                j["runtime"]["speculative"] = {{"method", "mtp"}, {"draft_tokens", 3}, {"acceptance", "vllm-mtp8-gsm8k"}};
            if (r.backend == "sglang" && inferencemax_source(get("silicon_data_source"))) {
                const int conc = source_concurrency(get("silicon_data_source"));
                const int n = sglang_recv_interval(get("model_path"), get("system"), get("precision"), conc);
                if (n > 1) j["serving"]["scheduler_recv_interval"] = n;
            }
            auto layout = [&](const std::string& p, nlohmann::json& out) {
                const int tp = to_int(get((p + "tp_size").c_str()), 1), dp = std::max(1, to_int(get((p + "attention_dp_size").c_str()), 1));
                const int ep = std::max(1, to_int(get((p + "moe_ep_size").c_str()), 1)), pp = std::max(1, to_int(get((p + "pp_size").c_str()), 1));
                out = {{"tp", tp}, {"dp", dp}, {"ep", ep}, {"pp", pp}};
                return dp;
            };
            if (r.mode == "agg") {
                j["serving"]["mode"] = "aggregated";
                AggLayout l = agg_layout(r.id, get("silicon_data_source"), to_int(get("tp_size"), 1), to_int(get("attention_dp_size"), 1),
                                         to_int(get("moe_tp_size"), 1), to_int(get("moe_ep_size"), 1), to_int(get("pp_size"), 1));
                if (imax) {
                    const int ep = inferencemax_recipe_ep(r.backend, get("model_path"), r.system, get("precision"), l.tp * l.dp, l.ep);
                    if (ep > 0) l.ep = ep, l.fixed = true;
                }
                j["parallel"] = {{"tp", l.tp}, {"dp", l.dp}, {"ep", l.ep}, {"pp", l.pp}};
                r.layout_fixed = l.fixed;
                // the clients: the run's concurrency where the source names it and the layout was rescaled (the batch
                // column is per attention-DP rank of the scaled layout), else the batch per rank x the ranks
                const int conc = source_concurrency(get("silicon_data_source"));
                j["serving"]["concurrency"] = l.fixed && conc > 0 ? conc : std::max(1, to_int(get("batch_size"), 1)) * l.dp;
            } else {
                j["serving"]["mode"] = "disaggregated";
                int decode_dp = 1;
                for (const char* pool : {"prefill", "decode"}) {
                    const std::string p = std::string(pool) + "_";
                    const int dp = layout(p, j["serving"][pool]["parallel"]);
                    if (std::string(pool) == "decode") decode_dp = dp;
                    // a missing worker count is one worker (the row's run id names no more)
                    j["serving"][pool]["workers"] = std::max(1, to_int(get((p + "num_workers").c_str()), 1));
                    j["serving"][pool]["batch"] = std::max(1, to_int(get((p + "batch_size").c_str()), 1));
                }
                // (the recipes are Kimi-K2.5 NVFP4's on GB200, the only disaggregated runs the dump holds: another
                // model's or GPU's dump rows keep their columns)
                if (get("silicon_data_source").rfind("db-dump/", 0) == 0 && get("model_path") == "moonshotai/Kimi-K2.5" &&
                    r.system == "gb200" && get("precision") == "fp4") {
                    r.layout_fixed = inferencemax_disagg_recipe(r.backend, r.isl, j);
                    decode_dp = j["serving"]["decode"]["parallel"]["dp"].get<int>();
                }
                // Rows without a decode batch carry the run's concurrency in the source column
                // ("silicon_concurrency=5"): spread it over the decode ranks. Without either, the load is unknown.
                // The clients are the run's concurrency where the source names it (serving.concurrency; the decode
                // batch is each rank's limit), else the decode slots (the parser's default for disaggregated).
                const int conc = source_concurrency(get("silicon_data_source"));
                if (conc > 0) j["serving"]["concurrency"] = conc;
                if (get("decode_batch_size").empty()) {
                    if (conc <= 0) r.skip = "disaggregated row with no decode batch and no concurrency";
                    else {
                        const int ranks = j["serving"]["decode"]["workers"].get<int>() * decode_dp;
                        j["serving"]["decode"]["batch"] = std::max(1, (conc + ranks - 1) / ranks);
                    }
                }
                j["parallel"] = j["serving"]["decode"]["parallel"];
            }
            moe::ParseResult pr = moe::scenario_from_json(j, cat);
            if (!r.skip.empty()) {
            } else if (!pr.ok()) r.skip = "invalid scenario: " + pr.errors.front().text();
            else {
                r.scenario = pr.scenario;
                r.steps = moe::serving_steps(r.scenario, tables, moe::engine_constants(moe::active_engines(), r.scenario));
                if (!r.steps.ok) r.skip = "step model: " + (r.steps.errors.empty() ? std::string("failed") : r.steps.errors.front().text());
                else if (o.simulate && !(r.surface = moe::step_surface(r.scenario, tables)).ok)
                    r.skip = "step model: " + (r.surface.errors.empty() ? std::string("failed") : r.surface.errors.front().text());
                // A row that names no worker counts (InferenceMAX's CSV exports of disaggregated runs) does not say
                // how many GPUs served it: the decode pool's size sets its TPOT and the prefill pool's its queue, so
                // no prediction of that row tests the model, only a guess of the deployment. Not evaluated.
                else if (r.mode != "agg" && (get("decode_num_workers").empty() || get("prefill_num_workers").empty()))
                    r.skip = "disaggregated row without worker counts: the deployment's size is not recorded";
            }
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

std::vector<Run> load_runs(const std::string& path, const moe::Catalog& cat, const moe::Tables& tables,
                           const LoadOptions& o, std::string& err) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        err = "cannot read " + path;
        return {};
    }
    std::stringstream ss;
    ss << f.rdbuf();
    return parse_runs(ss.str(), path, cat, tables, o, err);
}

}  // namespace runs
