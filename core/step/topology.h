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
};
MeshExpectation mesh_expected(const MeshAxis& axis, double experts);

// Time of one all-to-all phase on a mesh axis, busiest chip: a fixed cost (launch and the handshake of the
// kernel), the token-hops over the link to one neighbour, and the tokens written into the destinations' memory.
// `tokens` per chip, `token_bytes` each; `hops` and `writes` per token.
double mesh_a2a_us(const GpuSpec& g, const Calibration& cal, double tokens, double token_bytes, double hops, double writes);

}  // namespace moe
