// plan_fit.cpp — the smallest GPU count a scenario fits on (issue 26), for the page's "use N GPUs" and its
// disaggregated pools' "fit to N GPUs".
#include <algorithm>
#include <string>

#include "core/plan/plan.h"
#include "core/serving/serving.h"

namespace moe {

namespace {

// Does the scenario fit? Serving off: the step model's memory; on: the deployment's verdict (one verdict per
// screen: the page shows this one).
bool fits(const Scenario& s, const Tables& tables) {
    const Estimate e = evaluate(s, tables);
    if (!e.ok) return false;
    return s.serving.mode == ServingMode::off ? e.memory.fits : e.serving.computed && e.serving.fits;
}

// Layouts of `world` GPUs to try, widest attention TP first (one copy of the KV heads per GPU wastes the least
// memory when it divides them), then attention DP for the rest; experts spread over every GPU where they divide.
std::vector<ParallelConfig> layouts_of(const Scenario& s, int world) {
    std::vector<ParallelConfig> out;
    const bool moe_model = s.model.num_experts > 1;
    for (int tp = world; tp >= 1; tp /= 2) {
        if (world % tp != 0) continue;
        ParallelConfig p = s.parallel;
        p.tp = tp;
        p.dp = world / tp;
        p.pp = 1;
        p.cp = 1;
        p.ep = moe_model && s.model.num_experts % world == 0 ? world : 1;
        out.push_back(p);  // (experts that do not divide the world: ep 1, each expert TP'd over every GPU)
    }
    return out;
}

}  // namespace

FitLayout smallest_fitting_layout(const Scenario& s, const Tables& tables, int max_gpus) {
    FitLayout r;
    Scenario x = s;
    for (int world = 1; world <= max_gpus; world *= 2) {
        for (const ParallelConfig& p : layouts_of(s, world)) {
            x.parallel = p;
            if (!fits(x, tables)) continue;
            r.ok = true;
            r.gpus = world;
            r.parallel = p;
            return r;
        }
    }
    return r;
}

bool fit_pools(Scenario& s, int gpus, const Tables& tables, std::string& why) {
    if (gpus < 2) {
        why = "two pools need at least 2 GPUs";
        return false;
    }
    // The worker: the decode pool's layout when two or more of it fill the budget, else the smallest layout the
    // model fits on at the pool's decode batch and the request lengths.
    ParallelConfig worker = s.serving.decode.parallel;
    const int current = worker.tp * worker.dp * worker.pp;
    if (current < 1 || gpus % current != 0 || gpus / current < 2) {
        Scenario step = s;
        step.serving.mode = ServingMode::off;
        step.workload.batch = std::max(1, s.serving.decode.batch);
        step.workload.prompt_len = std::max(1, s.serving.isl);
        step.workload.output_len = std::max(1, s.serving.osl);
        step.workload.context_len = 0;
        const FitLayout f = smallest_fitting_layout(step, tables, gpus / 2);
        if (!f.ok || gpus % f.gpus != 0) {
            why = f.ok ? std::to_string(gpus) + " GPUs are not a multiple of the smallest worker that holds the model (" +
                             std::to_string(f.gpus) + " GPUs)"
                       : std::to_string(gpus) + " GPUs cannot hold two workers of this model (a prefill and a decode one)";
            return false;
        }
        worker = f.parallel;
    }
    const int world = worker.tp * worker.dp * worker.pp;
    const int workers = gpus / world;
    // Every prefill:decode split of the workers, each evaluated: the first that fits, meets the serving TTFT default
    // and gives the most output tokens/s per GPU; failing the TTFT, the shortest TTFT that fits.
    Scenario x = s;
    x.serving.mode = ServingMode::disaggregated;
    x.serving.prefill.parallel = worker;
    x.serving.prefill.parallel.pp = 1;
    x.serving.decode.parallel = worker;
    int best = 0;
    double best_key = -1;
    bool best_in_time = false;
    for (int p = 1; p < workers; ++p) {
        x.serving.prefill.workers = p;
        x.serving.decode.workers = workers - p;
        // each split planned for the clients that fill its decode slots (the batch per rank stays)
        x.serving.concurrency = int(std::min(1e7, x.serving.decode_slots()));
        const Estimate e = evaluate(x, tables);
        if (!e.ok || !e.serving.computed || !e.serving.fits) continue;
        const bool in_time = e.serving.ttft_ms <= kDefaultServingTtftMs;
        const double key = in_time ? e.serving.output_tokens_per_s_per_gpu : 1.0 / std::max(1e-9, e.serving.ttft_ms);
        if ((in_time && !best_in_time) || (in_time == best_in_time && key > best_key)) {
            best = p;
            best_key = key;
            best_in_time = in_time;
        }
    }
    if (best == 0) {
        why = "no split of " + std::to_string(workers) + " workers of " + std::to_string(world) + " GPUs fits the decode pool's KV cache";
        return false;
    }
    x.serving.prefill.workers = best;
    x.serving.decode.workers = workers - best;
    x.serving.concurrency = int(std::min(1e7, x.serving.decode_slots()));
    s.serving = x.serving;
    return true;
}

}  // namespace moe
