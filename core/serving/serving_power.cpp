// serving_power.cpp — power and energy per token of a deployment under load (issue 28; docs/model.md, "Power and
// energy"). The step model prices the energy of one prompt token and of one output token (power.h); the serving
// model says how many of each one GPU serves per second; idle power fills the rest of the time.
#include <algorithm>
#include <cmath>

#include "core/serving/serving.h"
#include "core/step/power.h"

namespace moe {

namespace {
// Energy above idle per token of a computed phase (J): its dynamic power over its tokens per GPU-second.
double dynamic_joules_per_token(const PhaseResult& p, double idle_w) {
    return p.computed && p.power_w_per_gpu > 0 && p.tokens_per_s_per_gpu > 0 ? (p.power_w_per_gpu - idle_w) / p.tokens_per_s_per_gpu
                                                                             : -1.0;
}
}  // namespace

void serving_energy(const Scenario& s, const Tables& t, Estimate& e) {
    const double board = board_power_w(s.gpu), idle = idle_power_w(s.gpu);
    ServingResult& r = e.serving;
    if (!(board > 0) || !r.computed || !(r.output_tokens_per_s_per_gpu > 0)) return;
    const double isl = s.serving.mean_isl(), osl = s.serving.mean_osl();
    const int running = std::max(1, int(std::lround(std::min(1e6, r.running_batch))));
    double j_prompt = -1, j_output = -1;  // dynamic J per served prompt token / per output token
    if (s.serving.mode == ServingMode::disaggregated) {
        const PoolConfig& pp = s.serving.prefill;
        Scenario x = serving_step_scenario(s, pp.parallel);
        x.workload.phase = PhaseSel::prefill;
        const double computed = std::max(1.0, isl - prefix_cached_tokens(isl, s.workload.prefix_cache_hit));
        x.workload.prefill_tokens = int(std::min(1e7, double(pp.batch) * computed));
        x.workload.batch = 1;
        const Estimate a = estimate(x, t);
        if (a.ok) j_prompt = dynamic_joules_per_token(a.prefill, idle);
        Scenario y = serving_step_scenario(s, s.serving.decode.parallel);
        y.workload.phase = PhaseSel::decode;
        y.workload.batch = running;
        const Estimate b = estimate(y, t);
        if (b.ok) j_output = dynamic_joules_per_token(b.decode, idle);
    } else {
        Scenario x = serving_step_scenario(s, s.parallel);
        x.workload.phase = PhaseSel::both;
        x.workload.batch = running;
        const Estimate a = estimate(x, t);
        if (a.ok) {
            j_prompt = dynamic_joules_per_token(a.prefill, idle);
            j_output = dynamic_joules_per_token(a.decode, idle);
        }
    }
    if (j_prompt < 0 || j_output < 0) return;
    const double out_rate = r.output_tokens_per_s_per_gpu, prompt_rate = out_rate * isl / osl;
    r.power_w_per_gpu = idle + std::min(board - idle, out_rate * j_output + prompt_rate * j_prompt);
    r.joules_per_token = r.power_w_per_gpu / out_rate;
    r.joules_per_token_total = r.power_w_per_gpu / (out_rate * (isl + osl) / osl);
}

}  // namespace moe
