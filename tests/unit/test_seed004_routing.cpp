// Seed 004's group-limited routing on the mesh (core/step/topology.cpp, MeshRouting): a token's experts confined to
// its chosen groups' chips, the law of "active experts within a column" (the E of seed 004's dispatch table) and the
// link-hops that follow, by hand for DeepSeek-V3 on the 4 x 8 Galaxy and against brute-force enumerations.
#include <algorithm>
#include <cmath>
#include <vector>

#include "test_helpers.h"
#include "core/step/topology.h"

using moe::Phase;
using moe_test::find_op;
using moe_test::run;

namespace {

double choose(int n, int k) {
    if (k < 0 || k > n) return 0;
    double c = 1;
    for (int i = 0; i < k; ++i) c = c * (n - i) / (i + 1);
    return c;
}

// DeepSeek-V3 on the Galaxy: 256 experts over 8 columns of 4 chips (8 a chip, 32 a column), top-8. Its HF config
// has n_group 8, topk_group 4 (deepseek-ai/DeepSeek-V3 config.json; presets/models/deepseek-v3.json); seed 004's
// table of implementation details says "Expert Groups 16 (for gating)" and its gate text reshapes to 16 groups of
// 16 with top-4 groups. The model reads the config, so 8 groups: with the layout of tt-metal's
// moe_expert_mapping.py (experts fill a column before the next) one group is exactly one column.
moe::MeshRouting dsv3_galaxy(int groups, int topk_groups) {
    moe::MeshRouting r;
    r.experts = 256;
    r.top_k = 8;
    r.groups = groups;
    r.topk_groups = topk_groups;
    r.columns = 8;
    r.axis = {4, true};
    return r;
}

nlohmann::json dsv3_config() {
    for (const moe::CatalogEntry& m : moe::builtin_catalog().models())
        if (m.id == "deepseek-v3") return m.json;
    FAIL("no deepseek-v3 preset");
    return {};
}

// Seed 004's dispatch table, average row (us), E = 1..8 (../shared/seeds/004_03368243205b3c02.txt).
const double kSeed004Avg[8] = {55.258, 66.713, 78.169, 89.624, 101.079, 112.535, 123.990, 135.445};

}  // namespace

