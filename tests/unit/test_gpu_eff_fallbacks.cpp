// test_gpu_eff_fallbacks.cpp — each GPU's own grouped-GEMM and attention fallback compute fractions
// (hardware.grouped_gemm_efficiency, attn_efficiency): the fields, the fallbacks taking them, and the held-out check
// of scripts/derive_gpu_eff_fallbacks.py against each GPU's own grouped-GEMM and prefill-attention tables (seed 002
// §10: nothing hard-coded that varies by GPU). The dense GEMM pair is test_gpu_eff.cpp's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/base/embedded.h"
#include "core/data/kernels.h"
#include "core/moe.h"
#include "test_helpers.h"

namespace {

// One row of an embedded bench_data CSV, its cells by header name, with its 1-based line in the file.
struct CsvRow {
    int line;
    std::map<std::string, std::string> cell;
    double num(const std::string& key) const { return std::stod(cell.at(key)); }
};

std::vector<CsvRow> embedded_csv(const std::string& path) {
    std::string text;
    for (const moe::EmbeddedFile& f : moe::embedded_files())
        if (path == f.path) text.assign(f.data, f.size);
    REQUIRE_MESSAGE(!text.empty(), path);
    auto split = [](std::string_view s) {
        std::vector<std::string> out;
        std::size_t start = 0;
        for (std::size_t i = 0; i <= s.size(); ++i)
            if (i == s.size() || s[i] == ',') {
                out.emplace_back(s.substr(start, i - start));
                start = i + 1;
            }
        return out;
    };
    std::vector<CsvRow> rows;
    std::vector<std::string> header;
    int line = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string_view l(text.data() + pos, end - pos);
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        pos = end + 1;
        ++line;
        if (l.empty()) continue;
        if (header.empty()) {
            header = split(l);
            continue;
        }
        CsvRow r{line, {}};
        const std::vector<std::string> cells = split(l);
        for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) r.cell[header[i]] = cells[i];
        rows.push_back(r);
    }
    return rows;
}

