// Seed 004's larger meshes: DUAL (8, 8) and QUAD (16, 8) Galaxies, as inline hardware on the wormhole-galaxy preset
// (core/step/topology.cpp), their expected link-hops checked against an enumeration of the expert placements.
#include <cmath>
#include <vector>

#include "test_helpers.h"
#include "core/step/topology.h"

using moe::Phase;
using moe_test::find_op;
using moe_test::run;

TEST_CASE("topology: seed 004's DUAL (8, 8) and QUAD (16, 8) meshes, hops against an enumeration") {
    // Seed 004: TG (4, 8) = 32 devices, DUAL (8, 8) = 64, QUAD (16, 8) = 128; 256 experts over them: 8, 4, 2 per
    // device. As inline hardware: the Galaxy preset with mesh_rows 8 or 16 (no preset of their own).
    // The expected dispatch and combine link-hops of e experts placed uniformly on a ring of n chips, from chip 0
    // (a ring looks the same from every chip), against every one of the n^e placements:
    for (int n : {8, 16}) {
        const moe::MeshAxis ring{n, true};
        for (int e = 1; e <= (n == 8 ? 4 : 3); ++e) {
            double d = 0, c = 0, count = 0;
            std::vector<int> pick(size_t(e), 0);
            for (;;) {
                d += moe::mesh_dispatch_hops(ring, 0, pick);
                c += moe::mesh_combine_hops(ring, 0, pick);
                ++count;
                int i = 0;  // next placement (an odometer over the n chips)
                while (i < e && ++pick[size_t(i)] == n) pick[size_t(i++)] = 0;
                if (i == e) break;
            }
            const moe::MeshExpectation x = moe::mesh_expected(ring, e);
            INFO("ring " << n << ", " << e << " experts");
            CHECK(x.dispatch_hops == doctest::Approx(d / count).epsilon(1e-9));
            CHECK(x.combine_hops == doctest::Approx(c / count).epsilon(1e-9));
        }
    }
    // One expert on a ring of 8 by hand: distances 0, 1, 2, 3, 4 (the far chip: 2 x 1/2 x 4), 3, 2, 1 -> 16 / 8 = 2.
    CHECK(moe::mesh_expected({8, true}, 1).dispatch_hops == doctest::Approx(2.0));
    // DeepSeek-V3 decode on each mesh (tp 8 along the columns, dp = rows, ep = all chips). Its gate is group-limited
    // (n_group 8, topk_group 4) and 256 experts fill the columns in order (tt-metal moe_expert_mapping.py), 32 a
    // column whatever the rows: one group is one column. So a token's column is among its 4 groups with probability
    // 1/2, and then holds E ~ Hypergeometric(128, 32, 8) of its experts, E distinct experts of the column's 32 placed
    // on its chips (32 / rows each). Expected hops, independently of core/step/topology.cpp's formula: every
    // occupancy of the column's chips by e experts (x_j on chip j, weight prod C(32/rows, x_j) / C(32, e)), the
    // walk from chip 0 (a ring looks the same from every chip). A longer column costs more link-hops.
    double prev_hops = 0;
    for (int rows : {4, 8, 16}) {
        const int chips = rows * 8, cap = 32 / rows;
        nlohmann::json s = {{"model", "deepseek-v3"},
                            {"hardware", {{"base", "wormhole-galaxy"}, {"mesh_rows", rows}}},
                            {"parallel", {{"tp", 8}, {"dp", rows}, {"ep", chips}}},
                            {"workload", {{"phase", "decode"}, {"batch", 32}}},
                            {"precision", {{"experts", "mxfp4"}, {"dispatch", "bf16"}}}};
        moe::Estimate e = run(s.dump());
        const moe::OpRecord* d = find_op(e, "comm.dispatch", Phase::decode);
        REQUIRE(d);
        CHECK(d->engine == moe::Engine::mesh);
        auto choose = [](int n, int k) {
            double c = 1;
            for (int i = 0; i < k; ++i) c = c * (n - i) / (i + 1);
            return k < 0 || k > n ? 0.0 : c;
        };
        std::vector<double> hops_given(9, 0.0);  // E[hops | e experts in the column]
        std::vector<int> targets;                 // the chip of each expert placed so far
        // every occupancy with at most 8 experts: chip j takes 0..cap of them (a depth-first walk over the chips that
        // stops a branch once it holds more than 8, instead of an odometer over all (cap + 1)^rows occupancies)
        auto walk = [&](auto&& self, int j, double w) -> void {
            if (j == rows) {
                const size_t total = targets.size();
                hops_given[total] += w / choose(32, int(total)) * moe::mesh_dispatch_hops({rows, true}, 0, targets);
                return;
            }
            for (int k = 0; k <= cap && targets.size() + size_t(k) <= 8; ++k) {
                for (int t = 0; t < k; ++t) targets.push_back(j);
                self(self, j + 1, w * choose(cap, k));
                targets.resize(targets.size() - size_t(k));
            }
        };
        walk(walk, 0, 1.0);
        double expect = 0;
        for (int k = 1; k <= 8; ++k) expect += 0.5 * choose(32, k) * choose(96, 8 - k) / choose(128, 8) * hops_given[size_t(k)];
        MESSAGE(rows << " x 8 mesh: " << d->hops << " dispatch link-hops per token, " << 256 / chips << " experts per chip");
        CHECK(d->hops == doctest::Approx(expect).epsilon(1e-6));
        if (rows == 4) CHECK(d->hops == doctest::Approx(0.745992).epsilon(1e-5));  // test_seed004_routing.cpp: 3 - 2 n1 - n2
        CHECK(d->hops > prev_hops);
        prev_hops = d->hops;
    }
}