TEST_CASE("mesh routing: DeepSeek-V3 on the Galaxy, group-limited vs unconstrained, by hand") {
    // Routing law (stated in topology.h): groups chosen uniformly, experts uniformly (distinct) inside them; the real
    // gate is score-driven and balanced by the auxiliary-loss-free bias, so this is the balanced average, not a trace.
    const moe::MeshRouting grouped = dsv3_galaxy(8, 4), free = dsv3_galaxy(1, 1);
    // E's law. Group-limited: a token's column is one of its 4 chosen groups with probability C(7,3)/C(8,4) = 1/2;
    // then its 8 experts are 8 of the chosen 128, of which the column holds 32: Hypergeometric(128, 32, 8).
    //   P(E=0) = 1/2 + 1/2 C(96,8)/C(128,8) = 0.546374, P(E=e) = 1/2 C(32,e) C(96,8-e) / C(128,8) for e >= 1:
    //   0.133389, 0.160808, 0.106027, 0.041777 (e = 1..4).
    // Unconstrained: Hypergeometric(256, 32, 8): 0.338168, 0.398945, 0.198558, 0.054399 (e = 0..3); the model before
    // issue 30 used Binomial(8, 1/8): 0.343609, 0.392696, ... Both have E[E] = 8/8 = 1.
    const std::vector<double> pg = moe::mesh_column_experts_pmf(grouped), pf = moe::mesh_column_experts_pmf(free);
    REQUIRE(pg.size() == 9);
    REQUIRE(pf.size() == 9);
    CHECK(pg[0] == doctest::Approx(0.546374).epsilon(1e-5));
    const double hand_g[4] = {0.133389, 0.160808, 0.106027, 0.041777};
    for (int e = 1; e <= 4; ++e) CHECK(pg[size_t(e)] == doctest::Approx(hand_g[e - 1]).epsilon(1e-4));
    const double hand_f[4] = {0.338168, 0.398945, 0.198558, 0.054399};
    for (int e = 0; e <= 3; ++e) CHECK(pf[size_t(e)] == doctest::Approx(hand_f[e]).epsilon(1e-4));
    double mean_g = 0, mean_f = 0, sum_g = 0;
    for (int e = 0; e <= 8; ++e) {
        mean_g += e * pg[size_t(e)];
        mean_f += e * pf[size_t(e)];
        sum_g += pg[size_t(e)];
        CHECK(pg[size_t(e)] == doctest::Approx((e == 0 ? 0.5 : 0.0) + 0.5 * choose(32, e) * choose(96, 8 - e) / choose(128, 8)));
    }
    CHECK(sum_g == doctest::Approx(1.0));
    CHECK(mean_g == doctest::Approx(1.0));
    CHECK(mean_f == doctest::Approx(1.0));
    // Distinct chips a token reaches (of 32): group-limited 16 candidates (4 groups x 4 chips), 16 (1 - C(120,8) /
    // C(128,8)) = 16 x 0.412282 = 6.596513; unconstrained 32 (1 - C(248,8) / C(256,8)) = 7.266800 (Binomial
    // before: 32 (1 - (31/32)^8) = 7.177604).
    const moe::MeshExpectation xg = moe::mesh_expected_routed(grouped), xf = moe::mesh_expected_routed(free);
    CHECK(xg.token_chips == doctest::Approx(16 * (1 - choose(120, 8) / choose(128, 8))));
    CHECK(xg.token_chips == doctest::Approx(6.596513).epsilon(1e-6));
    CHECK(xf.token_chips == doctest::Approx(7.266800).epsilon(1e-6));
    // Dispatch link-hops on a ring of 4 from chip 0: the neighbours (offsets 1 and 3) are one hop each way, the far
    // chip (offset 2) costs 2 - (cw + ccw) / 2 more; with n1 = P(no expert on one given chip) and n2 = on two, the
    // expectation is 2 (1 - n1) + 2 (1 - n1) - (1 - 2 n1 + n2) = 3 - 2 n1 - n2.
    //   group-limited: n1 = 1/2 + 1/2 C(120,8)/C(128,8) = 0.793859, n2 = 1/2 + 1/2 C(112,8)/C(128,8) = 0.666290:
    //   0.745992 link-hops per token;
    //   unconstrained: n1 = C(248,8)/C(256,8) = 0.772913, n2 = C(240,8)/C(256,8) = 0.592295: 0.861880 (the
    //   Binomial before: 3 - 2 (31/32)^8 - (30/32)^8 = 0.851881).
    const double n1 = 0.5 + 0.5 * choose(120, 8) / choose(128, 8), n2 = 0.5 + 0.5 * choose(112, 8) / choose(128, 8);
    CHECK(xg.dispatch_hops == doctest::Approx(3 - 2 * n1 - n2));
    CHECK(xg.dispatch_hops == doctest::Approx(0.745992).epsilon(1e-6));
    CHECK(xf.dispatch_hops == doctest::Approx(0.861880).epsilon(1e-6));
    // Combine: one result per destination chip over its distance (0, 1, 2, 1 from chip 0): 4 (1 - n1) = 0.824564;
    // unconstrained 0.908350. Writes: E[E] = 1 either way.
    CHECK(xg.combine_hops == doctest::Approx(4 * (1 - n1)));
    CHECK(xf.combine_hops == doctest::Approx(0.908350).epsilon(1e-6));
    CHECK(xg.experts == doctest::Approx(1.0));
    // The step model on the Galaxy preset (DeepSeek-V3 decode, batch 32 per chip, bf16 dispatch): its dispatch is
    // mesh_latency_us + B s H / (neighbour x link_eff) + B s E / (hbm x write_eff) with B s = 32 x 7168 x 2 =
    // 458,752 bytes, neighbour 16 x 12.5 / 4 = 50 GB/s, the shipped 22.7 us / 0.346 / 0.411 (fitted on the seed's
    // table): 26.517 us a link-hop, 3.322 us a write, so 22.7 + 0.745992 x 26.517 + 1 x 3.322 = 45.80 us
    // group-limited, 22.7 + 0.861880 x 26.517 + 3.322 = 48.88 us unconstrained (48.61 us with the Binomial before).
    nlohmann::json s = {{"model", "deepseek-v3"}, {"hardware", "wormhole-galaxy"},
                        {"parallel", {{"tp", 8}, {"dp", 4}, {"ep", 32}}},
                        {"workload", {{"phase", "decode"}, {"batch", 32}}},
                        {"precision", {{"experts", "mxfp4"}, {"dispatch", "bf16"}}}};
    const moe::Estimate est_grouped = run(s.dump());  // (kept alive: find_op points into it)
    const moe::OpRecord* d = find_op(est_grouped, "comm.dispatch", Phase::decode);
    REQUIRE(d);
    CHECK(d->hops == doctest::Approx(0.745992).epsilon(1e-6));
    CHECK(d->time_us == doctest::Approx(45.80).epsilon(0.001));
    // the same model with its gate unconstrained (n_group 1): the dispatch goes back to 48.88 us
    nlohmann::json cfg = dsv3_config();
    cfg["n_group"] = 1;
    cfg["topk_group"] = 1;
    s["model"] = cfg;
    const moe::Estimate est_ungrouped = run(s.dump());
    const moe::OpRecord* d1 = find_op(est_ungrouped, "comm.dispatch", Phase::decode);
    REQUIRE(d1);
    CHECK(d1->hops == doctest::Approx(0.861880).epsilon(1e-6));
    CHECK(d1->time_us == doctest::Approx(48.88).epsilon(0.001));
    // Seed 004's own table read per token (a token with E experts in its column costs the average cell at E, none
    // at E = 0): sum_e P(E=e) x avg(e) = 0.133389 x 55.258 + 0.160808 x 66.713 + 0.106027 x 78.169 + 0.041777 x
    // 89.624 + ... = 31.33 us group-limited against 40.45 us unconstrained (-22.5%). The model's -6.3% is smaller:
    // its fixed 22.7 us (a kernel launch) is paid whatever E is; the table's cells include it at every E.
    double tg = 0, tf = 0;
    for (int e = 1; e <= 8; ++e) {
        tg += pg[size_t(e)] * kSeed004Avg[e - 1];
        tf += pf[size_t(e)] * kSeed004Avg[e - 1];
    }
    MESSAGE("seed 004 average row weighted by E's law: group-limited " << tg << " us, unconstrained " << tf << " us");
    CHECK(tg == doctest::Approx(31.33).epsilon(0.001));
    CHECK(tf == doctest::Approx(40.45).epsilon(0.001));
}