double median(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// ---- grouped GEMM ------------------------------------------------------------------------------------------------

// One point of an InferSim grouped-GEMM table as the model reads it, and the fallback's counts there.
struct GroupedPoint {
    int line;
    std::tuple<int, int, int, int, int> series;  // experts, top-k, hidden, inter, EP
    double meas_us;                              // the table's time (masked rows: at uniform load, as loaded)
    double flops, bytes, fill;                   // the fallback's FLOPs, bytes and tile fill (core/step/ops_ffn.cpp)
};

// Every point of bench_data/grouped_gemm/<phase>/<family>/data.csv: the measured time through the table lookup (the
// roofline the loader divides by, over its util) and the fallback's counts at dp = ep (tokens per GPU = per rank),
// FP8 block-scaled experts, routing.expert_rows random, DeepGEMM's tile (128 contiguous, 64 masked).
std::vector<GroupedPoint> grouped_points(const char* family, const char* preset, bool masked) {
    const moe::GpuSpec& g = moe_test::preset_gpu(preset);
    const double peak = g.dense_tflops_fp8 * 1e12, bw = g.hbm_bandwidth_GBps * 1e9;
    const std::string path = std::string("bench_data/grouped_gemm/") + (masked ? "decode/" : "prefill/") + family + "/data.csv";
    std::vector<GroupedPoint> out;
    for (const CsvRow& r : embedded_csv(path)) {
        const double E = r.num("num_experts"), ep = r.num("num_gpus"), local = r.num("num_local_experts");
        const double k = r.num("topk"), h = r.num("hidden_size"), inter = r.num("intermediate_size");
        const double t = r.num(masked ? "batch_size_per_gpu" : "seq_len_per_gpu");
        const moe::TableHit hit =
            moe::builtin_tables().grouped_gemm(family, masked, int(E), int(k), int(h), int(inter), int(ep), t);
        REQUIRE(hit.found);
        REQUIRE(hit.source == moe::Source::measured);
        const double pairs = t * k, group_tokens = t * ep;
        const double active = moe::kernels::expected_active_experts(local, k * local / E, group_tokens);
        // the loader's roofline (tables_load.cpp): masked rows at uniform load hold rows in every local expert
        const moe::kernels::Cost loaded = moe::kernels::grouped_experts(pairs, masked ? local : std::max(1.0, active), h, inter, 1, 1);
        const double roof_s = std::max(loaded.flops / peak, loaded.bytes / bw);
        const moe::kernels::Cost c = moe::kernels::grouped_experts(pairs, std::max(1.0, active), h, inter, 1 + 4.0 / (128 * 128), 1);
        const double tile = masked ? 64 : 128;
        const double tiles = local * moe::kernels::expected_tiles_random(group_tokens, k / E, tile);
        out.push_back({r.line, {int(E), int(k), int(h), int(inter), int(ep)}, roof_s / hit.util * 1e6, c.flops, c.bytes,
                       std::min(1.0, pairs / (tiles * tile))});
    }
    return out;
}

// The grouped fallback at compute fraction `eff` (core/step/ops_ffn.cpp through time_op): us
double grouped_fallback_us(const GroupedPoint& p, const moe::GpuSpec& g, double eff) {
    const moe::Calibration& cal = moe::builtin_tables().calibration;
    return std::max(cal.kernel_floor_us, 1e6 * std::max(p.flops / (g.dense_tflops_fp8 * 1e12 * eff * p.fill),
                                                        p.bytes / (g.hbm_bandwidth_GBps * 1e9 * cal.hbm_bw_eff)));
}

// Median |fallback / measured - 1| over the points of half `half` of the sorted series (0: even positions, 1: odd;
// -1: every point).
double grouped_median(const std::vector<GroupedPoint>& pts, const moe::GpuSpec& g, int half, double eff, int& points) {
    std::set<std::tuple<int, int, int, int, int>> keys;
    for (const GroupedPoint& p : pts) keys.insert(p.series);
    std::set<std::tuple<int, int, int, int, int>> chosen;
    int i = 0;
    for (const auto& key : keys)
        if (half < 0 || i++ % 2 == half) chosen.insert(key);
    std::vector<double> errs;
    for (const GroupedPoint& p : pts)
        if (chosen.count(p.series)) errs.push_back(std::fabs(grouped_fallback_us(p, g, eff) / p.meas_us - 1.0));
    points = int(errs.size());
    return median(errs);
}

// ---- attention ---------------------------------------------------------------------------------------------------

struct AttnPoint {
    int line;
    std::string shape;  // "mha/32-8-128.csv"
    double meas_us, flops;
};

// Every point of a family's prefill attention tables (bench_data/{mha,mla}/prefill/<family>/*.csv): the latency, never
// below the roofline (the loader's util <= 1), and the FLOPs of one causal sequence (kernels::mha_prefill /
// mla_prefill at L / 2 keys per query, as the loader and the attention core count them).
std::vector<AttnPoint> attn_points(const char* family, const char* preset) {
    const moe::GpuSpec& g = moe_test::preset_gpu(preset);
    const double peak = g.dense_tflops_bf16 * 1e12, bw = g.hbm_bandwidth_GBps * 1e9;
    std::vector<AttnPoint> out;
    for (const char* kind : {"mha", "mla"}) {
        const std::string dir = std::string("bench_data/") + kind + "/prefill/" + family + "/";
        std::vector<std::string> files;
        for (const moe::EmbeddedFile& f : moe::embedded_files()) {
            const std::string p = f.path;
            if (p.rfind(dir, 0) == 0 && p.find('/', dir.size()) == std::string::npos) files.push_back(p);
        }
        std::sort(files.begin(), files.end());
        for (const std::string& f : files) {
            const std::string name = f.substr(dir.size());
            int a = 0, b = 0, c = 0;
            REQUIRE(std::sscanf(name.c_str(), "%d-%d-%d", &a, &b, &c) == 3);
            for (const CsvRow& r : embedded_csv(f)) {
                const double L = r.num("seq_len");
                const moe::kernels::Cost k = std::string(kind) == "mha" ? moe::kernels::mha_prefill(L, L / 2, a, b, c, 2)
                                                                         : moe::kernels::mla_prefill(L, L / 2, a, b + c, b);
                const double roof_us = 1e6 * std::max(k.flops / peak, k.bytes / bw);
                out.push_back({r.line, std::string(kind) + "/" + name, std::max(r.num("latency_us"), roof_us), k.flops});
            }
        }
    }
    return out;
}

// Median |fallback / measured - 1| over the shapes of half `half` (sorted; 0: even positions, 1: odd): the fallback is
// FLOPs / (BF16 peak x eff) (prefill attention is compute-bound), never below the kernel floor.
double attn_median(const std::vector<AttnPoint>& pts, const moe::GpuSpec& g, int half, double eff, int& points) {
    std::set<std::string> shapes;
    for (const AttnPoint& p : pts) shapes.insert(p.shape);
    std::set<std::string> chosen;
    int i = 0;
    for (const std::string& s : shapes)
        if (i++ % 2 == half) chosen.insert(s);
    const double floor_us = moe::builtin_tables().calibration.kernel_floor_us;
    std::vector<double> errs;
    for (const AttnPoint& p : pts)
        if (chosen.count(p.shape))
            errs.push_back(std::fabs(std::max(floor_us, 1e6 * p.flops / (g.dense_tflops_bf16 * 1e12 * eff)) / p.meas_us - 1.0));
    points = int(errs.size());
    return median(errs);
}

}  // namespace

