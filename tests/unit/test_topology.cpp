// Topologies beyond one NVLink switch, expert offload and tile granularity (DESIGN §10), against the seeds' own
// numbers: seed 004 (DeepSeek-V3 on a 32-chip Tenstorrent Galaxy) and seed 003 (MoE on Apple silicon).
#include <algorithm>
#include <cmath>
#include <vector>

#include "test_helpers.h"
#include "core/step/topology.h"

using moe::Phase;
using moe_test::find_op;
using moe_test::rel_err;
using moe_test::run;

namespace {

// Seed 004, "A2A Dispatch" perf table (us): best / average / worst case by the number of active experts in a
// column, E = 1..8 (../shared/seeds/004_03368243205b3c02.txt).
const double kBest[8] = {26.868, 96.183, 33.005, 36.073, 39.141, 42.209, 45.277, 48.345};
const double kAvg[8] = {55.258, 66.713, 78.169, 89.624, 101.079, 112.535, 123.990, 135.445};
const double kWorst[8] = {88.238, 96.183, 104.129, 112.074, 120.020, 127.965, 135.911, 143.856};

// Every way to put E experts on the chips of a column (at most `per_chip` on one chip), from every source chip:
// the fewest and the most link-hops.
void hop_range(const moe::MeshAxis& axis, int E, int per_chip, double& lo, double& hi) {
    lo = 1e9;
    hi = -1;
    std::vector<int> pick(size_t(E), 0);
    for (;;) {
        bool ok = true;
        for (int c = 0; c < axis.n; ++c) ok = ok && std::count(pick.begin(), pick.end(), c) <= per_chip;
        if (ok)
            for (int src = 0; src < axis.n; ++src) {
                const double h = moe::mesh_dispatch_hops(axis, src, pick);
                lo = std::min(lo, h);
                hi = std::max(hi, h);
            }
        int i = E - 1;  // next non-decreasing sequence
        while (i >= 0 && pick[size_t(i)] == axis.n - 1) --i;
        if (i < 0) break;
        const int v = pick[size_t(i)] + 1;
        for (int j = i; j < E; ++j) pick[size_t(j)] = v;
    }
}

const moe::GpuSpec& galaxy() {
    const moe::GpuSpec* g = moe::builtin_catalog().gpu("wormhole-galaxy");
    REQUIRE(g);
    return *g;
}

}  // namespace

TEST_CASE("topology: seed 004's dispatch table on the Galaxy preset, every cell within 25%") {
    // IN-SAMPLE: the three mesh constants are fitted on these same cells (presets/calibration.json); the held-out
    // version of this check is "fitted on part of the cells and tested on the others" below.
    const moe::GpuSpec& g = galaxy();
    const moe::Calibration& cal = moe::builtin_tables().calibration;
    CHECK(g.topology == moe::Topology::mesh);
    CHECK(g.mesh_rows * g.mesh_cols == 32);
    // Seed 004's layout: dispatch along the 4 rows of a column; 256 experts over 32 chips = 8 per chip; each chip
    // holds B_local = 32 tokens of hidden 7168 in bf16.
    const moe::MeshAxis axis{g.mesh_rows, g.mesh_ring};
    const double tokens = 32, bytes = 7168 * 2.0;
    double worst_err = 0;
    for (int E = 1; E <= 8; ++E) {
        double lo, hi;
        hop_range(axis, E, 8, lo, hi);
        const double best = moe::mesh_a2a_us(g, cal, tokens, bytes, lo, E);
        const double avg = moe::mesh_a2a_us(g, cal, tokens, bytes, moe::mesh_expected(axis, E).dispatch_hops, E);
        const double worst = moe::mesh_a2a_us(g, cal, tokens, bytes, hi, E);
        INFO("E=" << E << " model best/avg/worst " << best << " / " << avg << " / " << worst);
        CHECK(rel_err(avg, kAvg[E - 1]) < 0.25);
        CHECK(rel_err(worst, kWorst[E - 1]) < 0.25);
        if (E == 2) {
            // The seed's best case at E=2 (96.183 us) repeats its worst case and breaks its own row (26.9 at E=1,
            // 33.0 at E=3). The model's best case keeps both experts on the token's own chip: no link-hop, two
            // local writes, in line with its neighbours.
            CHECK(lo == 0);
            CHECK(best > kBest[0]);
            CHECK(best < kBest[2]);
            CHECK(rel_err(best, kBest[2 - 1]) > 0.5);
        } else {
            CHECK(rel_err(best, kBest[E - 1]) < 0.25);
        }
        // orderings the table shows: best <= average <= worst, each growing with E
        CHECK(best <= avg);
        CHECK(avg <= worst);
        for (double err : {rel_err(avg, kAvg[E - 1]), rel_err(worst, kWorst[E - 1]), E == 2 ? 0.0 : rel_err(best, kBest[E - 1])})
            worst_err = std::max(worst_err, err);
    }
    // the in-sample max |error| docs/seeds.md quotes (23 cells, E = 2's best left out)
    MESSAGE("in-sample max |error| " << worst_err);
    CHECK(worst_err == doctest::Approx(0.1070).epsilon(0.002));
}

