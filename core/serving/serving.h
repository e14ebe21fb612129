// serving.h — the serving layer (DESIGN §8): TTFT, TPOT and tokens/s of a deployment under load, on top of the step
// model. It calls estimate() for the steps it needs and never the reverse.
//
// Room: core/serving/ — a deployment under load: the engines' constants (engine.h) and the serving model that
// turns step times into TTFT, TPOT and tokens/s. May include base, scenario, data and step; never plan.
//
//   moe::Estimate e = moe::evaluate(scenario, moe::builtin_tables());   // estimate() + serving when mode != off
//   e.serving.ttft_ms, e.serving.tpot_ms, e.serving.output_tokens_per_s_per_gpu
//
// Two layers, so that a fit can change the engine constants without re-running the kernels:
//   serving_steps()  the step-model evaluations one deployment needs (kernel time only, no engine overhead)
//   serving_model()  closed-loop clients, continuous batching / disaggregated pools, with one engine's constants
// docs/serving.md ("Serving") derives every formula.
#pragma once
#include "core/serving/engine.h"
#include "core/step/estimate.h"

namespace moe {

// Kernel times of one deployment's steps (ms, per attention-DP rank, engine overheads excluded).
struct ServingSteps {
    bool ok = false;
    Issues errors;
    std::vector<std::string> warnings;
    // aggregated (or one pool): the running batch and its steps
    double batch = 0;               // requests per attention-DP rank (concurrency / dp, or the decode pool's batch)
    double max_batch = 0;           // largest batch that fits at the average context (memory model)
    bool weights_fit = false;       // the weights and fixed buffers fit at all
    double chunk_tokens = 0;        // token budget of a forward
    double decode_ms = 0;           // decode step at `batch` (at the average context isl + osl/2)
    double decode1_ms = 0;          // decode step at batch 1 (the slope of a smaller running batch)
    double tokens_per_step = 1;     // tokens a decode step gives each request (speculative decoding: its verify's)
    double mixed_extra_ms = 0;      // mixed engines: what a full prefill chunk adds to a decode step
    double mixed_tokens = 0;        // prefill tokens in that chunk (budget minus the decode tokens)
    double prefill_ms = 0;          // separate engines: one prefill forward of `prefill_tokens`
    double prefill_tokens = 0;
    double prefill_single_ms = 0;   // one request's prompt alone (ceil(isl / chunk) forwards, summed)
    double mixed_single_extra_ms = 0;  // mixed: what one request's prompt adds to the decode steps it rides on
    // disaggregated
    double kv_bytes_per_request = 0;
    double kv_link_GBps = 0;        // aggregate bandwidth between a prefill and a decode worker
    double kv_blocks_per_request = 0;  // paged blocks x attention layers x planes one decode rank pulls (mean prompt)
    int dp = 1, gpus = 1;           // attention-DP ranks per replica / worker, GPUs of the deployment
    int prefill_dp = 1, prefill_gpus_per_worker = 1, decode_gpus_per_worker = 1;
    bool prefill_fits = true;       // a prefill worker holds its forward in memory
};


// The steps of an aggregated deployment that its concurrency does not change: the decode step at batch 1 and, with
// separate prefill forwards (not mixed batches), one prompt's prefill alone. A caller that evaluates scenarios
// differing only in serving.concurrency and workload.batch (the planner: batch innermost) passes one memo to
// serving_steps() / evaluate() and resets it (memo = {}) whenever anything else changes; the numbers are those
// computed without it.
struct ServingStepMemo {
    struct Part {
        bool have = false, ok = false;
        Issues errors;
        double step_ms = 0, attention_ms = 0;
    };
    Part single;   // one prompt's prefill alone (separate prefill forwards only)
    Part decode1;  // the decode step at batch 1
};

// The scenario the serving layer hands to estimate() for a step of layout p: kernel time only (the engine's overheads
// are the serving layer's), the mean request of the serving fields as the workload.
Scenario serving_step_scenario(const Scenario& s, const ParallelConfig& p);

// `k` decides the steps' shape (mixed batches or separate prefill forwards); its other constants are not used here.
ServingSteps serving_steps(const Scenario& s, const Tables& t, const EngineConstants& k, ServingStepMemo* memo = nullptr);
ServingResult serving_model(const Scenario& s, const ServingSteps& st, const EngineConstants& k);

// serving_steps() of a disaggregated scenario is these three, in this order: the prefill pool's fields, the decode
// pool's (with the KV bytes of a request), then the link and the GPU count. False with st.errors.
bool serving_prefill_pool(const Scenario& s, const Tables& t, ServingSteps& st);
bool serving_decode_pool(const Scenario& s, const Tables& t, ServingSteps& st);
void serving_link(const Scenario& s, ServingSteps& st);
// A disaggregated prefill worker's forward (ms): serving_prefill_pool()'s kernel time x the engine's prefill kernel
// scale on this GPU, plus the per-forward overhead (runtime.prefill_overhead_ms when set, else the engine's).
double prefill_forward_ms(const Scenario& s, const ServingSteps& st, const EngineConstants& k);
// The KV blocks one decode rank pulls for a prompt of isl tokens: ceil(isl / block) per attention layer of its
// pipeline stage, twice where
// keys and values are separate tensors (MLA keeps one latent per token, plus a DSA model's indexer keys). (The
// scenario's page size: Scenario::kv_block_tokens.)
double kv_blocks_per_request(const Scenario& s, double isl);
// The GPUs a request's KV moves over in parallel between the pools: its attention group's (a request lives on one
// DP rank), per pipeline stage the distinct KV shards, min(prefill TP, decode TP, KV heads): ranks past the KV heads,
// and MLA's every TP rank (the latent is whole on each), hold copies.
int kv_lanes(const Scenario& s);
// The pipeline stages a request's KV moves between (min of the pools' pp): each stage's ranks move their own layers'.
int kv_stages(const Scenario& s);
// The link a request's KV moves over between a prefill and a decode worker (GB/s): kv_lanes() links, NVLink when
// both workers fit in one NVLink domain, else RDMA (serving_link and the simulation's surface both use it).
double kv_link_GBps(const Scenario& s, int prefill_gpus_per_worker, int decode_gpus_per_worker);

// How evaluate() computes serving numbers: the discrete-event simulation of the benchmark (simulate.h, what every
// number shown comes from) or the closed form above (serving_model(): the planner's screening pass, about 100 x
// faster; the planner re-ranks its front by the simulation).
enum class ServingMethod { simulation, closed_form };
// Power and energy under load (issue 28, serving_power.cpp): e.serving.power_w_per_gpu, joules_per_token and
// joules_per_token_total from e.serving's rates and the energy per token of a prefill forward and of a decode step
// at the running batch. Nothing without the GPU's board power or when e.serving is not computed.
void serving_energy(const Scenario& s, const Tables& t, Estimate& e);
// The band of r's TTFT, TPOT and throughput from k's held-out quantiles (r.has_band false when k has none).
void serving_band(const EngineConstants& k, ServingResult& r);

// estimate() of the scenario, plus e.serving when serving.mode is not off (errors of the serving layer come back
// in e.errors like any other). Without a set: active_engines() (the shipped ones unless a calibration was loaded).
Estimate evaluate(const Scenario& s, const Tables& t);
Estimate evaluate(const Scenario& s, const Tables& t, const EngineSet& engines, ServingStepMemo* memo = nullptr);
// evaluate() into `out` (estimate_into(): `out` reset, its vectors' capacity kept; warnings = false builds none).
void evaluate_into(const Scenario& s, const Tables& t, Estimate& out, bool warnings = true);
// energy = false leaves e.serving's power and J/token at 0 (serving_energy() runs one or two more estimates: the
// planner, which ranks by throughput or cost, asks for it on its front rows only).
void evaluate_into(const Scenario& s, const Tables& t, const EngineSet& engines, ServingStepMemo* memo, Estimate& out,
                   bool warnings = true, bool energy = true, ServingMethod method = ServingMethod::simulation);

}  // namespace moe