TEST_CASE("presets with their own grouped-GEMM / attention fallback fractions, and the Galaxy's one fraction first") {
    // (the fields' help, range errors and JSON round trip: test_gpu_eff.cpp's "GPU fields ... efficiency" test)
    // the presets that carry their own (presets/hardware/README.md); every other keeps the calibration's (0)
    CHECK(moe_test::preset_gpu("h20").grouped_gemm_efficiency == 0.88);
    CHECK(moe_test::preset_gpu("h20").attn_efficiency == 0.943);
    CHECK(moe_test::preset_gpu("h100-sxm").attn_efficiency == 0.743);
    for (const char* id : {"h800", "h100-sxm", "h200", "b200", "h20-141g", "l40s"}) {
        INFO(std::string(id));
        CHECK(moe_test::preset_gpu(id).grouped_gemm_efficiency == 0);
    }
    for (const char* id : {"h800", "h200", "b200", "h20-141g", "gh200"}) {
        INFO(std::string(id));
        CHECK(moe_test::preset_gpu(id).attn_efficiency == 0);
    }
    // matmul_efficiency (a mesh chip's one fraction) takes precedence over the grouped one
    moe::GpuSpec g;
    g.grouped_gemm_efficiency = 0.8;
    CHECK(g.grouped_compute_eff_or(0.585) == 0.8);
    g.matmul_efficiency = 0.07;
    CHECK(g.grouped_compute_eff_or(0.585) == 0.07);
}