namespace {
// One cell of seed 004's dispatch table with the model's link-hops and writes for it.
struct MeshCell {
    int E;
    char row;  // 'b' best, 'a' average, 'w' worst
    double hops, writes, seed_us;
};

std::vector<MeshCell> mesh_cells() {
    const moe::GpuSpec& g = galaxy();
    const moe::MeshAxis axis{g.mesh_rows, g.mesh_ring};
    std::vector<MeshCell> cells;
    for (int E = 1; E <= 8; ++E) {
        double lo, hi;
        hop_range(axis, E, 8, lo, hi);
        if (E != 2) cells.push_back({E, 'b', lo, double(E), kBest[E - 1]});  // E=2 best: the seed's copy error
        cells.push_back({E, 'a', moe::mesh_expected(axis, E).dispatch_hops, double(E), kAvg[E - 1]});
        cells.push_back({E, 'w', hi, double(E), kWorst[E - 1]});
    }
    return cells;
}

// The mesh constants (mesh_latency_us, mesh_link_eff, mesh_write_eff) fitted to `fit` by least squares on relative
// error. The time is linear in (latency, 1/link_eff, 1/write_eff) (moe::mesh_a2a_us), so the fit is one 3x3 solve.
moe::Calibration fit_mesh(const std::vector<MeshCell>& fit) {
    const moe::GpuSpec& g = galaxy();
    const double bytes = 32 * 7168 * 2.0;  // 32 tokens of hidden 7168 in bf16 per chip
    const double A = bytes / (g.neighbour_GBps() * 1e9) * 1e6, B = bytes / (g.hbm_bandwidth_GBps * 1e9) * 1e6;
    double M[3][4] = {};
    for (const MeshCell& c : fit) {
        const double r[3] = {1.0 / c.seed_us, A * c.hops / c.seed_us, B * c.writes / c.seed_us};
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) M[i][j] += r[i] * r[j];
            M[i][3] += r[i];  // target: time / seed = 1
        }
    }
    for (int i = 0; i < 3; ++i)  // Gauss-Jordan
        for (int k = 0; k < 3; ++k) {
            if (k == i) continue;
            const double f = M[k][i] / M[i][i];
            for (int j = 0; j < 4; ++j) M[k][j] -= f * M[i][j];
        }
    moe::Calibration cal = moe::builtin_tables().calibration;
    cal.mesh_latency_us = M[0][3] / M[0][0];
    cal.mesh_link_eff = M[1][1] / M[1][3];
    cal.mesh_write_eff = M[2][2] / M[2][3];
    return cal;
}

double mesh_cell_us(const moe::Calibration& cal, const MeshCell& c) {
    return moe::mesh_a2a_us(galaxy(), cal, 32, 7168 * 2.0, c.hops, c.writes);
}
}  // namespace

TEST_CASE("topology: seed 004's dispatch table, fitted on part of the cells and tested on the others") {
    const std::vector<MeshCell> cells = mesh_cells();
    REQUIRE(cells.size() == 23);
    // All 23 cells reproduce the shipped constants (presets/calibration.json: 22.7 us, 0.346, 0.411): in-sample.
    const moe::Calibration all = fit_mesh(cells), shipped = moe::builtin_tables().calibration;
    CHECK(all.mesh_latency_us == doctest::Approx(shipped.mesh_latency_us).epsilon(0.01));
    CHECK(all.mesh_link_eff == doctest::Approx(shipped.mesh_link_eff).epsilon(0.01));
    CHECK(all.mesh_write_eff == doctest::Approx(shipped.mesh_write_eff).epsilon(0.01));
    // Split 1: fit on the extreme placements (best and worst rows, 15 cells), test on the average row (8 cells),
    // the one the step model uses (the expected hops over a uniform placement).
    std::vector<MeshCell> extremes, average;
    for (const MeshCell& c : cells) (c.row == 'a' ? average : extremes).push_back(c);
    const moe::Calibration ext = fit_mesh(extremes);
    MESSAGE("fit on best + worst: latency " << ext.mesh_latency_us << " us, link " << ext.mesh_link_eff << ", write "
                                            << ext.mesh_write_eff);
    double worst_in = 0, worst_out = 0;
    for (const MeshCell& c : extremes) worst_in = std::max(worst_in, rel_err(mesh_cell_us(ext, c), c.seed_us));
    for (const MeshCell& c : average) {
        const double e = rel_err(mesh_cell_us(ext, c), c.seed_us);
        MESSAGE("held-out average E=" << c.E << ": seed " << c.seed_us << " us, model " << mesh_cell_us(ext, c) << " us");
        worst_out = std::max(worst_out, e);
    }
    MESSAGE("split 1: in-sample max |error| " << worst_in << ", held-out (average row) max |error| " << worst_out);
    CHECK(worst_in < 0.15);
    CHECK(worst_out < 0.15);
    // Split 2: leave one E out (each column of 2-3 cells predicted by a fit on the other seven).
    std::vector<double> held;
    for (int E = 1; E <= 8; ++E) {
        std::vector<MeshCell> fit, test;
        for (const MeshCell& c : cells) (c.E == E ? test : fit).push_back(c);
        const moe::Calibration cal = fit_mesh(fit);
        for (const MeshCell& c : test) held.push_back(rel_err(mesh_cell_us(cal, c), c.seed_us));
    }
    std::sort(held.begin(), held.end());
    const double median = 0.5 * (held[held.size() / 2] + held[(held.size() - 1) / 2]);
    MESSAGE("split 2 (leave one E out, 23 held-out cells): median |error| " << median << ", max " << held.back());
    CHECK(median < 0.08);
    CHECK(held.back() < 0.20);
}

TEST_CASE("topology: mesh hop counting follows seed 004's description") {
    const moe::MeshAxis ring{4, true}, line{4, false};
    // passed along: chips 1 and 2 one way from 0 on a line cost the walk to 2, not 1 + 2
    CHECK(moe::mesh_dispatch_hops(line, 0, {1, 2}) == 2);
    CHECK(moe::mesh_dispatch_hops(line, 0, {1, 2, 3}) == 3);
    // several experts on one chip: the token goes there once
    CHECK(moe::mesh_dispatch_hops(line, 0, {2, 2, 2}) == 2);
    // a ring sends both ways: 1 and 3 are one hop each side
    CHECK(moe::mesh_dispatch_hops(ring, 0, {1, 3}) == 2);
    // the far chip is reached by both directions carrying half the token each: 2 hops x 2 x 0.5
    CHECK(moe::mesh_dispatch_hops(ring, 0, {2}) == 2);
    // combine: point to point, one reduced result per chip
    CHECK(moe::mesh_combine_hops(line, 0, {1, 1, 3}) == 4);
    // expectations: more experts reach further, never beyond the farthest walk
    const moe::MeshExpectation x1 = moe::mesh_expected(ring, 1), x8 = moe::mesh_expected(ring, 8);
    CHECK(x1.dispatch_hops == doctest::Approx(1.0));  // 1/4 own chip, 1/2 a neighbour, 1/4 the far side (2 x 0.5 x 2)
    CHECK(x8.dispatch_hops > x1.dispatch_hops);
    CHECK(x8.dispatch_hops < 3.0);
    CHECK(x8.chips < 4.0);
}

