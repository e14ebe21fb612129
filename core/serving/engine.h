// engine.h — what a serving engine adds to the kernels: the system constants of SGLang, vLLM, TensorRT-LLM and an
// ideal engine (DESIGN §8.1). The step model (estimate()) prices kernels; the serving layer (serving.h) adds these.
//
//   const moe::EngineConstants k = moe::engine_constants(moe::active_engines(), scenario);  // as the scenario runs it
//   k.decode_overhead_per_layer_us, k.mixed_batches ...
//
// The fitted values live in presets/engines.json, each with the fit that produced it (moe-validate --fit-serving,
// on ../shared/reference/serving_public.csv with each model family left out in turn); the defaults below are the
// starting points of that fit and the values of the `ideal` engine's structure.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/scenario/scenario.h"
#include "core/base/types.h"

namespace moe {

struct EngineConstants {
    // Host and runtime time the kernels do not show.
    double request_overhead_ms = 0;       // per request, added to TTFT: HTTP, tokenisation, admission, first detokenise
    double request_overhead_per_ktoken_ms = 0;  // per 1000 prompt tokens, added to TTFT: tokenisation, input copy
    double request_overhead_per_client_ms = 0;  // per client in flight on the replica, added to TTFT: the one frontend
                                                // (HTTP, tokeniser, detokeniser, streaming) serves every stream
    // (the scheduler's poll for new requests is the scenario's: serving.scheduler_recv_interval, SGLang's
    // --scheduler-recv-interval, ServingConfig::recv_wait_steps)
    // Per step, in proportion to the model's layers (each layer's kernels are launches and gaps; scheduling and
    // sampling are spread over them): a 64-layer model's step carries 64 x these.
    double decode_overhead_per_layer_us = 0;   // per decode step under CUDA graphs: scheduling, sampling, launch gaps
    double prefill_overhead_per_layer_us = 0;  // per forward that carries prefill tokens (eager launches, metadata)
    // Host work per running request per decode step (batch metadata, sampling bookkeeping, output processing and
    // streaming). The engines overlap it with the GPU's step (SGLang's overlap scheduler, vLLM's async scheduling,
    // TRT-LLM's overlap scheduler), so a step takes the longer of the two: a small model at a large batch is
    // host-bound (docs/serving.md, "Serving").
    double decode_host_per_request_us = 0;
    // Scheduling.
    double wave_persistence = 0;          // share of a benchmark's rounds after the first in which the clients'
                                          // requests stay aligned (arrive together, wait for each other's prompts)
    // The scheduler builds and launches the next forward before it reads the last one's results (SGLang's
    // event_loop_overlap, TensorRT-LLM's overlap scheduler, both on by default): a request received while a decode
    // forward runs joins the forward after the one already launched, one decode step later than a synchronous loop
    // would take it (vLLM V1's default loop schedules, runs, then reads). The first token is not delayed: the
    // prefill's result is read while the next forward runs.
    bool overlap_schedule = false;
    // Whether the host's per-request work runs beside the GPU's step (decode_step_ms takes the longer) or after it
    // (the two add): true unless engine_constants() / as_run() turn it off for a scenario (SGLang with speculative
    // decoding). Not a fitted constant.
    bool host_overlap = true;
    bool mixed_batches = true;            // prefill chunks ride along with the decode batch (vLLM, TRT-LLM); false:
                                          // separate prefill forwards that pause decoding (SGLang's default)
    // Memory.
    bool kv_reserve_output = false;       // a request is admitted only with KV blocks for its whole prompt + output
                                          // (TRT-LLM's default GUARANTEED_NO_EVICT capacity scheduler); false: blocks
                                          // are taken as tokens are made, preempting when they run out (vLLM, SGLang)
    // (the page size and static memory fraction are the scenario's: runtime.kv_block_tokens / mem_fraction, each
    // engine's default from engine_kv_block_tokens / engine_mem_fraction in core/scenario/scenario.h)
    // Disaggregated: how the router hands a request to the two pools. true: the prefill request is answered before
    // the decode request is sent, so a request passes two servers' request paths one after the other (vLLM's P/D
    // proxies send the prompt with max_tokens 1 to the prefill server, then to the decode server:
    // benchmarks/disagg_benchmarks/disagg_prefill_proxy_server.py; trtllm-serve's disaggregated server sends the
    // context-only request, then the generation request; Dynamo's PrefillRouter waits for the prefill worker's
    // transfer metadata before it routes to decode: docs/design_docs/disagg_serving.md). false: SGLang's PD router
    // sends both at once with one bootstrap room, so the decode server's request path runs during the prefill.
    bool disagg_serial_requests = false;
    // Disaggregated KV transfer (NIXL / Mooncake / UCX over RDMA).
    double kv_transfer_eff = 0.8;         // fraction of the link bandwidth the transfer reaches
    double kv_transfer_latency_ms = 1.0;  // per request beyond the wire: handshake, descriptors, completion notice
                                          // (vLLM and TensorRT-LLM measured: engine.cpp, default_engines)
    // per KV block per attention layer (per K or V plane) a pull moves: a transfer that posts one descriptor per
    // paged block (vLLM's NIXL connector) pays each one's setup; 0 where blocks are coalesced into one buffer
    double kv_transfer_per_block_us = 0.0;
    // How far this engine's serving numbers typically are from measured runs (not used by the model): the median
    // |error| of TTFT and TPOT over the engine's rows of the serving set, each model family predicted by constants
    // fitted without it (moe-validate --serving; docs/validation.md). 0: not validated (the ideal engine).
    double ttft_typical_error = 0;
    double tpot_typical_error = 0;
    // The band around the model's numbers (issue 28, docs/serving.md, "Uncertainty"): the 10th and 90th percentiles
    // of log(measured / predicted) over held-out predictions of the engine's runs (moe-validate --serving: each model
    // family predicted by constants fitted without it; moe-roofline calibrate: k-fold). Throughput's is log(predicted
    // E2E / measured E2E): at a fixed number of clients throughput is clients x OSL / E2E (Little's law). All 0 (the
    // ideal engine, a file without them): no band.
    double ttft_log_error_p10 = 0, ttft_log_error_p90 = 0;
    double tpot_log_error_p10 = 0, tpot_log_error_p90 = 0;
    double throughput_log_error_p10 = 0, throughput_log_error_p90 = 0;
    bool has_band() const {
        return ttft_log_error_p10 != 0 || ttft_log_error_p90 != 0 || tpot_log_error_p10 != 0 || tpot_log_error_p90 != 0 ||
               throughput_log_error_p10 != 0 || throughput_log_error_p90 != 0;
    }
};

// One request's KV hand-over from the prefill to the decode worker (ms): its bytes over the link at
// kv_transfer_eff, a descriptor per paged block per attention layer and plane, and the engine's fixed latency.
// 0 without a link (aggregated).
inline double kv_transfer_ms(const EngineConstants& k, double bytes, double link_GBps, double descriptors) {
    if (!(link_GBps > 0)) return 0.0;
    return bytes / (link_GBps * 1e9 * k.kv_transfer_eff) * 1000.0 + descriptors * k.kv_transfer_per_block_us / 1000.0 +
           k.kv_transfer_latency_ms;
}

// The engine's per-step overheads for a model of `layers` layers (ms).
inline double decode_step_overhead_ms(const EngineConstants& k, int layers) { return k.decode_overhead_per_layer_us * layers / 1000.0; }
inline double prefill_step_overhead_ms(const EngineConstants& k, int layers) { return k.prefill_overhead_per_layer_us * layers / 1000.0; }
// Decode steps a request that reaches the scheduler while other requests decode waits beyond the step boundary: the
// scheduler's poll (serving.scheduler_recv_interval, ServingConfig::recv_wait_steps) and, with an overlap schedule,
// the forward already launched (docs/serving.md, "Serving"). An idle scheduler takes a request at once.
inline double scheduler_wait_steps(const Scenario& s, const EngineConstants& k) {
    return s.serving.recv_wait_steps(s.runtime.engine) + (k.overlap_schedule ? 1.0 : 0.0);
}
// A decode step of `running` requests per scheduler whose GPU side takes `gpu_ms` (kernels and per-step overhead):
// the host's per-request work overlaps it, the longer sets the step; without the overlap (host_overlap false) the
// two add.
inline double decode_step_ms(const EngineConstants& k, double gpu_ms, double running) {
    const double host_ms = k.decode_host_per_request_us * running / 1000.0;
    if (!k.host_overlap) return gpu_ms + host_ms;
    return gpu_ms > host_ms ? gpu_ms : host_ms;
}

// The engine constants a fit may move, each a physical quantity with its unit and range (docs/serving.md, "Serving",
// gives each range its source). parse_engines() refuses a value outside its range; moe-validate --fit-serving
// searches inside it. Kernel time has no factor here: a kernel error is the kernel layer's to fix.
struct EngineConstantInfo {
    const char* name;
    double EngineConstants::*field;
    double lo, hi;
    const char* unit;
    const char* meaning;
};
const std::vector<EngineConstantInfo>& fitted_engine_constants();

// One set of constants per engine, shared by every GPU (issue 25: no per-GPU refinement).
struct EngineSet {
    EngineConstants engines[4];  // indexed by EngineKind
    const EngineConstants& get(EngineKind k) const { return engines[int(k)]; }
    EngineConstants& get(EngineKind k) { return engines[int(k)]; }
};

// The scenario's engine as it runs the scenario: its constants, with what the scenario's own settings switch off.
// SGLang turns its overlap scheduler off under EAGLE / MTP / n-gram drafts (server_args.py
// _handle_speculative_decoding: "Overlap scheduler is disabled because of using eagle speculative decoding", unless
// the opt-in SGLANG_ENABLE_SPEC_V2), so a request's first token waits no launched forward and the host's
// per-request work adds to each step instead of running beside it.
EngineConstants engine_constants(const EngineSet& set, const Scenario& s);
// The same view of given constants `k` (a fit's trial values): what engine_constants() applies to the set's.
EngineConstants as_run(EngineConstants k, const Scenario& s);

// The starting constants (no file): documented engine defaults, zero overheads.
EngineSet default_engines();
// {"sglang": {"decode_overhead_per_layer_us": {"value": 30, "source": "..."}, ...}, ...}. Unknown keys, values out
// of their range and the per-GPU "gpus" blocks of earlier files are errors.
bool parse_engines(const nlohmann::json& j, EngineSet& out, Issues& errors);
nlohmann::json engines_to_json(const EngineSet& set);
// presets/engines.json as compiled in (defaults if the file is absent).
const EngineSet& builtin_engines();
// The engines evaluate(s, t), the planner and the page use when handed no set: builtin_engines(), or a calibration
// a front end loaded (the CLI's --engines FILE, the page's "Load calibration", the Python module's engines=).
// use_engines(nullptr) goes back to the shipped ones. The choice is the calling thread's (thread_local): Python
// threads calling evaluate() with different engines= at once each get their own. A front end that spreads one
// evaluation over threads hands its workers the caller's set: use_engines(engines_in_use()) at each worker's start
// (the CLI's parallel_chunks and sweep do). Set before an evaluation starts, never while one runs on this thread.
const EngineSet& active_engines();
void use_engines(const EngineSet* set);
// This thread's calibration, nullptr when it uses the shipped constants.
const EngineSet* engines_in_use();
// A calibration file (presets/engines.json's format) over the shipped constants: what it names replaces them,
// the rest stays. Errors name "engines.ENGINE.KEY".
bool engines_from_text(const std::string& text, EngineSet& out, Issues& errors);

}  // namespace moe