TEST_CASE("the grouped-GEMM fallback takes the GPU's own efficiency (H20, tables off)") {
    // Qwen3-30B-A3B (128 experts, top-8, hidden 2048, inter 768) on H20, EP4 with attention DP4, 8,192 tokens per rank:
    // bench_data/grouped_gemm/prefill/h20/data.csv line 100 measures it (1,660 + 847.618 = 2,507.6 us). Every table off,
    // the routed experts are the fallback at H20's own grouped_gemm_efficiency 0.88 (presets/hardware/h20.json), and
    // at the calibration's grouped_compute_eff 0.585 with the field set to 0.
    const std::vector<GroupedPoint> pts = grouped_points("h20", "h20", false);
    const GroupedPoint* row = nullptr;
    for (const GroupedPoint& p : pts)
        if (p.line == 100) row = &p;
    REQUIRE(row != nullptr);
    CHECK(row->series == std::tuple<int, int, int, int, int>{128, 8, 2048, 768, 4});
    CHECK(row->meas_us == doctest::Approx(2507.618).epsilon(1e-6));
    moe::Tables none;
    none.calibration = moe::builtin_tables().calibration;
    auto op_us = [&](const std::string& hw) {
        const moe::Estimate e = moe::estimate(
            moe_test::scenario(R"({"model":"qwen3-30b-a3b","hardware":)" + hw + R"(,"parallel":{"tp":1,"dp":4,"ep":4},
            "precision":{"experts":"fp8"},"workload":{"phase":"prefill","prefill_tokens":8192,"prompt_len":8192},
            "runtime":{"a2a_backend":"deepep_normal","expert_layout":"contiguous"}})"),
            none);
        const moe::OpRecord* op = moe_test::find_op(e, "moe.routed_experts", moe::Phase::prefill);
        REQUIRE(op != nullptr);
        CHECK(op->source == moe::Source::analytical);
        CHECK(op->bound == moe::Bound::compute);
        return op->time_us;
    };
    const moe::GpuSpec& h20 = moe_test::preset_gpu("h20");
    const double own = op_us(R"("h20")"), dflt = op_us(R"({"base":"h20","grouped_gemm_efficiency":0})");
    // the model's op is the closed form the held-out test below uses, at 0.88 and at 0.585
    CHECK(own == doctest::Approx(grouped_fallback_us(*row, h20, 0.88)).epsilon(1e-9));
    CHECK(dflt == doctest::Approx(grouped_fallback_us(*row, h20, 0.585)).epsilon(1e-9));
    MESSAGE("H20 Qwen3-30B-A3B EP4 8192 tokens/rank: measured 2507.6 us, fallback " << own << " us own, " << dflt << " us calibration's");
    CHECK(own == doctest::Approx(2447.87).epsilon(1e-5));   // -2.4%
    CHECK(dflt == doctest::Approx(3682.27).epsilon(1e-5));  // +46.8%
}

TEST_CASE("the attention fallback takes the GPU's own efficiency (H100 SXM, tables off)") {
    // Qwen3-8B (32 heads, 8 KV heads, head dim 128) on one H100 SXM, a prefill of one 8,192-token prompt, every table
    // off: attn.core is FLOPs / (989.4 TFLOPS x attn_efficiency 0.743) (presets/hardware/h100-sxm.json), or x the
    // calibration's attn_prefill_compute_eff 0.5066 with the field set to 0.
    moe::Tables none;
    none.calibration = moe::builtin_tables().calibration;
    auto op = [&](const std::string& hw) {
        const moe::Estimate e = moe::estimate(
            moe_test::scenario(R"({"model":"qwen3-8b","hardware":)" + hw + R"(,"parallel":{"tp":1},
            "workload":{"phase":"prefill","prefill_tokens":8192,"prompt_len":8192}})"),
            none);
        const moe::OpRecord* o = moe_test::find_op(e, "attn.core", moe::Phase::prefill, "");
        REQUIRE(o != nullptr);
        CHECK(o->source == moe::Source::analytical);
        CHECK(o->bound == moe::Bound::compute);
        return std::pair{o->time_us, o->flops};
    };
    const auto [own, flops] = op(R"("h100-sxm")");
    const auto [dflt, flops0] = op(R"({"base":"h100-sxm","attn_efficiency":0})");
    CHECK(flops == flops0);
    CHECK(own == doctest::Approx(1e6 * flops / (989.4e12 * 0.743)).epsilon(1e-9));
    CHECK(dflt == doctest::Approx(1e6 * flops / (989.4e12 * 0.5066)).epsilon(1e-9));
}