namespace {
// Seed 004 'Compute': DeepSeek-V3's experts (hidden 7168, intermediate 2048), two on each chip (64 experts over
// ep 32), block-FP4 weights (mxfp4 here). Tokens per expert = batch / 2 in this layout (batch x dp 4 x top-8 / 32
// chips / 2 experts). `rows` is routing.expert_rows: "even" gives every expert the same count (the seed's own
// examples: "E0 has 17, E1 has 17"), "random" the binomial spread of uniform top-8 routing. `matmul_eff` > 0 runs
// the preset with that hardware.matmul_efficiency instead of its own.
double galaxy_expert_us(int batch, const char* rows = "even", double matmul_eff = 0) {
    moe::CatalogEntry base;
    for (const moe::CatalogEntry& m : moe::builtin_catalog().models())
        if (m.id == "deepseek-v3") base = m;
    REQUIRE(!base.json.is_null());
    nlohmann::json cfg = base.json;
    cfg["n_routed_experts"] = 64;
    cfg["n_group"] = 8;
    cfg["topk_group"] = 4;
    nlohmann::json hw = "wormhole-galaxy";
    if (matmul_eff > 0) hw = {{"base", "wormhole-galaxy"}, {"matmul_efficiency", matmul_eff}};
    nlohmann::json s = {{"model", cfg}, {"hardware", hw},
                        {"parallel", {{"tp", 8}, {"dp", 4}, {"ep", 32}}},
                        {"workload", {{"phase", "decode"}, {"batch", batch}}},
                        {"routing", {{"expert_rows", rows}}},
                        {"precision", {{"experts", "mxfp4"}, {"dispatch", "bf16"}}}};
    moe::Estimate e = run(s.dump());
    const moe::OpRecord* op = find_op(e, "moe.routed_experts", Phase::decode);
    REQUIRE(op);
    return op->time_us;
}

// Seed 004's four worked examples of its 'Compute' notes: tokens of expert E0 and E1 on one chip -> step (us).
struct ComputeCell {
    int e0, e1;
    double seed_us;
};
const ComputeCell kCompute[4] = {{17, 17, 235}, {17, 38, 365}, {38, 38, 495}, {38, 70, 625}};

// The model's step for a cell: each expert runs its own rows in whole tiles, so E0 + E1 is half the step of two
// experts at E0 each plus half of two at E1 each (the step model takes one count for every expert: even rows).
double compute_cell_us(const ComputeCell& c, double matmul_eff) {
    return 0.5 * (galaxy_expert_us(2 * c.e0, "even", matmul_eff) + galaxy_expert_us(2 * c.e1, "even", matmul_eff));
}

// hardware.matmul_efficiency fitted to `fit` by least squares on relative error. The expert op is compute-bound
// on the Galaxy (checked below), so its time is x / eff with x its time at eff = 1: one parameter, closed form
// 1 / eff = sum(x / s) / sum((x / s)^2).
double fit_matmul_eff(const std::vector<ComputeCell>& fit) {
    const double eff0 = 0.05;  // any efficiency at which the op stays compute-bound
    double num = 0, den = 0;
    for (const ComputeCell& c : fit) {
        const double r = compute_cell_us(c, eff0) * eff0 / c.seed_us;
        num += r;
        den += r * r;
    }
    return den / num;
}
}  // namespace

TEST_CASE("topology: seed 004's stepwise expert compute on the Galaxy preset, fitted on part of the examples") {
    // Seed 004 'Compute': <= 32 tokens per expert 235 us, each further (up to) 32 tokens per expert ~130 us more;
    // E0 17 + E1 17 -> 235, 17 + 38 -> 365, 38 + 38 -> 495, 38 + 70 -> 625. The model bills each expert's own rows
    // in whole 32-token tiles (1, 2, 2, 3 tiles for 17, 38, 38, 70 rows; 2, 3, 4, 5 tiles a cell) at one
    // matmul_efficiency and has no per-step term, so it cannot give both the seed's first step (117.5 us a tile)
    // and its increment (130 us a tile).
    const std::vector<ComputeCell> all(std::begin(kCompute), std::end(kCompute));
    const double shipped = moe::builtin_catalog().gpu("wormhole-galaxy")->matmul_efficiency;
    // The shipped value is the fit on all four examples (presets/hardware/wormhole-galaxy.json): in-sample.
    const double eff_all = fit_matmul_eff(all);
    MESSAGE("fit on all four examples: matmul_efficiency " << eff_all << " (shipped " << shipped << ")");
    CHECK(shipped == doctest::Approx(eff_all).epsilon(0.005));
    // compute-bound at the fitted value: the time is exactly x / eff (the fit's premise)
    CHECK(compute_cell_us(kCompute[3], shipped) == doctest::Approx(compute_cell_us(kCompute[3], 0.05) * 0.05 / shipped).epsilon(1e-6));
    // In-sample errors of the shipped value, each cell by hand: one 32-row tile of one expert is 2 x 32 x 3 x 7168
    // x 2048 = 2,818,572,288 FLOP at the Wormhole's 328 TFLOPS (FP8 rate, block-FP4 weights) x 0.0705 = 121.9 us:
    // 243.8 (+3.7%), 365.7 (+0.2%), 487.6 (-1.5%), 609.4 (-2.5%).
    const double tile_us = galaxy_expert_us(34) / 2;
    CHECK(tile_us == doctest::Approx(2.0 * 32 * 3 * 7168 * 2048 / (328e12 * 0.0705) * 1e6).epsilon(0.001));
    const int tiles[4] = {2, 3, 4, 5};
    double worst_in = 0;
    for (int i = 0; i < 4; ++i) {
        const double m = compute_cell_us(kCompute[i], 0);
        CHECK(m == doctest::Approx(tiles[i] * tile_us).epsilon(1e-6));
        worst_in = std::max(worst_in, rel_err(m, kCompute[i].seed_us));
    }
    CHECK(worst_in < 0.04);
    // Split 1: fit on the balanced examples (17 + 17, 38 + 38: the counts the step model runs as given), test on
    // the unbalanced ones (17 + 38, 38 + 70). Fit: 120.5 us a tile, 240.9 (+2.5%) / 481.8 (-2.7%); held out:
    // 361.4 vs 365 (-1.0%), 602.3 vs 625 (-3.6%).
    const double eff_bal = fit_matmul_eff({kCompute[0], kCompute[2]});
    double in1 = 0, out1 = 0;
    for (int i : {0, 2}) in1 = std::max(in1, rel_err(compute_cell_us(kCompute[i], eff_bal), kCompute[i].seed_us));
    for (int i : {1, 3}) out1 = std::max(out1, rel_err(compute_cell_us(kCompute[i], eff_bal), kCompute[i].seed_us));
    MESSAGE("split 1 (fit 17+17, 38+38; test 17+38, 38+70): eff " << eff_bal << ", in-sample max " << in1
                                                                    << ", held-out max " << out1);
    CHECK(eff_bal == doctest::Approx(0.0713).epsilon(0.002));
    CHECK(in1 == doctest::Approx(0.027).epsilon(0.03));
    CHECK(out1 == doctest::Approx(0.036).epsilon(0.03));
    // Split 2: leave one example out (each predicted by a fit on the other three).
    double out2 = 0;
    for (int k = 0; k < 4; ++k) {
        std::vector<ComputeCell> fit;
        for (int i = 0; i < 4; ++i)
            if (i != k) fit.push_back(kCompute[i]);
        const double e = rel_err(compute_cell_us(kCompute[k], fit_matmul_eff(fit)), kCompute[k].seed_us);
        MESSAGE("leave out " << kCompute[k].e0 << "+" << kCompute[k].e1 << ": held-out |error| " << e);
        out2 = std::max(out2, e);
    }
    MESSAGE("split 2 (leave one example out): held-out max |error| " << out2);
    CHECK(out2 < 0.06);
    // What no split repairs: the fitted tile (121.9 us) is the seed's increment (130 us) less 6%, so a prefill of
    // many tiles comes out about 6% faster than the seed's rule; 70 + 70 (235 + 4 x 130 = 755 by that rule, not
    // one of the seed's examples) is 731.3 us, -3.1%.
    const double t38 = galaxy_expert_us(76), t70 = galaxy_expert_us(140);
    CHECK(rel_err((t38 - galaxy_expert_us(34)) / 2, 130) == doctest::Approx(0.062).epsilon(0.05));
    CHECK(t70 == doctest::Approx(6 * tile_us).epsilon(1e-6));
    CHECK(rel_err(t70, 755) < 0.04);
    // stepwise: anywhere up to 32 tokens per expert costs the same; the step is one tile of both experts
    // (10 per expert: an expert receives none of the 80 tokens with probability 0.875^80 = 2e-5 and runs no tile)
    CHECK(galaxy_expert_us(20) == doctest::Approx(2 * tile_us).epsilon(1e-4));
    CHECK(galaxy_expert_us(60) == doctest::Approx(2 * tile_us).epsilon(1e-6));
    CHECK(t38 == doctest::Approx(4 * tile_us).epsilon(1e-6));
}

