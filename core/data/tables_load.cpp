// tables_load.cpp — reading a bench_data CSV into tables: each family's columns, checks and the conversion of a measured
// latency into a fraction of the roofline (with kernels.h's FLOP and byte counts).
#include "core/data/tables.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/kernels.h"
#include "core/data/tables_store.h"
#include "core/base/json_util.h"

namespace moe {
using namespace tables_detail;

// InferSim's masked grouped-GEMM tables time one random draw of rows per group: m_g = int(expected_m * U(0.7, 1.3))
// (alibaba/InferSim kernel_benchmark/deepgemm_grouped_gemm_masked.py, generate_m_grouped_masked). A group above
// expected_m can add an m-block, and with it a whole wave over the SMs. DeepGEMM's README and a balanced serving step
// run every group at expected_m. This converts one projection's time (n x k FP8 weights per group) to that uniform
// load:
//   t_uniform = max(t * W_uniform / W_table, min(t, weight bytes / (0.9 * HBM)))
// W_table is the expected number of waves of the draw. When the row's mfu cell allows it, the draw is conditioned on
// its total rows; InferSim writes mfu = 2 * valid_m * n * k / t / gpu_tflops with valid_m = sum m_g, so valid_m comes
// back to within the cell's rounding. If the cell is missing or implausible, the unconditional expectation is used.
// The floor keeps memory-bound rows at their weight-streaming time (0.9 of peak HBM, about the best a streaming
// kernel reaches). Real routing imbalance is not in the table after this; routing.imbalance models it.
static double masked_uniform_us(double t_us, double expected_m, double groups, double n, double k,
                                std::string_view mfu_cell, const FamilyRef& ref) {
    const double sms = ref.sm_count;
    const kernels::DeepGemmTiles tiles = kernels::deepgemm_tiles(expected_m, n, groups, sms);
    const double w_uni = kernels::deepgemm_waves(expected_m, n, groups, tiles, sms);
    double w_tab = -1, mfu = 0;
    if (cell_to_double(mfu_cell, mfu) && mfu > 0 && mfu <= 1) {
        // half a unit of the cell's last decimal, plus a little for the rounding of the time
        double half = 5e-7 * mfu;
        const auto dot = mfu_cell.find('.');
        if (dot != std::string_view::npos && mfu_cell.find_first_of("eE") == std::string_view::npos) {
            int decimals = 0;
            for (size_t i = dot + 1; i < mfu_cell.size() && mfu_cell[i] >= '0' && mfu_cell[i] <= '9'; ++i) ++decimals;
            half = 0.5 * std::pow(10.0, -std::min(decimals, 15));
        }
        const double rows_per_mfu = ref.tflops_fp8 * 1e12 * t_us * 1e-6 / (2.0 * n * k);
        const double lo = (mfu - half) * rows_per_mfu * (1 - 1e-5), hi = (mfu + half) * rows_per_mfu * (1 + 1e-5);
        w_tab = kernels::masked_waves_expected(expected_m, groups, n, tiles, sms, lo, hi);
    }
    if (!(w_tab > 0)) w_tab = kernels::masked_waves_expected(expected_m, groups, n, tiles, sms);
    if (!(w_tab > 0) || !(w_uni > 0)) return t_us;
    const double floor_us = groups * n * k / (0.9 * ref.hbm_GBps * 1e9) * 1e6;
    const double out = std::max(t_us * w_uni / w_tab, std::min(t_us, floor_us));
    return std::isfinite(out) && out > 0 ? out : t_us;
}

bool Tables::load_csv(std::string_view path, std::string_view text, Issues& errors) {
    if (!detail::valid_utf8(path)) {  // the path names every hit's table in the estimate's JSON
        errors.push_back({detail::shown_text(std::string(path), 256), "file name is not valid UTF-8"});
        return false;
    }
    const std::string where(path);
    // Parse the path: bench_data/<kind>/[<phase>/]<family>/<file>.csv
    std::vector<std::string> parts;
    {
        std::string_view p = path;
        while (!p.empty()) {
            auto slash = p.find('/');
            parts.emplace_back(p.substr(0, slash));
            if (slash == std::string_view::npos) break;
            p.remove_prefix(slash + 1);
        }
    }
    if (!parts.empty() && parts[0] == "bench_data") parts.erase(parts.begin());
    if (parts.size() < 3) {
        errors.push_back({where, "expected bench_data/<kind>/[<phase>/]<family>/<file>.csv"});
        return false;
    }
    const std::string& kind_s = parts[0];
    if (kind_s == "moe") {  // bench_data/moe/<family>/<file>.csv: tables_moe.cpp
        const FamilyRef* ref = parts.size() == 3 ? family_ref(parts[1]) : nullptr;
        if (!ref) {
            errors.push_back({where, "expected bench_data/moe/<family>/<file>.csv with a known GPU family"});
            return false;
        }
        return load_moe_csv("bench_data/moe/" + parts[1] + "/" + parts[2], *ref, text, errors);
    }
    if (kind_s == "gdn" && parts.size() == 3) {  // bench_data/gdn/<family>/<file>.csv: tables_gdn.cpp
        const FamilyRef* ref = family_ref(parts[1]);
        if (!ref) {
            errors.push_back({where, "expected bench_data/gdn/<family>/<file>.csv with a known GPU family"});
            return false;
        }
        return load_gdn_csv("bench_data/gdn/" + parts[1] + "/" + parts[2], *ref, text, errors);
    }
    if (kind_s != "gemm" && kind_s != "grouped_gemm" && kind_s != "mha" && kind_s != "mla" && kind_s != "comm")
        return true;  // unused kinds
    auto t = std::make_unique<Table>();
    t->path = "bench_data/" + std::string(path.substr(path.find(kind_s)));
    const bool phased = kind_s != "gemm" && kind_s != "comm";
    if (phased && parts.size() < 4) {
        errors.push_back({where, "expected bench_data/" + kind_s + "/<phase>/<family>/<file>.csv"});
        return false;
    }
    const std::string phase = phased ? parts[1] : "";
    if (phased && phase != "decode" && phase != "prefill") {
        errors.push_back({where, "phase folder must be decode or prefill"});
        return false;
    }
    t->family = parts[phased ? 2 : 1];
    const FamilyRef* ref = family_ref(t->family);
    if (!ref) {
        std::string known;
        for (const FamilyRef& f : kFamilies) known += std::string(known.empty() ? "" : ", ") + f.family;
        errors.push_back({where, "unknown GPU family '" + t->family + "' (known: " + known + ")"});
        return false;
    }
    // Tables split by shape (one per key) are finished and registered in key order.
    auto add_shapes = [this](auto& shapes) {
        for (auto& entry : shapes) {
            entry.second->finish();
            add_table(entry.second.release());
        }
    };
    std::string file = parts.back();
    if (file.size() < 5 || file.substr(file.size() - 4) != ".csv") {
        errors.push_back({where, "not a .csv file"});
        return false;
    }
    file.resize(file.size() - 4);
    if (kind_s == "gemm") t->kind = Kind::gemm;
    else if (kind_s == "comm") t->kind = Kind::comm;
    else if (kind_s == "grouped_gemm") t->kind = phase == "decode" ? Kind::grouped_masked : Kind::grouped_contiguous;
    else if (kind_s == "mha") t->kind = phase == "decode" ? Kind::mha_decode : Kind::mha_prefill;
    else t->kind = phase == "decode" ? Kind::mla_decode : Kind::mla_prefill;

    // Shape key from the file name: H-Hkv-D[-tpN] (mha), H-kv_lora-rope (mla decode), H-nope-rope (mla prefill).
    if (kind_s == "mha" || kind_s == "mla") {
        int vals[4] = {0, 0, 0, 1};
        int n = 0;
        std::string_view f = file;
        while (!f.empty() && n < 4) {
            auto dash = f.find('-');
            std::string_view c = f.substr(0, dash);
            if (c.substr(0, 2) == "tp") c.remove_prefix(2);
            double v;
            if (!cell_to_double(c, v) || v < 1 || v > 1e6 || v != std::floor(v)) {
                errors.push_back({where, "file name must be <heads>-<kv heads>-<head dim>[-tp<N>].csv"});
                return false;
            }
            vals[n++] = int(v);
            if (dash == std::string_view::npos) break;
            f.remove_prefix(dash + 1);
        }
        if (n < 3) {
            errors.push_back({where, "file name must be <heads>-<kv heads>-<head dim>[-tp<N>].csv"});
            return false;
        }
        const int tp = vals[3];
        if (kind_s == "mha") {
            // BLIS files (-tpN) name the model's heads; the kernel runs on heads/tp per GPU.
            if (vals[0] % tp != 0) {
                errors.push_back({where, "heads not divisible by tp"});
                return false;
            }
            t->key[0] = vals[0] / tp;
            t->key[1] = std::max(1, vals[1] / tp);
        } else {
            t->key[0] = vals[0];
            t->key[1] = vals[1];
        }
        t->key[2] = vals[2];
    }

    // Header (by name). One InferSim file has no header row: detect a data row and use the kind's standard header.
    std::vector<std::string_view> lines;
    {
        std::string_view rest = text;
        while (!rest.empty()) {
            auto nl = rest.find('\n');
            std::string_view line = rest.substr(0, nl);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            if (!line.empty()) lines.push_back(line);
            if (nl == std::string_view::npos) break;
            rest.remove_prefix(nl + 1);
        }
    }
    if (lines.empty()) {
        errors.push_back({where, "empty file"});
        return false;
    }
    static const char* const kStd[] = {"dtype", "kv_dtype", "batch_size", "kv_len", "latency_us", "mfu"};
    std::vector<std::string> header;
    size_t first = 1;
    {
        auto cells = split_cells(lines[0]);
        double dummy;
        const bool looks_like_data = t->kind == Kind::mha_decode && cells.size() == 6 && cell_to_double(cells[2], dummy);
        if (looks_like_data) {
            header.assign(std::begin(kStd), std::end(kStd));
            first = 0;
        } else {
            for (auto c : cells) header.emplace_back(c);
        }
    }
    auto col = [&](const char* name) -> int {
        for (size_t i = 0; i < header.size(); ++i)
            if (header[i] == name) return int(i);
        return -1;
    };
    auto need = [&](std::initializer_list<const char*> names) {
        for (const char* n : names)
            if (col(n) < 0) {
                errors.push_back({where + ":1", "missing column '" + std::string(n) + "'"});
                return false;
            }
        return true;
    };
    const size_t errors_before = errors.size();
    auto no_rows = [&] {  // a header alone is not a table (its lookups would promise what it does not hold)
        errors.push_back({where, "no data rows"});
        return false;
    };
    auto num = [&](const std::vector<std::string_view>& cells, const char* name, size_t line_no, double& out) {
        int c = col(name);
        if (c < 0 || size_t(c) >= cells.size() || !cell_to_double(cells[size_t(c)], out)) {
            errors.push_back({where + ":" + std::to_string(line_no + 1), "column '" + std::string(name) + "' is not a number"});
            return false;
        }
        return true;
    };

    // The wide form (WideForm, tables_store.h) or the long one (a row per point: x_name, latency_us)
    WideForm wide;
    auto wide_form = [&](const char* x_name, double x_max) {
        return wide.parse(header, where, x_name, x_max, col(x_name) >= 0 || col("latency_us") >= 0, errors);
    };
    // line i's (x, latency us) points: its us_at_ cells, or its x and latency_us
    std::vector<std::pair<double, double>> pts;
    auto points = [&](const std::vector<std::string_view>& cells, size_t i, const char* x_name) -> const std::vector<std::pair<double, double>>& {
        pts.clear();
        double x, lat;
        if (!wide.on()) {
            if (num(cells, x_name, i, x) && num(cells, "latency_us", i, lat)) pts.push_back({x, lat});
            return pts;
        }
        if (!wide.points(cells, header, where + ":" + std::to_string(i + 1), pts, errors)) pts.clear();
        return pts;
    };

    switch (t->kind) {
        case Kind::gemm: {
            // Long form (m, k, n, latency_us per row: InferSim's and BLIS's tables) or wide (k, n and a us_at_<m>
            // column per M: the AIC grids, one row per shape)
            if (!wide_form("m", kMaxShape)) return false;
            if (!need(!wide.on() ? std::initializer_list<const char*>{"m", "k", "n", "latency_us"}
                                   : std::initializer_list<const char*>{"k", "n"}))
                return false;
            // One Table per (k, n, format) shape. Files without a dtype column: InferSim's and BLIS's DeepGEMM FP8
            // tables (block-scaled; BLIS's H100 one too, whatever its SOURCE.md says: m 8192 x 4096 x 11008 runs at
            // 1,278 TFLOPS, 1.29x the BF16 peak, bench_data/README.md "gemm"). Files named *cuda_graph*.csv were timed
            // inside CUDA graphs (AIConfigurator); their name's first word is the engine whose kernels they timed.
            std::map<std::tuple<int, int, int>, std::unique_ptr<Table>> shapes;
            const int dtcol = col("dtype");
            const GemmFormat file_format = GemmFormat::fp8_block;
            t->graph_timed = file.find("cuda_graph") != std::string::npos;
            GemmEngine engine = GemmEngine::any;
            if (file.rfind("sglang_", 0) == 0) engine = GemmEngine::sglang;
            else if (file.rfind("vllm_", 0) == 0) engine = GemmEngine::vllm;
            else if (file.rfind("trtllm_", 0) == 0) engine = GemmEngine::trtllm;
            // one (m, k, n, latency) point of line i
            auto point = [&](size_t i, GemmFormat f, double m, double k, double n, double lat) {
                if (m < 1 || k < 1 || n < 1 || k > kMaxShape || n > kMaxShape || lat <= 0 || lat > kMaxLatencyUs) {
                    errors.push_back({where + ":" + std::to_string(i + 1), "at m " + std::to_string(long(m)) +
                                                                               ": sizes must be in [1, 1e9] and latency in (0, 1e9] us"});
                    return;
                }
                auto& s = shapes[{int(k), int(n), int(f)}];
                if (!s) {
                    s = std::make_unique<Table>(*t);
                    s->key[0] = int(k);
                    s->key[1] = int(n);
                    s->key[2] = int(f);
                    s->key[3] = int(engine);
                }
                const double b = gemm_format_bytes(f);
                kernels::Cost c = kernels::gemm(m, k, n, b, b);
                const double peak = format_peak_tflops(*ref, f) * 1e12;
                const double roof = std::max(c.flops / peak, c.bytes / (ref->hbm_GBps * 1e9));
                s->add(1, m, std::min(1.0, roof / (lat * 1e-6)), roof, lat * 1e-6);
            };
            for (size_t i = first; i < lines.size(); ++i) {
                auto cells = split_cells(lines[i]);
                double k, n;
                if (!num(cells, "k", i, k) || !num(cells, "n", i, n)) continue;
                GemmFormat f = file_format;
                if (dtcol >= 0) {
                    const std::string_view d = size_t(dtcol) < cells.size() ? cells[size_t(dtcol)] : std::string_view();
                    if (d == "bf16") f = GemmFormat::bf16;
                    else if (d == "fp8") f = GemmFormat::fp8;
                    else if (d == "fp8_block") f = GemmFormat::fp8_block;
                    else if (d == "nvfp4") f = GemmFormat::nvfp4;
                    else {
                        errors.push_back({where + ":" + std::to_string(i + 1), "column 'dtype' must be bf16, fp8, fp8_block or nvfp4"});
                        continue;
                    }
                }
                for (const auto& [m, lat] : points(cells, i, "m")) point(i, f, m, k, n, lat);
            }
            if (errors.size() != errors_before) return false;
            if (shapes.empty()) return no_rows();
            add_shapes(shapes);
            return true;
        }
        case Kind::comm: {
            // One Table per (op, impl): lines by GPU count, points (message bytes, latency).
            if (!wide_form("message_bytes", 1e15)) return false;
            if (!need(!wide.on() ? std::initializer_list<const char*>{"op", "impl", "num_gpus", "message_bytes", "latency_us"}
                                   : std::initializer_list<const char*>{"op", "impl", "num_gpus"}))
                return false;
            std::map<std::string, std::unique_ptr<Table>> series;
            const int opc = col("op"), implc = col("impl");
            for (size_t i = first; i < lines.size(); ++i) {
                auto cells = split_cells(lines[i]);
                double gpus;
                if (!num(cells, "num_gpus", i, gpus)) continue;
                const std::string_view op = size_t(opc) < cells.size() ? cells[size_t(opc)] : std::string_view();
                const std::string_view impl = size_t(implc) < cells.size() ? cells[size_t(implc)] : std::string_view();
                if (op != "all_reduce" && op != "all_gather" && op != "reduce_scatter") {
                    errors.push_back({where + ":" + std::to_string(i + 1), "column 'op' must be all_reduce, all_gather or reduce_scatter"});
                    continue;
                }
                if (impl.empty() || impl.size() > 32 || !detail::valid_utf8(impl)) {
                    errors.push_back({where + ":" + std::to_string(i + 1), "column 'impl' must name the implementation (1-32 characters)"});
                    continue;
                }
                for (const auto& [bytes, lat] : points(cells, i, "message_bytes")) {
                    if (gpus < 2 || gpus > 1e6 || gpus != std::floor(gpus) || bytes < 1 || bytes > 1e15 || lat <= 0 || lat > kMaxLatencyUs) {
                        errors.push_back({where + ":" + std::to_string(i + 1), "num_gpus must be an integer >= 2, message_bytes in [1, 1e15], latency in (0, 1e9] us"});
                        continue;
                    }
                    auto& s = series[std::string(op) + "/" + std::string(impl)];
                    if (!s) {
                        s = std::make_unique<Table>(*t);
                        s->variant = std::string(op) + "/" + std::string(impl);
                        s->path += "#" + s->variant;  // the table an op names: file and series
                    }
                    s->add(gpus, bytes, 1.0, 0, lat * 1e-6);
                }
            }
            if (errors.size() != errors_before) return false;
            if (series.empty()) return no_rows();
            add_shapes(series);
            return true;
        }
        case Kind::grouped_masked:
        case Kind::grouped_contiguous: {
            const char* tok = t->kind == Kind::grouped_masked ? "batch_size_per_gpu" : "seq_len_per_gpu";
            if (!need({"num_experts", "num_gpus", "num_local_experts", "topk", "hidden_size", "intermediate_size", tok,
                       "up_proj_us", "down_proj_us"}))
                return false;
            std::map<std::vector<int>, std::unique_ptr<Table>> shapes;
            for (size_t i = first; i < lines.size(); ++i) {
                auto cells = split_cells(lines[i]);
                double E, gpus, local, k, h, inter, tokens, up, down;
                if (!num(cells, "num_experts", i, E) || !num(cells, "num_gpus", i, gpus) || !num(cells, "num_local_experts", i, local) ||
                    !num(cells, "topk", i, k) || !num(cells, "hidden_size", i, h) || !num(cells, "intermediate_size", i, inter) ||
                    !num(cells, tok, i, tokens) || !num(cells, "up_proj_us", i, up) || !num(cells, "down_proj_us", i, down))
                    continue;
                // (the token and GPU counts too: a row of 1e88 tokens made the lookup's expected-tiles sum run for ever,
                // fuzz_csv's regress-grouped-tokens-1e88)
                if (E < 1 || gpus < 1 || local < 1 || k < 1 || h < 1 || inter < 1 || tokens < 1 || up <= 0 || down <= 0 ||
                    E > kMaxShape || k > kMaxShape || h > kMaxShape || inter > kMaxShape || tokens > kMaxShape ||
                    gpus > kMaxShape || local > kMaxShape || up > kMaxLatencyUs || down > kMaxLatencyUs) {
                    errors.push_back({where + ":" + std::to_string(i + 1), "values must be positive (shapes at most 1e9, latencies 1e9 us)"});
                    continue;
                }
                std::vector<int> key = {int(E), int(k), int(h), int(inter)};
                auto& s = shapes[key];
                if (!s) {
                    s = std::make_unique<Table>(*t);
                    for (int j = 0; j < 4; ++j) s->key[j] = key[size_t(j)];
                }
                double em = 0;  // expected rows per group (masked rows)
                if (t->kind == Kind::grouped_masked) {
                    // Uniform load per group (masked_uniform_us). The expected m is InferSim's
                    // round(bs * topk / groups), from its tokens_per_expert column when the file has one.
                    auto cell = [&](const char* name) {
                        const int c = col(name);
                        return c >= 0 && size_t(c) < cells.size() ? cells[size_t(c)] : std::string_view();
                    };
                    if (!cell_to_double(cell("tokens_per_expert"), em) || em < 1) em = std::nearbyint(tokens * k / local);
                    up = masked_uniform_us(up, em, local, 2.0 * inter, h, cell("up_mfu"), *ref);
                    down = masked_uniform_us(down, em, local, h, inter, cell("down_mfu"), *ref);
                }
                // Experts whose weights the timed kernel read. Masked rows, converted to uniform load, hold expected_m
                // >= 1 rows in every group: all local experts. Contiguous rows route tokens*gpus tokens at random:
                // only the experts that receive one.
                const double pairs = tokens * k;  // token-expert pairs on one GPU (balanced)
                const double active = t->kind == Kind::grouped_masked && em >= 1
                                          ? local
                                          : kernels::expected_active_experts(local, k * local / E, tokens * gpus);
                kernels::Cost c = kernels::grouped_experts(pairs, std::max(1.0, active), h, inter, 1.0, 1.0);
                const double roof = std::max(c.flops / (ref->tflops_fp8 * 1e12), c.bytes / (ref->hbm_GBps * 1e9));
                s->add(gpus, tokens, std::min(1.0, roof / ((up + down) * 1e-6)));
            }
            if (errors.size() != errors_before) return false;
            if (shapes.empty()) return no_rows();
            add_shapes(shapes);
            return true;
        }
        case Kind::mha_decode:
        case Kind::mla_decode: {
            if (!wide_form("kv_len", 1e12)) return false;
            if (!need(!wide.on() ? std::initializer_list<const char*>{"batch_size", "kv_len", "latency_us"}
                                   : std::initializer_list<const char*>{"batch_size"}))
                return false;
            const int kvcol = col("kv_dtype");
            std::unique_ptr<Table> fp8t;
            for (size_t i = first; i < lines.size(); ++i) {
                auto cells = split_cells(lines[i]);
                double b;
                if (!num(cells, "batch_size", i, b)) continue;
                for (const auto& [L, lat] : points(cells, i, "kv_len")) {
                    if (b < 1 || L < 1 || lat <= 0 || lat > kMaxLatencyUs) {
                        errors.push_back({where + ":" + std::to_string(i + 1), "values must be positive, latency at most 1e9 us"});
                        continue;
                    }
                    const bool fp8 = kvcol >= 0 && size_t(kvcol) < cells.size() && cells[size_t(kvcol)].substr(0, 3) == "fp8";
                    const double kvb = fp8 ? 1.0 : 2.0;
                    kernels::Cost c = t->kind == Kind::mha_decode
                                          ? kernels::mha_decode(b, L, t->key[0], t->key[1], t->key[2], kvb)
                                          : kernels::mla_decode(b, L, t->key[0], t->key[1], t->key[2], kvb);
                    const double roof = std::max(c.flops / (ref->tflops_bf16 * 1e12), c.bytes / (ref->hbm_GBps * 1e9));
                    const double u = std::min(1.0, roof / (lat * 1e-6));
                    if (fp8) {
                        if (!fp8t) { fp8t = std::make_unique<Table>(*t); fp8t->fp8_kv = true; fp8t->lines.clear(); fp8t->x1s.clear(); fp8t->rows = 0; }
                        fp8t->add(b, L, u);
                    } else {
                        t->add(b, L, u);
                    }
                }
            }
            if (errors.size() != errors_before) return false;
            if (!fp8t && !t->rows) return no_rows();
            if (fp8t) { fp8t->finish(); add_table(fp8t.release()); }
            if (t->rows) { t->finish(); add_table(t.release()); }
            return true;
        }
        case Kind::mha_prefill:
        case Kind::mla_prefill: {
            if (!need({"seq_len", "latency_us"})) return false;
            for (size_t i = first; i < lines.size(); ++i) {
                auto cells = split_cells(lines[i]);
                double L, lat;
                if (!num(cells, "seq_len", i, L) || !num(cells, "latency_us", i, lat)) continue;
                if (L < 1 || lat <= 0 || lat > kMaxLatencyUs) {
                    errors.push_back({where + ":" + std::to_string(i + 1), "values must be positive, latency at most 1e9 us"});
                    continue;
                }
                // One causal sequence of length L.
                kernels::Cost c = t->kind == Kind::mha_prefill
                                      ? kernels::mha_prefill(L, L / 2.0, t->key[0], t->key[1], t->key[2], 2.0)
                                      : kernels::mla_prefill(L, L / 2.0, t->key[0], t->key[1] + t->key[2], t->key[1]);
                // FlashAttention streams Q, K, V under its matmuls: the point's efficiency is a compute efficiency
                const double roof = c.flops / (ref->tflops_bf16 * 1e12);
                t->add(1, L, std::min(1.0, roof / (lat * 1e-6)), roof, lat * 1e-6);
            }
            if (errors.size() != errors_before) return false;
            if (!t->rows) return no_rows();
            t->finish();
            add_table(t.release());
            return true;
        }
    }
    return true;
}

}  // namespace moe