TEST_CASE("held out: each GPU's own grouped-GEMM fallback efficiency against the calibration's, on the other half of its table") {
    // scripts/derive_gpu_eff_fallbacks.py: the contiguous (prefill) table's series (experts, top-k, hidden, inter, EP)
    // sorted and split alternately into halves A (even positions) and B; the value derived on one half, the fallback
    // tested on every point of the other. The masked (decode) tables, never derived on, are a second check.
    // Cited points (the time the model reads):
    //   bench_data/grouped_gemm/prefill/h800/data.csv line 2: 256 experts, EP1, 1,024 tokens: 3,249 + 1,541 = 4,790 us
    //   bench_data/grouped_gemm/prefill/h20/data.csv line 2: 96 experts, EP1, 1,024 tokens: 637.06 + 332.791 us
    //   bench_data/grouped_gemm/decode/h800/data.csv line 30: EP32, batch 512: 223.323 + 107.076 = 330.4 us as
    //     timed, 291.75 us at uniform load (the loader's masked_uniform_us)
    const moe::Calibration& cal = moe::builtin_tables().calibration;  // grouped_compute_eff 0.585
    const std::vector<GroupedPoint> h800 = grouped_points("h800", "h800", false), h20 = grouped_points("h20", "h20", false);
    const std::vector<GroupedPoint> h800_dec = grouped_points("h800", "h800", true), h20_dec = grouped_points("h20", "h20", true);
    auto at_line = [](const std::vector<GroupedPoint>& pts, int line) {
        for (const GroupedPoint& p : pts)
            if (p.line == line) return p.meas_us;
        return 0.0;
    };
    CHECK(at_line(h800, 2) == doctest::Approx(4790.0).epsilon(1e-6));
    CHECK(at_line(h20, 2) == doctest::Approx(969.851).epsilon(1e-6));
    CHECK(at_line(h800_dec, 30) == doctest::Approx(291.752).epsilon(1e-5));

    struct Want {
        const char* preset;
        const std::vector<GroupedPoint>* pre;
        const std::vector<GroupedPoint>* dec;
        double derived, derived_a, derived_b;  // the script's value on the whole table, on half A, on half B
        int points_b, points_a;
        double own_b, global_b, own_a, global_a;  // held out: A -> B, B -> A
        double dec_own, dec_global;               // the masked tables, every point, at the whole table's value
        double preset_value;                      // what the preset carries (0: the calibration's)
    };
    const Want wants[] = {
        {"h800", &h800, &h800_dec, 0.651, 0.657, 0.645, 12, 12, 0.073, 0.090, 0.072, 0.092, 0.100, 0.082, 0},
        {"h20", &h20, &h20_dec, 0.88, 0.874, 0.881, 84, 76, 0.056, 0.472, 0.042, 0.456, 0.213, 0.220, 0.88},
    };
    for (const Want& w : wants) {
        INFO(std::string(w.preset));
        const moe::GpuSpec& g = moe_test::preset_gpu(w.preset);
        CHECK(g.grouped_gemm_efficiency == w.preset_value);
        int nb = 0, na = 0, nx = 0;
        const double own_b = grouped_median(*w.pre, g, 1, w.derived_a, nb);
        const double own_a = grouped_median(*w.pre, g, 0, w.derived_b, na);
        const double global_b = grouped_median(*w.pre, g, 1, cal.grouped_compute_eff, nx);
        const double global_a = grouped_median(*w.pre, g, 0, cal.grouped_compute_eff, nx);
        const double dec_own = grouped_median(*w.dec, g, -1, w.derived, nx);
        const double dec_global = grouped_median(*w.dec, g, -1, cal.grouped_compute_eff, nx);
        MESSAGE(std::string(w.preset) << ": contiguous held out A->B " << own_b << " own, " << global_b << " calibration's; B->A " << own_a
                         << " own, " << global_a << " calibration's; masked (" << nx << " points) " << dec_own << " own, "
                         << dec_global << " calibration's");
        moe_test::check_held_out(w, nb, na, own_b, global_b, own_a, global_a);
        CHECK(dec_own == doctest::Approx(w.dec_own).epsilon(0.01).scale(0));
        CHECK(dec_global == doctest::Approx(w.dec_global).epsilon(0.01).scale(0));
        // the own value beats the calibration's on the held-out contiguous halves of both GPUs; on the masked tables
        // only H20's does, so H800 keeps the calibration's (fitted on H800's DeepGEMM README rows)
        CHECK(own_b < global_b);
        CHECK(own_a < global_a);
        CHECK((dec_own < dec_global) == (w.preset_value > 0));
    }
}