TEST_CASE("tile fill: 31, 32 and 33 tokens per expert on the Galaxy (seed 004: <= 32 tokens per expert 235 us)") {
    // Before issue 30 the mean rows per active expert were rounded up to the tile: the expected active experts fall
    // short of 2 by 1e-15, so 64 pairs gave 32.00000000000005 rows each and two tiles, 520.8 us at exactly 32 tokens
    // per expert (matmul_efficiency 0.066 then) where seed 004 says 235 us. Even rows: one tile up to 32, two from
    // 33 (seed: 235, 235, 495; one tile of each expert at the shipped 0.0705: 2 x 121.9 = 243.8 us).
    const double e31 = galaxy_expert_us(62), e32 = galaxy_expert_us(64), e33 = galaxy_expert_us(66);
    MESSAGE("even rows, 31/32/33 per expert: " << e31 << " / " << e32 << " / " << e33 << " us (seed 004: 235 / 235 / 495)");
    CHECK(e32 == doctest::Approx(e31).epsilon(1e-9));
    CHECK(e32 == doctest::Approx(243.78).epsilon(0.001));
    CHECK(rel_err(e32, 235) < 0.04);
    CHECK(e33 == doctest::Approx(2 * e32).epsilon(1e-6));
    CHECK(rel_err(e33, 495) < 0.02);
    // Random rows (the default): each expert's rows are Binomial(tokens x 4 ranks, 8/64) and each expert's own rows
    // are rounded up. At a mean of 32 an expert has more than 32 rows with probability 0.453 (exact binomial sum,
    // E[ceil(X/32)] = 1.4531 for X ~ Bin(256, 1/8)): 1.4531 x 243.78 = 354.2 us, between the seed's one- and two-tile
    // steps because the seed's counts are exact and these are a chance mix. Smooth across the boundary.
    const double r31 = galaxy_expert_us(62, "random"), r32 = galaxy_expert_us(64, "random"), r33 = galaxy_expert_us(66, "random");
    MESSAGE("random rows, mean 31/32/33 per expert: " << r31 << " / " << r32 << " / " << r33 << " us");
    CHECK(r32 == doctest::Approx(1.4531 * e32).epsilon(0.002));
    // The column docs/seeds.md prints, each by the binomial sum E[ceil(X/32)] for X ~ Bin(4 x tokens, 1/8):
    // 31 + 31: 336.0 us, 33 + 33: 372.5 us, 38 + 38: 446.0 us (a mean of 38 rows is two tiles unless X <= 32).
    auto tiles_per_expert = [](int n) {
        double sum = 0;
        for (int x = 1; x <= n; ++x)
            sum += std::ceil(x / 32.0) * std::exp(std::lgamma(n + 1.0) - std::lgamma(x + 1.0) - std::lgamma(n - x + 1.0) +
                                                  x * std::log(1.0 / 8) + (n - x) * std::log(7.0 / 8));
        return sum;
    };
    const double r38 = galaxy_expert_us(76, "random");
    MESSAGE("random rows, mean 38 per expert: " << r38 << " us");
    CHECK(r31 == doctest::Approx(tiles_per_expert(248) * e32).epsilon(1e-6));
    CHECK(r33 == doctest::Approx(tiles_per_expert(264) * e32).epsilon(1e-6));
    CHECK(r38 == doctest::Approx(tiles_per_expert(304) * e32).epsilon(1e-6));
    CHECK(r31 == doctest::Approx(336.0).epsilon(5e-4));
    CHECK(r32 == doctest::Approx(354.2).epsilon(5e-4));
    CHECK(r33 == doctest::Approx(372.5).epsilon(5e-4));
    CHECK(r38 == doctest::Approx(446.0).epsilon(5e-4));
    CHECK(r31 < r32);
    CHECK(r32 < r33);
    CHECK(r33 - r32 < 0.2 * e32);  // no whole-tile jump
    CHECK(r32 - r31 < 0.2 * e32);
    // far from a boundary the two laws agree: a mean of 17 rows almost never exceeds 32 (P = 1.2e-4)
    CHECK(galaxy_expert_us(34, "random") == doctest::Approx(galaxy_expert_us(34)).epsilon(0.001));
}

