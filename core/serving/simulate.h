// simulate.h — the serving benchmark, simulated (docs/serving.md, "Serving"): closed-loop clients started together,
// each sending serving.requests_per_client requests one after the other; the engine's scheduler admitting, batching
// and stepping them, each step priced by the step-time surface (surface.h) plus the engine's host time (engine.h).
//
//   const moe::StepSurface sf = moe::step_surface(scenario, tables);          // estimate() at a few grid points
//   const moe::ServingResult r = moe::simulate(scenario, sf, engine_constants);  // the benchmark's means
//
// Policies (each from the engine's own scheduler, docs/serving.md "Serving"):
//   separate prefill (SGLang, mixed_batches = false): waiting prompts go first, in forwards of up to the chunk's
//     tokens (a long prompt split over several), which pause decoding; otherwise every running request decodes.
//   mixed batches (vLLM, TensorRT-LLM): every step decodes all running requests and fills the rest of the token
//     budget with waiting prompt tokens (chunked prefill).
//   admission: a request enters when the KV cache holds its prompt (and its whole output with kv_reserve_output:
//     TensorRT-LLM's GUARANTEED_NO_EVICT); an engine that does not reserve the output preempts the newest request
//     when the growing contexts outrun the cache (it recomputes its prompt later).
//   disaggregated: a FIFO prefill queue served by the prefill pool's ranks (a forward takes up to prefill.batch
//     waiting prompts), the KV transfer over the link, decode admission up to decode.batch per rank.
// Request lengths with serving.length_spread are drawn deterministically (a low-discrepancy sequence), so a
// scenario always gives the same numbers.
#pragma once
#include "core/serving/engine.h"
#include "core/serving/surface.h"

namespace moe {

ServingResult simulate(const Scenario& s, const StepSurface& sf, const EngineConstants& k);

// The requests one simulation holds (per attention-DP rank: its clients x serving.requests_per_client) and the most
// it takes: about 20 MB and a fraction of a second; a benchmark of 4,096 clients x 10 requests is 41k. Past it,
// evaluate() refuses the scenario naming serving.requests_per_client (the closed form has no such limit). A
// workload.trace is simulated whole, up to its own limit (kMaxTraceRequests: 1,000,000, ~130 MB, a few seconds).
double simulated_requests(const Scenario& s);
constexpr double kMaxSimulatedRequests = 200000;

// The per-request overhead before a request reaches the scheduler (ms): HTTP, tokenisation, admission
// (docs/serving.md, "Serving"): k.request_overhead_ms + per 1000 prompt tokens + per client in flight.
double request_overhead_ms(const EngineConstants& k, double isl, double clients);

}  // namespace moe