namespace {
// Brute force: every set of chosen groups, every set of top_k distinct experts inside them, every source chip
// (column c, row s): the dispatch walk, the combine, the experts and chips in the column, the chips on the mesh.
struct Brute {
    double dispatch = 0, combine = 0, experts = 0, chips = 0, token_chips = 0;
    std::vector<double> pmf;
};
Brute enumerate(const moe::MeshRouting& r) {
    const int N = r.experts, G = r.groups, per_group = N / G, n = r.axis.n, cols = r.columns, chips = n * cols;
    Brute b;
    b.pmf.assign(size_t(r.top_k) + 1, 0.0);
    double count = 0;
    std::vector<int> gs(size_t(r.topk_groups));
    for (size_t i = 0; i < gs.size(); ++i) gs[i] = int(i);
    for (;;) {  // group sets in lexicographic order
        std::vector<int> pool;
        for (int g : gs)
            for (int e = g * per_group; e < (g + 1) * per_group; ++e) pool.push_back(e);
        std::vector<int> pick(size_t(r.top_k));
        for (size_t i = 0; i < pick.size(); ++i) pick[i] = int(i);
        for (;;) {  // expert sets (indices into the pool)
            std::vector<int> chip_of;
            for (int i : pick) chip_of.push_back(pool[size_t(i)] * chips / N);
            std::vector<int> distinct(chip_of);
            std::sort(distinct.begin(), distinct.end());
            distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
            for (int c = 0; c < cols; ++c) {
                std::vector<int> rows;
                for (int q : chip_of)
                    if (q / n == c) rows.push_back(q % n);
                b.pmf[rows.size()] += 1.0 / cols;
                std::vector<int> uniq(rows);
                std::sort(uniq.begin(), uniq.end());
                uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
                for (int s = 0; s < n; ++s) {
                    b.dispatch += moe::mesh_dispatch_hops(r.axis, s, rows) / (n * cols);
                    b.combine += moe::mesh_combine_hops(r.axis, s, rows) / (n * cols);
                }
                b.experts += double(rows.size()) / cols;
                b.chips += double(uniq.size()) / cols;
            }
            b.token_chips += double(distinct.size());
            ++count;
            int i = r.top_k - 1;
            const int P = int(pool.size());
            while (i >= 0 && pick[size_t(i)] == P - r.top_k + i) --i;
            if (i < 0) break;
            ++pick[size_t(i)];
            for (int j = i + 1; j < r.top_k; ++j) pick[size_t(j)] = pick[size_t(j) - 1] + 1;
        }
        int i = r.topk_groups - 1;
        while (i >= 0 && gs[size_t(i)] == G - r.topk_groups + i) --i;
        if (i < 0) break;
        ++gs[size_t(i)];
        for (int j = i + 1; j < r.topk_groups; ++j) gs[size_t(j)] = gs[size_t(j) - 1] + 1;
    }
    b.dispatch /= count;
    b.combine /= count;
    b.experts /= count;
    b.chips /= count;
    b.token_chips /= count;
    for (double& p : b.pmf) p /= count;
    return b;
}
}  // namespace