TEST_CASE("held out: each GPU's own attention fallback efficiency against the calibration's, on the other half of its shapes") {
    // scripts/derive_gpu_eff_fallbacks.py: a family's prefill attention shapes (files) sorted and split alternately
    // into halves A and B; the value (the median over shapes of the best FLOP/s at seq_len >= 4096 over the BF16 peak)
    // derived on one half, the fallback tested on every point of the other.
    // Cited points: bench_data/mha/prefill/h20/32-8-128.csv line 3 (4,096 tokens, 1,125.999 us: 0.828 of 148 TFLOPS),
    //   bench_data/mha/prefill/h100/32-8-128.csv line 3 (4,096 tokens, 217.585 us: 0.639 of 989 TFLOPS),
    //   bench_data/mha/prefill/h200/32-8-128.csv line 2 (512 tokens, 18.01 us: 0.10 of 989 TFLOPS).
    const moe::Calibration& cal = moe::builtin_tables().calibration;  // attn_prefill_compute_eff 0.5066
    struct Want {
        const char* family;
        const char* preset;
        double derived_a, derived_b;
        int points_b, points_a;
        double own_b, global_b, own_a, global_a;
        double preset_value;
    };
    const Want wants[] = {
        {"h20", "h20", 0.948, 0.910, 10, 15, 0.091, 0.702, 0.041, 0.766, 0.943},
        {"h100", "h100-sxm", 0.759, 0.722, 15, 15, 0.080, 0.404, 0.051, 0.423, 0.743},
        {"h200", "h200", 0.644, 0.518, 24, 24, 0.423, 0.267, 0.221, 0.248, 0},
        {"b200", "b200", 0.550, 0.443, 24, 24, 0.623, 0.591, 0.360, 0.434, 0},
    };
    for (const Want& w : wants) {
        INFO(std::string(w.preset));
        const moe::GpuSpec& g = moe_test::preset_gpu(w.preset);
        CHECK(g.attn_efficiency == w.preset_value);
        const std::vector<AttnPoint> pts = attn_points(w.family, w.preset);
        int nb = 0, na = 0, nx = 0;
        const double own_b = attn_median(pts, g, 1, w.derived_a, nb);
        const double own_a = attn_median(pts, g, 0, w.derived_b, na);
        const double global_b = attn_median(pts, g, 1, cal.attn_prefill_compute_eff, nx);
        const double global_a = attn_median(pts, g, 0, cal.attn_prefill_compute_eff, nx);
        MESSAGE(std::string(w.preset) << ": held out A->B " << own_b << " own, " << global_b << " calibration's; B->A " << own_a << " own, "
                         << global_a << " calibration's (" << nb << " / " << na << " points)");
        moe_test::check_held_out(w, nb, na, own_b, global_b, own_a, global_a);
        // a preset carries its own value exactly where it beats the calibration's both ways (H200's and B200's AIC
        // rows rise with the sequence length up to their last point: no plateau for one fraction to fit)
        CHECK(((own_b < global_b) && (own_a < global_a)) == (w.preset_value > 0));
    }
    // the cited rows
    for (const auto& [family, preset, line, us] : {std::tuple{"h20", "h20", 3, 1125.999}, std::tuple{"h100", "h100-sxm", 3, 217.585},
                                                   std::tuple{"h200", "h200", 2, 18.01}}) {
        bool found = false;
        for (const AttnPoint& p : attn_points(family, preset))
            if (p.shape == "mha/32-8-128.csv" && p.line == line) {
                CHECK(p.meas_us == doctest::Approx(us).epsilon(1e-9));
                found = true;
            }
        CHECK(found);
    }
}
