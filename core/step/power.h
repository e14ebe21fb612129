// power.h — board power and energy of a step, from what its operators keep busy (issue 28; docs/model.md, "Power
// and energy"). An energy roofline: idle power for the whole step, plus an energy per unit of work on each engine.
//
//   moe::StepPower p = moe::step_power(scenario.gpu, estimate.ops, moe::Phase::decode, estimate.decode.step_ms);
//   p.power_w  // average board power of one GPU over the step
//
// Every function here is pure; a GPU without `board_power_w` gives power 0 (the outputs stay empty).
#pragma once
#include <vector>

#include "core/step/estimate.h"

namespace moe {

// The constants of the power model, each with its source in docs/model.md ("Power and energy").
struct PowerConstants {
    // Tensor-core throughput, as a fraction of the datasheet peak, at which a GPU runs at its board power limit:
    // DeepGEMM's best FP8 GEMM on H800, 1,550 of 1,979 TFLOPS (deepseek-ai/DeepGEMM README), is power-limited.
    double tensor_fraction_at_board_power = 1550.0 / 1979.0;
    // Energy per byte moved between HBM and the SMs: HBM2 access and I/O ~3.9 pJ/bit (O'Connor et al., MICRO 2017,
    // "Fine-Grained DRAM"), doubled for the L2 and crossbar on the way to the SMs (an assumption, 5-10 pJ/bit).
    double hbm_joules_per_byte = 8.0 * 8e-12;
    // Energy per byte sent over NVLink / mesh links / PCIe from the board: SerDes ~5 pJ/bit (an assumption; NVIDIA
    // quotes 1.3 pJ/bit for the short-reach NVLink-C2C). The RDMA NIC is a separate card: not on the GPU's board.
    double link_joules_per_byte = 5.0 * 8e-12;
    // Idle power as a share of board power when a preset gives none (Hopper SXM: 100 of 700 W).
    double idle_fraction_of_board = 1.0 / 7.0;
};
const PowerConstants& power_constants();

// The GPU's board and idle power (idle_power_w, else board x idle_fraction_of_board); 0 and 0 without board power.
double board_power_w(const GpuSpec& g);
double idle_power_w(const GpuSpec& g);

struct StepPower {
    double tensor_utilisation = 0, hbm_utilisation = 0, link_utilisation = 0;
    double dynamic_w = 0;  // above idle, capped at board - idle
    double power_w = 0;    // idle + dynamic (0 without board power)
};

// The records of `phase` in `ops` (per GPU, each `count` times per step) over a step of `step_ms`.
StepPower step_power(const GpuSpec& g, const std::vector<OpRecord>& ops, Phase phase, double step_ms);

// Fills the phase's utilisation, power and J/token fields of a computed phase (estimate() calls it).
void apply_step_power(const GpuSpec& g, const std::vector<OpRecord>& ops, Phase phase, PhaseResult& out);

}  // namespace moe