TEST_CASE("topology: DeepSeek-V3 decode on the Galaxy mesh names its hops") {
    moe::Estimate e = run(R"({"model":"deepseek-v3","hardware":"wormhole-galaxy","parallel":{"tp":8,"dp":4,"ep":32},)"
                          R"("workload":{"phase":"decode","batch":32},"precision":{"experts":"mxfp4","dispatch":"bf16"}})");
    const moe::OpRecord* d = find_op(e, "comm.dispatch", Phase::decode);
    const moe::OpRecord* c = find_op(e, "comm.combine", Phase::decode);
    REQUIRE(d);
    REQUIRE(c);
    CHECK(d->engine == moe::Engine::mesh);
    // Expected link-hops per token (core/step/topology.cpp). tp 8 splits the experts over the 8 columns, 32 a
    // column in order (tt-metal moe_expert_mapping.py); DeepSeek-V3's gate keeps a token's 8 experts inside 4 of its
    // 8 groups of 32, so its chip's column is one of them with probability 1/2 and then holds 8 of the chosen 128
    // experts' 32 (Hypergeometric). From chip 0 of a ring of 4 (mesh_wrap) the dispatch walks to the farthest
    // destination each way (chips 1 and 3 one hop; the far chip 2 reached by both directions, each carrying half
    // the token): 3 - 2 n1 - n2 with n1, n2 = P(no expert on one / two given chips) = 0.745992; the combine sends one
    // result back per destination chip over its distance (0, 1, 2, 1): 4 (1 - n1) = 0.824564. By hand and against
    // an enumeration: test_seed004_routing.cpp. (Before issue 30, Binomial(8, 1/8) experts per column with no
    // groups: 0.851881 / 0.897200.)
    CHECK(d->hops == doctest::Approx(0.745992).epsilon(1e-5));
    CHECK(c->hops == doctest::Approx(0.824564).epsilon(1e-5));
    // k = 8 experts over 8 columns: about one per column, so the dispatch sits near the seed's E = 1..2 cells
    CHECK(d->time_us > kBest[0]);
    CHECK(d->time_us < kAvg[1]);
    const moe::OpRecord* ar = find_op(e, "comm.attn_allreduce", Phase::decode);
    REQUIRE(ar);
    CHECK(ar->engine == moe::Engine::mesh);
    // Seed 004 all-gathers the tokens along the TP axis before the MoE and reduce-scatters after it; the model runs
    // one all-reduce after attention instead (a reduce-scatter plus an all-gather's bytes: the same bytes a layer,
    // one latency term where the seed's pair would pay two). By hand, a ring over the row's 8 chips (mesh_wrap):
    // 2 x 7/8 x 32 tokens x 7168 x 2 B = 802,816 B over both directions of a 50 GB/s neighbour link x mesh_link_eff
    // 0.346 (fitted on seed 004's dispatch table; no all-reduce on the mesh is measured), + mesh_latency_us 22.7:
    // 802,816 / 34.6e9 s = 23.20 us + 22.7 = 45.90 us.
    const moe::Calibration& cal = moe::builtin_tables().calibration;
    CHECK(ar->comm_bytes == doctest::Approx(2.0 * 7 / 8 * 32 * 7168 * 2).epsilon(1e-12));
    CHECK(ar->time_us == doctest::Approx(cal.mesh_latency_us + 802816.0 / (50e9 * cal.mesh_link_eff * 2) * 1e6).epsilon(1e-9));
    CHECK(ar->time_us == doctest::Approx(45.90).epsilon(2e-3));
}

TEST_CASE("topology: EP72 inside an NVL72 rack pays no RDMA; on 9 nodes of 8 H100 it does") {
    // 256 experts + 32 redundant = 4 per GPU over 72 (EPLB), DeepSeek-V3 decode with DeepEP low-latency
    const char* tail = R"(,"parallel":{"tp":1,"dp":72,"ep":72},"routing":{"redundant_experts":32},)"
                       R"("workload":{"phase":"decode","batch":32},"runtime":{"a2a_backend":"deepep_low_latency"}})";
    moe::Estimate rack = run(std::string(R"({"model":"deepseek-v3","hardware":"gb200")") + tail);
    moe::Estimate h100 = run(std::string(R"({"model":"deepseek-v3","hardware":"h100-sxm")") + tail);
    CHECK(moe::builtin_catalog().gpu("gb200")->topology == moe::Topology::rack);
    CHECK(moe::builtin_catalog().gpu("gb300")->topology == moe::Topology::rack);
    for (const moe::OpRecord& o : rack.ops) CHECK_MESSAGE(o.engine != moe::Engine::rdma, o.name);
    const moe::OpRecord* d = find_op(h100, "comm.dispatch", Phase::decode);
    REQUIRE(d);
    CHECK(d->engine == moe::Engine::rdma);
    CHECK(find_op(rack, "comm.dispatch", Phase::decode)->time_us < d->time_us);
    // a rack wider than one NVLink domain of 72 is an error that names the field
    moe::ParseResult r = moe::parse_scenario(R"({"hardware":{"base":"gb200","gpus_per_node":144}})", moe::builtin_catalog());
    REQUIRE_FALSE(r.ok());
    CHECK(r.errors[0].path == "hardware.gpus_per_node");
}

TEST_CASE("topology: errors name the field") {
    auto first_error = [](const char* text) {
        moe::ParseResult r = moe::parse_scenario(text, moe::builtin_catalog());
        REQUIRE_FALSE(r.ok());
        return r.errors[0].path;
    };
    CHECK(first_error(R"({"hardware":{"base":"wormhole-galaxy","link_bandwidth_GBps":0}})") == "hardware.link_bandwidth_GBps");
    CHECK(first_error(R"({"hardware":{"base":"h100-sxm","topology":"torus"}})") == "hardware.topology");
    CHECK(first_error(R"({"model":"qwen3-30b-a3b","hardware":"wormhole-galaxy","parallel":{"tp":1,"dp":64,"ep":64}})") == "parallel");
    CHECK(first_error(R"({"model":"qwen3-30b-a3b","hardware":"m2-max","parallel":{"tp":2}})") == "parallel");
    CHECK(first_error(R"({"hardware":"h100-pcie","runtime":{"expert_offload":{"tier":"ssd"}}})") == "runtime.expert_offload.tier");
    CHECK(first_error(R"({"model":"qwen3-30b-a3b","runtime":{"expert_offload":{"tier":"host","cached_experts_per_layer":200}},"hardware":"gb200"})") ==
          "runtime.expert_offload.cached_experts_per_layer");
}

