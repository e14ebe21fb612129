// power.cpp — board power of a step (power.h; docs/model.md, "Power and energy").
#include "core/step/power.h"

#include <algorithm>

namespace moe {

const PowerConstants& power_constants() {
    static const PowerConstants k;
    return k;
}

double board_power_w(const GpuSpec& g) { return g.board_power_w > 0 ? g.board_power_w : 0.0; }

double idle_power_w(const GpuSpec& g) {
    if (!(g.board_power_w > 0)) return 0;
    return g.idle_power_w > 0 ? g.idle_power_w : g.board_power_w * power_constants().idle_fraction_of_board;
}

namespace {
// Bandwidth (bytes/s) of the link a communication record moved its bytes over, or 0 when it is off the board
// (RDMA: the NIC is its own card) or unknown.
double link_Bps(const GpuSpec& g, Engine e) {
    switch (e) {
        case Engine::nvlink: return g.nvlink_bandwidth_GBps * 1e9;
        case Engine::mesh: return double(g.links_per_chip) * g.link_bandwidth_GBps * 1e9;
        case Engine::host: return g.host_bandwidth_GBps * 1e9;
        default: return 0;
    }
}
bool is_link(Engine e) { return e == Engine::nvlink || e == Engine::rdma || e == Engine::mesh || e == Engine::host; }
}  // namespace

StepPower step_power(const GpuSpec& g, const std::vector<OpRecord>& ops, Phase phase, double step_ms) {
    StepPower p;
    const double step_s = step_ms / 1000.0;
    if (!(step_s > 0)) return p;
    const PowerConstants& k = power_constants();
    double tensor_s = 0, hbm_bytes = 0, link_s = 0, link_bytes = 0;
    const double hbm_Bps = g.hbm_bandwidth_GBps * 1e9;
    for (const OpRecord& o : ops) {
        if (o.phase != phase) continue;
        if (is_link(o.engine)) {
            const double bw = link_Bps(g, o.engine);
            if (bw > 0) {
                link_s += o.count * o.comm_bytes / bw;
                link_bytes += o.count * o.comm_bytes;
            }
            continue;
        }
        const double peak = g.peak_tflops(o.compute_dtype) * 1e12;
        if (peak > 0) tensor_s += o.count * o.flops / peak;
        hbm_bytes += o.count * (o.weight_bytes + o.activation_bytes);
    }
    p.tensor_utilisation = tensor_s / step_s;
    p.hbm_utilisation = hbm_Bps > 0 ? hbm_bytes / hbm_Bps / step_s : 0;
    p.link_utilisation = link_s / step_s;
    const double board = board_power_w(g);
    if (!(board > 0)) return p;
    const double idle = idle_power_w(g), range = board - idle;
    const double tensor_w = range * p.tensor_utilisation / k.tensor_fraction_at_board_power;
    const double hbm_w = k.hbm_joules_per_byte * hbm_bytes / step_s;
    const double link_w = k.link_joules_per_byte * link_bytes / step_s;
    p.dynamic_w = std::min(range, tensor_w + hbm_w + link_w);
    p.power_w = idle + p.dynamic_w;
    return p;
}

void apply_step_power(const GpuSpec& g, const std::vector<OpRecord>& ops, Phase phase, PhaseResult& out) {
    if (!out.computed) return;
    const StepPower p = step_power(g, ops, phase, out.step_ms);
    out.tensor_utilisation = p.tensor_utilisation;
    out.hbm_utilisation = p.hbm_utilisation;
    out.link_utilisation = p.link_utilisation;
    out.power_w_per_gpu = p.power_w;
    out.joules_per_token = p.power_w > 0 && out.tokens_per_s_per_gpu > 0 ? p.power_w / out.tokens_per_s_per_gpu : 0;
}

}  // namespace moe