TEST_CASE("mesh routing: the exact law against an enumeration of every choice of groups and experts") {
    struct Case {
        int experts, top_k, groups, topk_groups, columns, n;
        bool ring;
    };
    // groups aligned with columns, groups of two chips (seed 004's 16 groups in miniature), groups that straddle
    // two columns (12 experts, 3 groups of 4, 2 columns of 6), unconstrained, a line, an odd ring
    const Case cases[] = {{16, 3, 2, 1, 2, 4, true}, {16, 3, 4, 2, 2, 4, true}, {12, 3, 3, 2, 2, 3, true},
                          {16, 3, 1, 1, 2, 4, true}, {16, 4, 4, 2, 2, 4, false}, {20, 3, 5, 2, 1, 5, true},
                          {24, 4, 6, 3, 2, 6, true}};
    for (const Case& k : cases) {
        moe::MeshRouting r;
        r.experts = k.experts;
        r.top_k = k.top_k;
        r.groups = k.groups;
        r.topk_groups = k.topk_groups;
        r.columns = k.columns;
        r.axis = {k.n, k.ring};
        const Brute b = enumerate(r);
        const moe::MeshExpectation x = moe::mesh_expected_routed(r);
        const std::vector<double> pmf = moe::mesh_column_experts_pmf(r);
        INFO(k.experts << " experts, top-" << k.top_k << ", " << k.topk_groups << " of " << k.groups << " groups, "
                       << k.columns << " columns of " << k.n << (k.ring ? " (ring)" : " (line)"));
        CHECK(x.dispatch_hops == doctest::Approx(b.dispatch).epsilon(1e-9));
        CHECK(x.combine_hops == doctest::Approx(b.combine).epsilon(1e-9));
        CHECK(x.experts == doctest::Approx(b.experts).epsilon(1e-9));
        CHECK(x.chips == doctest::Approx(b.chips).epsilon(1e-9));
        CHECK(x.token_chips == doctest::Approx(b.token_chips).epsilon(1e-9));
        REQUIRE(pmf.size() == b.pmf.size());
        for (size_t e = 0; e < pmf.size(); ++e) CHECK(pmf[e] == doctest::Approx(b.pmf[e]).epsilon(1e-9));
    }
}

TEST_CASE("mesh routing: a gate whose groups cannot hold top-k experts is an error naming the field") {
    nlohmann::json cfg = dsv3_config();
    cfg["topk_group"] = 1;  // 1 group of 32 experts still holds 8
    CHECK(moe::parse_scenario(nlohmann::json{{"model", cfg}}.dump(), moe::builtin_catalog()).ok());
    cfg["n_group"] = 64;  // 1 group of 4 experts cannot
    moe::ParseResult r = moe::parse_scenario(nlohmann::json{{"model", cfg}}.dump(), moe::builtin_catalog());
    REQUIRE_FALSE(r.ok());
    CHECK(r.errors[0].path == "model.topk_group");
}