using moe_test::seed003_tok_s;

TEST_CASE("offload: seed 003's directions on the M2 Max preset") {
    // 12 -> 45 -> 58 tok/s for per-token, grouped and cached execution (seed 003, design estimates). Streaming
    // chain: every selected expert comes from the CPU-side copy (per token-expert pair, then once per expert), then
    // a cache of the 4 hottest experts with prefetch; the skew is calibrated to the seed's 85% hit rate (below).
    moe::Estimate cached_e;
    const double per_token = seed003_tok_s(8, R"({"expert_layout":"per_token","expert_offload":{"tier":"host"}})");
    const double grouped = seed003_tok_s(8, R"({"expert_offload":{"tier":"host"}})");
    const double cached = seed003_tok_s(8, R"({"expert_offload":{"tier":"host","cached_experts_per_layer":4,"prefetch":true,"skew":1.5}})", &cached_e);
    MESSAGE("seed 003 streamed chain: per-token " << per_token << ", grouped " << grouped << ", cached " << cached << " tok/s");
    CHECK(per_token < grouped);
    CHECK(grouped < cached);
    // regression pin of the model's own figure (a 21.377 ms step; the seed's 58 tok/s is a design estimate)
    CHECK(cached == doctest::Approx(46.7785).epsilon(1e-5));
    // CALIBRATION, not a validation: skew 1.5 is fitted on the number asserted here, chosen so that this cache hits
    // about as often as the seed says (85% "for top_k=2"; 86.5% when chosen, 86.2% since issue 30 redistributes the
    // capped share; not re-fitted); no published routing histogram of a Mixtral-shaped model is in the reference set to
    // derive it from. Worked: Zipf weights i^-1.5 over 8 experts sum to 1.9267; a token makes 2 selections, and
    // 2 / 1.9267 = 1.038 > 1 caps expert 1 at 1; the other selection goes to experts 2..8 by weight (sum 0.92668):
    // pi_i = 1, 0.382, 0.208, 0.135 for the 4 cached, 0.097, 0.073, 0.058, 0.048 for the others: hit rate
    // 1.72410 / 2 = 0.86205 (before issue 30 the capped 0.038 was dropped: 1.6966 / 1.9619 = 0.8648).
    CHECK(cached_e.memory.offload_hit_rate == doctest::Approx(0.86205).epsilon(1e-4));
    // Uniform routing (skew 0, top-2 of 8 without a preference) hits 4 / 8 = 50% and streams more, but at batch 32
    // every expert is selected either way and prefetch hides the four streamed ones (4 x 26 MB at 200 GB/s, ~0.5 ms)
    // under a layer's ~0.8 ms of compute: the same tok/s. The calibrated skew moves no seed 003 number at 8 experts.
    moe::Estimate uniform_e;
    const double cached_uniform =
        seed003_tok_s(8, R"({"expert_offload":{"tier":"host","cached_experts_per_layer":4,"prefetch":true,"skew":0}})", &uniform_e);
    MESSAGE("seed 003 cached, uniform routing: " << cached_uniform << " tok/s (hit rate " << uniform_e.memory.offload_hit_rate << ")");
    CHECK(uniform_e.memory.offload_hit_rate == doctest::Approx(0.5));
    CHECK(uniform_e.decode.offload_bytes > cached_e.decode.offload_bytes);
    CHECK(cached_uniform == doctest::Approx(cached).epsilon(1e-9));
    // memory shows what stays in HBM: half the experts
    CHECK(cached_e.memory.offloaded_experts_bytes == doctest::Approx(cached_e.memory.weights_experts_bytes).epsilon(1e-6));
    CHECK(find_op(cached_e, "moe.expert_stream", Phase::decode));
    // resident weights: grouping alone is what turns 12 into 45
    const double per_token_res = seed003_tok_s(8, R"({"expert_layout":"per_token"})");
    moe::Estimate grouped_e;
    const double grouped_res = seed003_tok_s(8, "{}", &grouped_e);
    MESSAGE("seed 003 resident: per-token " << per_token_res << ", grouped " << grouped_res << " tok/s");
    CHECK(per_token_res < grouped_res);
    double moe_ms = 0;
    for (const moe::OpRecord& o : grouped_e.ops)
        if (o.phase == Phase::decode && std::string(o.name).rfind("moe.", 0) == 0) moe_ms += o.exposed_us * o.count / 1000;
    MESSAGE("seed 003 MoE part of the step (router, dispatch, experts, combine): " << moe_ms << " ms vs 15.2");
    CHECK(rel_err(moe_ms, 15.2) < 0.25);
    // 72 -> 58 -> 48 -> 38 -> 32 tok/s over 4..64 experts with a fixed cache of 8. At 4 and 8 experts every expert
    // is cached and the batch-32 step is the experts' compute, the same 64 token-expert pairs either way: the model
    // gives the same time (46.8 tok/s) where the seed has 72 and 58. (Before issue 30 it gave 43.7 and 42.2: the
    // 8-expert step paid a ninth row per expert, 64 pairs over 7.99999 expected experts rounded up in one-row tiles.)
    // From 16 experts on, misses stream from the CPU side and each doubling is slower.
    double last = 1e9;
    for (int E : {4, 8, 16, 32, 64}) {
        const std::string rt = R"({"expert_offload":{"tier":"host","prefetch":true,"skew":1.5,"cached_experts_per_layer":)" +
                               std::to_string(std::min(E, 8)) + "}}";
        const double t = seed003_tok_s(E, rt.c_str());
        MESSAGE("seed 003 " << E << " experts: " << t << " tok/s");
        if (E == 4) CHECK(t == doctest::Approx(46.7785).epsilon(1e-5));  // every expert cached: the resident step
        if (E == 8) CHECK(t == doctest::Approx(last).epsilon(1e-9));
        else CHECK(t < last);
        last = t;
    }
}

