// topology.h — communication on the topologies beyond one NVLink switch (DESIGN §10): a 2D mesh of chips joined
// by point-to-point links (Tenstorrent Galaxy, seed 004). Pure functions of counts, used by the step model
// (core/comm.cpp) and by tests that replay the seed's tables.
//
//   moe::MeshAxis axis{4, true};                                  // 4 chips in a ring
//   double hops = moe::mesh_dispatch_hops(axis, 0, {2});          // the token reaches the far side: 2 link-hops
//   moe::MeshExpectation x = moe::mesh_expected(axis, 2.0);       // 2 experts placed at random on the axis
//   double us = moe::mesh_a2a_us(gpu, cal, 32, 14336, x.dispatch_hops, 2.0);
//
// Dispatch (seed 004): a token goes once to every chip on the axis that holds one of its experts, passed from
// chip to chip; on a ring it travels both ways and, when the chip on the exact far side is a destination, each
// direction carries half of it for the last stretch. Its cost in link-hops is the walk of each direction.
// Combine: point-to-point, each destination chip reduces its experts' outputs locally and sends one result back
// along the shortest path.
#pragma once
#include <vector>

#include "core/data/calibration.h"
#include "core/scenario/gpu_spec.h"

namespace moe {

struct MeshAxis {
    int n = 1;          // chips along the axis
    bool ring = false;  // wraps around (else a line)
};

// Shortest distance in link-hops between positions a and b.
int mesh_distance(const MeshAxis& axis, int a, int b);
// Link-hops a token from `src` costs to reach every chip in `targets` (repeats allowed: several experts on one chip).
double mesh_dispatch_hops(const MeshAxis& axis, int src, const std::vector<int>& targets);
// Link-hops of the combine: one reduced result from each distinct target chip back to `src`.
double mesh_combine_hops(const MeshAxis& axis, int src, const std::vector<int>& targets);

// Expected costs of one token whose `experts` experts (may be fractional: an expected count) land uniformly at
// random on the axis' chips, averaged over the chip the token starts on.
struct MeshExpectation {
    double dispatch_hops = 0;  // link-hops of the dispatch walk
    double combine_hops = 0;   // link-hops of the combine messages
    double chips = 0;          // distinct destination chips (combine writes, after local reduction)
    double experts = 0;        // experts on the axis (dispatch writes: each expert's copy is written)
    double token_chips = 0;    // mesh_expected_routed only: distinct chips a token reaches over every column
};
MeshExpectation mesh_expected(const MeshAxis& axis, double experts);

// How a model's routed experts sit on the mesh and how a token picks them. Layout (seed 004's optimized MoE; the
// mapping of tenstorrent/tt-metal models/demos/deepseek_v3/tt/moe_expert_mapping.py, cluster axis 0): experts in
// order fill one column's chips top to bottom, then the next column, experts / (columns x n) per chip, so expert e
// sits on chip floor(e x chips / experts) of that order. Routing (DeepSeek's group-limited gate: HF config n_group,
// topk_group): a token picks `topk_groups` of the `groups` equal groups of consecutive experts, then `top_k`
// distinct experts among the chosen groups' experts. The real gate picks by score (balanced by the aux-free bias);
// taken here as uniform: every set of groups equally likely, every set of experts inside them equally likely.
// groups = 1 is unconstrained routing (k distinct experts of all).
struct MeshRouting {
    int experts = 1;      // routed experts
    int top_k = 1;        // experts per token
    int groups = 1;       // expert groups (n_group), dividing `experts`
    int topk_groups = 1;  // groups a token may use (topk_group)
    int columns = 1;      // columns the experts are split over, each one dispatch axis
    MeshAxis axis;        // the chips of one column
};
// Exact expected per-token costs on a token's own column, averaged over the columns and the chip (row) the token
// starts on; `token_chips` counts the distinct chips it reaches on the whole mesh.
MeshExpectation mesh_expected_routed(const MeshRouting& r);
// P(E = e), e = 0..top_k: how many of a token's experts live in its column (seed 004's "active experts within a
// column", its dispatch table's E), averaged over the columns.
std::vector<double> mesh_column_experts_pmf(const MeshRouting& r);

// Time of one all-to-all phase on a mesh axis, busiest chip: a fixed cost (launch and the handshake of the
// kernel), the token-hops over the link to one neighbour, and the tokens written into the destinations' memory.
// `tokens` per chip, `token_bytes` each; `hops` and `writes` per token.
double mesh_a2a_us(const GpuSpec& g, const Calibration& cal, double tokens, double token_bytes, double hops, double writes);

}  // namespace moe
