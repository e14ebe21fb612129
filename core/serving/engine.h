// engine.h — what a serving engine adds to the kernels: the system constants of SGLang, vLLM, TensorRT-LLM and an
// ideal engine (DESIGN §8.1). The step model (estimate()) prices kernels; the serving layer (serving.h) adds these.
//
//   const moe::EngineConstants& k = moe::builtin_engines().get(moe::EngineKind::vllm);
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
    // Decode steps a new request waits before the scheduler takes it in, added to TTFT: an engine that polls for new
    // requests only every N forwards (SGLang's --scheduler-recv-interval, which serving recipes raise to 10-30 under
    // load) leaves an arriving request N/2 steps of the running batch on average.
    double request_wait_decode_steps = 0;
    // Per step, in proportion to the model's layers (each layer's kernels are launches and gaps; scheduling and
    // sampling are spread over them): a 64-layer model's step carries 64 x these.
    double decode_overhead_per_layer_us = 0;   // per decode step under CUDA graphs: scheduling, sampling, launch gaps
    double prefill_overhead_per_layer_us = 0;  // per forward that carries prefill tokens (eager launches, metadata)
    // Host work per running request per decode step (batch metadata, sampling bookkeeping, output processing and
    // streaming). The engines overlap it with the GPU's step (SGLang's overlap scheduler, vLLM's async scheduling,
    // TRT-LLM's overlap scheduler), so a step takes the longer of the two: a small model at a large batch is
    // host-bound (docs/model.md, "Serving").
    double decode_host_per_request_us = 0;
    // Kernel-level factors relative to the measured tables (engine kernels differ from the microbenchmarks').
    double decode_kernel_scale = 1.0;     // decode step kernel time x this
    double prefill_kernel_scale = 1.0;    // prefill kernel time x this
    // The same two on Blackwell GPUs. The kernel tables are SGLang's kernels (AIConfigurator's SGLang collection);
    // on Blackwell the engines' GEMM kernels differ more (SGLang DeepGEMM, TRT-LLM and vLLM CUTLASS/FlashInfer:
    // a 16 x 16384 x 16384 FP8 GEMM takes 66 us in the B200 table, 70 us in the H200 one, on 1.7x the bandwidth).
    double decode_kernel_scale_blackwell = 1.0;
    double prefill_kernel_scale_blackwell = 1.0;
    // Scheduling.
    double wave_persistence = 0;          // share of a benchmark's rounds after the first in which the clients'
                                          // requests stay aligned (arrive together, wait for each other's prompts)
    bool mixed_batches = true;            // prefill chunks ride along with the decode batch (vLLM, TRT-LLM); false:
                                          // separate prefill forwards that pause decoding (SGLang's default)
    // Memory.
    bool kv_reserve_output = false;       // a request is admitted only with KV blocks for its whole prompt + output
                                          // (TRT-LLM's default GUARANTEED_NO_EVICT capacity scheduler); false: blocks
                                          // are taken as tokens are made, preempting when they run out (vLLM, SGLang)
    double mem_fraction = 0.9;            // default static memory fraction
    int kv_block_tokens = 16;             // paged-KV block (SGLang 1, vLLM 16, TRT-LLM 32)
    // Disaggregated KV transfer (NIXL / Mooncake / UCX over RDMA).
    double kv_transfer_eff = 0.8;         // fraction of the link bandwidth the transfer reaches
    double kv_transfer_latency_ms = 1.0;  // per request: handshake and completion notification
    // How far this engine's serving numbers typically are from measured runs (not used by the model): the median
    // |error| of TTFT and TPOT over the engine's rows of the serving set, each model family predicted by constants
    // fitted without it (moe-validate --serving; docs/validation.md). 0: not validated (the ideal engine).
    double ttft_typical_error = 0;
    double tpot_typical_error = 0;
};

// The engine's per-step overheads for a model of `layers` layers (ms).
inline double decode_step_overhead_ms(const EngineConstants& k, int layers) { return k.decode_overhead_per_layer_us * layers / 1000.0; }
inline double prefill_step_overhead_ms(const EngineConstants& k, int layers) { return k.prefill_overhead_per_layer_us * layers / 1000.0; }
// A decode step of `running` requests per scheduler whose GPU side takes `gpu_ms` (kernels and per-step overhead):
// the host's per-request work overlaps it, the longer sets the step.
inline double decode_step_ms(const EngineConstants& k, double gpu_ms, double running) {
    const double host_ms = k.decode_host_per_request_us * running / 1000.0;
    return gpu_ms > host_ms ? gpu_ms : host_ms;
}

// The kernel scales that apply on a GPU of this architecture.
inline double decode_kernel_scale(const EngineConstants& k, const std::string& arch) {
    return arch == "blackwell" ? k.decode_kernel_scale_blackwell : k.decode_kernel_scale;
}
inline double prefill_kernel_scale(const EngineConstants& k, const std::string& arch) {
    return arch == "blackwell" ? k.prefill_kernel_scale_blackwell : k.prefill_kernel_scale;
}

// An engine's constants on one GPU platform (a hardware preset id). Serving benchmarks of one engine differ by
// platform beyond what the kernel tables and the roofline carry: the node's host CPU runs the engine's scheduler,
// tokeniser and streaming (Grace, Sapphire / Emerald Rapids), and the engine's kernels and defaults differ by GPU
// generation. Where the serving set has enough runs of an engine on a GPU, the fit refines the engine's constants
// there (docs/model.md, "Serving"); every other GPU uses the engine's own.
struct GpuEngineConstants {
    std::string gpu;  // hardware preset id ("b200", "h100-sxm")
    EngineConstants constants;
};

struct EngineSet {
    EngineConstants engines[4];              // indexed by EngineKind
    std::vector<GpuEngineConstants> gpus[4];  // per-GPU refinements, indexed by EngineKind
    const EngineConstants& get(EngineKind k) const { return engines[int(k)]; }
    EngineConstants& get(EngineKind k) { return engines[int(k)]; }
    // The constants of engine k on the GPU with preset id `gpu`: its refinement if there is one, else the engine's.
    const EngineConstants& get(EngineKind k, const std::string& gpu) const {
        for (const GpuEngineConstants& g : gpus[int(k)])
            if (g.gpu == gpu) return g.constants;
        return engines[int(k)];
    }
};

// The GPU platform whose refinement applies to scenario s: its hardware preset id, or for an edited GPU
// ({"base": "b200", ...}) the preset it starts from.
// (A reference into s.)
const std::string& engine_platform(const Scenario& s);
// The constants of s's engine (runtime.engine) on s's GPU platform.
const EngineConstants& engine_constants(const EngineSet& set, const Scenario& s);

// The starting constants (no file): documented engine defaults, zero overheads.
EngineSet default_engines();
// {"sglang": {"decode_overhead_per_layer_us": {"value": 30, "source": "..."}, ...,
//             "gpus": {"b200": {"request_overhead_ms": 120, ...}}}, ...}; a GPU's entry starts from its engine's
// constants and sets what it lists. Unknown keys are errors.
bool parse_engines(const nlohmann::json& j, EngineSet& out, Issues& errors);
nlohmann::json engines_to_json(const EngineSet& set);
// presets/engines.json as compiled in (defaults if the file is absent).
const EngineSet& builtin_engines();

}  // namespace moe