TEST_CASE("offload: the cache, the skew and prefetch move time the right way") {
    auto stream_ms = [](const char* offload) {
        moe::Estimate e = run(std::string(R"({"model":"qwen3-30b-a3b","hardware":"gb200","workload":{"phase":"decode","batch":16},"runtime":{"expert_offload":)") +
                              offload + "}}");
        return std::make_pair(e.decode.offload_ms, e.memory.weights_experts_bytes);
    };
    const auto none = stream_ms(R"({"tier":"host","cached_experts_per_layer":32})");
    const auto skewed = stream_ms(R"({"tier":"host","cached_experts_per_layer":32,"skew":1.2})");
    const auto bigger = stream_ms(R"({"tier":"host","cached_experts_per_layer":96})");
    const auto all = stream_ms(R"({"tier":"host","cached_experts_per_layer":128})");
    CHECK(none.first > 0);
    CHECK(skewed.first < none.first);   // hot experts hit the cache
    CHECK(bigger.first < none.first);
    CHECK(all.first == 0);
    CHECK(bigger.second > none.second);  // what stays in HBM grows with the cache
    const auto pre = stream_ms(R"({"tier":"host","cached_experts_per_layer":32,"prefetch":true})");
    CHECK(pre.first < none.first);
}

TEST_CASE("offload: the bytes, the link time and the step, worked by hand (Qwen3-30B-A3B on GB200, 32 cached, skew 1.2)") {
    // Qwen3-30B-A3B in BF16 on one GB200, decode batch 16, 32 of 128 experts per layer cached, skew 1.2. The
    // popularity law core/step/offload.cpp documents: Zipf weights w_i = i^-1.2, Z = sum_{i<=128} w_i = 3.69841;
    // a token makes k L / E = 8 selections; 8 w_i / Z gives pi_1 = 2.163 > 1, so expert 1 is capped at 1 and the
    // other 7 selections spread over the rest: 7 w_2 / (Z - 1) = 1.129 > 1, so expert 2 is capped too, and the
    // remaining 6 go over experts 3..128 (weights sum Z - 1 - 2^-1.2 = 2.26314): pi_3 = 6 x 3^-1.2 / 2.26314 =
    // 0.70941 <= 1, pi_32 = 0.041425, pi_33 = 0.039923, pi_128 = 0.0078485. Sum = 8: the step's 16 tokens route 128
    // rows, as top-8 routing does (before issue 30 the clipped 1.163 of expert 1 was lost: 6.84 selections a token).
    // Hit rate = sum_{i<=32} pi / 8 = 6.41176 / 8 = 0.80147.
    // Streamed per layer (grouped execution: once per uncached expert picked by any of the 16 tokens):
    // sum_{i>32} 1 - (1 - pi_i)^16 = 21.8968 experts x 3 x 2048 x 768 x 2 B (9,437,184 B) = 206.644 MB; 48 layers:
    // 9.9189 GB per step. At the host link's 450 GB/s (GB200: NVLink-C2C 900 GB/s bidirectional, one way;
    // presets/hardware/README.md): 459.21 us per layer, 22.042 ms per step.
    double z = 0, hit = 0, all = 0, miss = 0;
    for (int i = 1; i <= 128; ++i) z += std::pow(double(i), -1.2);
    CHECK(z == doctest::Approx(3.69841).epsilon(1e-5));
    CHECK(8 / z > 1);                                      // expert 1 capped
    CHECK(7 * std::pow(2.0, -1.2) / (z - 1) > 1);          // then expert 2
    const double rest = z - 1 - std::pow(2.0, -1.2);
    CHECK(6 * std::pow(3.0, -1.2) / rest < 1);             // expert 3 not
    for (int i = 1; i <= 128; ++i) {
        const double pi = i <= 2 ? 1.0 : 6 * std::pow(double(i), -1.2) / rest;
        all += pi;
        if (i <= 32) hit += pi;
        else miss += 1 - std::pow(1 - pi, 16);
    }
    CHECK(all == doctest::Approx(8.0).epsilon(1e-12));
    CHECK(hit / all == doctest::Approx(0.80147).epsilon(1e-4));
    CHECK(miss == doctest::Approx(21.8968).epsilon(1e-4));
    const double layer_bytes = 206.644e6, layer_us = 459.21;
    CHECK(miss * 9437184 == doctest::Approx(layer_bytes).epsilon(1e-5));
    CHECK(layer_bytes / 450e9 * 1e6 == doctest::Approx(layer_us).epsilon(1e-5));

    auto est = [](const char* offload) {
        return run(std::string(R"({"model":"qwen3-30b-a3b","hardware":"gb200","workload":{"phase":"decode","batch":16},"runtime":{"expert_offload":)") +
                   offload + "}}");
    };
    auto moe_layer_us = [](const moe::Estimate& e) {
        for (const moe::LayerGroup& g : e.decode.groups)
            if (g.label == "MoE layers") {
                CHECK(g.count == 48);
                return g.time_us;
            }
        FAIL("no MoE layer group");
        return 0.0;
    };
    const moe::Estimate resident = est(R"({"tier":"host","cached_experts_per_layer":128})");
    const moe::Estimate serial = est(R"({"tier":"host","cached_experts_per_layer":32,"skew":1.2})");
    const moe::Estimate prefetch = est(R"({"tier":"host","cached_experts_per_layer":32,"skew":1.2,"prefetch":true})");
    for (const moe::Estimate* e : {&serial, &prefetch}) {
        CHECK(e->memory.offload_hit_rate == doctest::Approx(0.80147).epsilon(1e-4));
        CHECK(e->decode.offload_bytes == doctest::Approx(48 * layer_bytes).epsilon(1e-5));  // 9.9189 GB
    }
    CHECK(resident.decode.offload_bytes == 0);
    // The step rule (core/step/step.cpp, layer_time): a MoE layer is its compute (here one GPU, no communication) plus
    // the stream without prefetch; with prefetch the next layer's experts stream under this layer's compute, so the
    // layer takes max(compute, stream). The compute is the resident run's MoE layer: the same GEMMs.
    const double compute_us = moe_layer_us(resident);
    MESSAGE("Qwen3-30B-A3B GB200 batch 16: MoE layer compute " << compute_us << " us, stream " << layer_us << " us");
    CHECK(moe_layer_us(serial) == doctest::Approx(compute_us + layer_us).epsilon(1e-4));
    CHECK(moe_layer_us(prefetch) == doctest::Approx(std::max(compute_us, layer_us)).epsilon(1e-4));
    CHECK(serial.decode.offload_ms == doctest::Approx(22.042).epsilon(1e-4));  // all of the stream is exposed
    CHECK(serial.decode.step_ms == doctest::Approx(resident.decode.step_ms + 22.042).epsilon(1e-4));
    CHECK(prefetch.decode.offload_ms == doctest::Approx(48 * std::max(0.0, layer_us - compute_us) / 1000).epsilon(1e-4));
    CHECK(prefetch.decode.step_ms ==
          doctest::Approx(resident.decode.step_ms + 48 * std::max(0.0, layer_us - compute_us) / 1000).epsilon(1e-4));
    // The other side of max(): with 96 cached the misses are sum_{i>96} 1 - (1 - pi_i)^16 = 4.41658 experts, 41.68 MB,
    // 92.62 us per layer, less than the layer's compute: prefetch hides all of it, serial pays all of it.
    const double small_us = 92.622;
    const moe::Estimate serial96 = est(R"({"tier":"host","cached_experts_per_layer":96,"skew":1.2})");
    const moe::Estimate prefetch96 = est(R"({"tier":"host","cached_experts_per_layer":96,"skew":1.2,"prefetch":true})");
    CHECK(serial96.decode.offload_bytes == doctest::Approx(48 * 41.6801e6).epsilon(1e-5));
    CHECK(moe_layer_us(serial96) == doctest::Approx(compute_us + small_us).epsilon(1e-4));
    CHECK(moe_layer_us(prefetch96) == doctest::Approx(compute_us).epsilon(1e-9));
    CHECK(prefetch96.decode.offload_ms == 0);
    CHECK(prefetch96.decode.step_ms == doctest::Approx(resident.decode.step_ms).epsilon(1e-9));
}

TEST_CASE("offload: a skewed popularity still routes tokens x top_k rows (the capped mass is redistributed)") {
    // Per-token execution streams each uncached token-expert pair once, so with no expert cached the stream is every
    // routed row: 16 tokens x 8 = 128 rows a layer x 9,437,184 B (Qwen3-30B-A3B BF16 expert) x 48 layers =
    // 57.98 GB per step, whatever the skew. Under skew 3 expert 1 alone would take 8 / Z = 6.66 (Z = sum_{i<=128} i^-3 = 1.2020) of a
    // token's 8 selections; a token picks an expert once, so the cap is 1 and the other 7 go to experts 2..128.
    // Before issue 30 they were dropped: 1 + 8 (Z - 1) / Z = 2.34 selections a token, 29.3% of the bytes above.
    auto bytes = [](const char* skew) {
        return run(std::string(R"({"model":"qwen3-30b-a3b","hardware":"gb200","workload":{"phase":"decode","batch":16},)"
                               R"("runtime":{"expert_layout":"per_token","expert_offload":{"tier":"host","skew":)") +
                   skew + "}}}").decode.offload_bytes;
    };
    const double rows_bytes = 48.0 * 16 * 8 * 9437184;
    CHECK(rows_bytes == doctest::Approx(57.98e9).epsilon(1e-3));
    for (const char* skew : {"0", "1.2", "3"}) {
        INFO("skew " << skew);
        CHECK(bytes(skew) == doctest::Approx(rows_bytes).epsilon(1e-12));
    }
}

TEST_CASE("tile fill: one-row tiles on the M2 Max cost nothing at 31, 32 or 33 sequences (seed 003's batch 32)") {
    // Apple GPUs run the experts without a fixed M tile (tile 1). Before issue 30 the mean rows per active expert
    // were rounded up all the same: Mixtral int4 decode on the M2 Max went 171.7 -> 186.0 ms from batch 31 to 32
    // (64 pairs over 7.99999 expected experts = 8.00001 rows, billed 9) and 186.0 -> 188.4 ms to 33. Now the step
    // grows by the same 5.22 ms per sequence across the boundary (159.5, 164.7, 169.9, 175.1 ms).
    auto step_ms = [](int batch) {
        moe::Estimate e = run(R"({"model":"mixtral-8x7b","hardware":"m2-max","workload":{"phase":"decode","batch":)" +
                              std::to_string(batch) + R"(},"precision":{"experts":"int4"}})");
        return e.decode.step_ms;
    };
    const double s30 = step_ms(30), s31 = step_ms(31), s32 = step_ms(32), s33 = step_ms(33);
    MESSAGE("Mixtral int4 on M2 Max, batch 30..33: " << s30 << " " << s31 << " " << s32 << " " << s33 << " ms");
    CHECK(s32 - s31 == doctest::Approx(s31 - s30).epsilon(0.01));
    CHECK(s33 - s32 == doctest::Approx(s32 - s31).epsilon(0.01));
    // Seed 003's own setup at its batch of 32: the expert GEMM is 12.5 ms of a 15.2 ms MoE step (design estimates).
    moe::Estimate e;
    seed003_tok_s(8, "{}", &e);
    const moe::OpRecord* op = find_op(e, "moe.routed_experts", Phase::decode);
    REQUIRE(op);
    const double experts_ms = op->time_us * op->count / 1000;
    MESSAGE("seed 003 expert GEMM: " << experts_ms << " ms vs 12.5 ms");
    CHECK(rel_err(experts_ms, 12.5) < 0.15);
}

TEST_CASE("host link on the NVIDIA presets: expert offload to host memory runs on an H100 at PCIe Gen5's 64 GB/s (issue 29)") {
    using namespace moe_test;
    // was "runtime.expert_offload.tier: host needs hardware.host_bandwidth_GBps > 0"
    const moe::Estimate e = run(R"({"model":"qwen3-30b-a3b","hardware":"h100-sxm","workload":{"phase":"decode","batch":1},
        "runtime":{"expert_offload":{"tier":"host","cached_experts_per_layer":16}}})");
    const moe::OpRecord* s = find_op(e, "moe.expert_stream", moe::Phase::decode);
    REQUIRE(s);
    // NVIDIA H100 datasheet: PCIe Gen5 128 GB/s bidirectional = 64 GB/s host -> device
    CHECK(s->time_us == doctest::Approx(s->comm_bytes / 64e9 * 1e6).epsilon(0.02));
    CHECK(moe::builtin_catalog().gpu("a100-sxm-80g")->host_bandwidth_GBps == 32);  // PCIe Gen4 x16
}
