// engine.cpp — the engines' system constants: documented defaults, and presets/engines.json (fitted values).
#include "core/serving/engine.h"

#include <cmath>

#include "core/base/embedded.h"
#include "core/base/json_util.h"

namespace moe {

// Every numeric constant, with its allowed range (a fit or a hand edit outside it is an error, not a silent clamp).
#define MOE_ENGINE_NUMBERS(X)                                                                                     \
    X(request_overhead_ms, 0, 60) X(request_overhead_per_ktoken_ms, 0, 10) X(request_overhead_per_client_ms, 0, 1)  \
    X(decode_overhead_per_layer_us, 0, 60) X(prefill_overhead_per_layer_us, 0, 300)                                 \
    X(decode_host_per_request_us, 0, 80)                                                                            \
    X(kv_transfer_eff, 0.01, 1) X(kv_transfer_latency_ms, 0, 100) X(kv_transfer_per_block_us, 0, 10)               \
    X(wave_persistence, 0, 1)                                                                                       \
    X(ttft_typical_error, 0, 100) X(tpot_typical_error, 0, 100)                                                   \
    X(ttft_log_error_p10, -5, 5) X(ttft_log_error_p90, -5, 5) X(tpot_log_error_p10, -5, 5)                          \
    X(tpot_log_error_p90, -5, 5) X(throughput_log_error_p10, -5, 5) X(throughput_log_error_p90, -5, 5)

EngineSet default_engines() {
    EngineSet s;
    // SGLang: prefill runs as its own forward and pauses decoding (--enable-mixed-chunk is off by default);
    // chunked_prefill_size 8192 on 80-192 GB GPUs. (Page sizes and memory fractions: engine_kv_block_tokens /
    // engine_mem_fraction in core/scenario/scenario.h, read by the memory model.)
    EngineConstants& sg = s.get(EngineKind::sglang);
    sg.mixed_batches = false;
    sg.overlap_schedule = true;  // --disable-overlap-schedule is off by default
    sg.wave_persistence = 1.0;  // prefill-first scheduling re-aligns each round (docs/serving.md, "Serving")
    // vLLM V1: chunked prefill always on, prefill chunks share a step with the decode batch under a token budget
    // (max_num_batched_tokens).
    EngineConstants& vl = s.get(EngineKind::vllm);
    vl.mixed_batches = true;
    vl.disagg_serial_requests = true;
    // The decode side's hand-over of a request beyond what the simulation charges for it (the KV bytes over the link,
    // the decode server's request path, the step boundaries, the first decode step): vLLM PR #51919 measures the
    // hand-over (prefill's token -> client's token, NixlConnector, 3P1D) at 197 ms p50, of which the KV transfer
    // 29 ms and the first token's recompute with its step alignment 58 ms; less ~35 ms of decode request path, 75 ms
    // of orchestration (pull dispatch and completion notice at engine-step boundaries, the router's phase change).
    vl.kv_transfer_latency_ms = 75.0;
    // NIXL posts a descriptor per block per layer and plane: vLLM RFC #50913 times a ~5k-token pull at ~105 ms with
    // 16-token blocks (tens of thousands of ~8 KB descriptors) and ~47 ms with 64-token ones, a quarter as many of
    // four times the size: t = n (a + size / B) through both gives a = 2.6 us per descriptor (B = 8.9 GB/s).
    vl.kv_transfer_per_block_us = 2.6;
    // TensorRT-LLM (PyTorch backend): in-flight batching with chunked context.
    EngineConstants& tr = s.get(EngineKind::trtllm);
    tr.mixed_batches = true;
    tr.kv_reserve_output = true;  // CapacitySchedulerPolicy.GUARANTEED_NO_EVICT, the default
    tr.disagg_serial_requests = true;
    tr.overlap_schedule = true;  // PyTorch backend: disable_overlap_scheduler False by default
    // The cache transceiver's host work per request beyond the wire: TensorRT-LLM PR #12273 measures the context
    // side's transfer task at 46.4 ms mean (ISL 8192, Qwen3-235B FP4, context TEP4 -> generation DEP16, before that
    // PR), the transfer itself at 10.8 ms median: ~35 ms of it other work (argument preparation 10.3 ms and queueing
    // 16.8 ms mean among it). Taken as fixed per request; its dependence on the prompt's length is not published.
    tr.kv_transfer_latency_ms = 35.0;
    // ideal: no host overhead, kernels exactly as the tables say, mixed batches.
    EngineConstants& id = s.get(EngineKind::ideal);
    id.mixed_batches = true;
    id.kv_transfer_eff = 1.0;
    id.kv_transfer_latency_ms = 0;
    return s;
}

const std::vector<EngineConstantInfo>& fitted_engine_constants() {
    // (the ranges are MOE_ENGINE_NUMBERS's: a test checks they agree)
    static const std::vector<EngineConstantInfo> info = {
        {"request_overhead_ms", &EngineConstants::request_overhead_ms, 0, 60, "ms",
         "per request before the scheduler: HTTP, tokeniser call, admission, first detokenise"},
        {"request_overhead_per_ktoken_ms", &EngineConstants::request_overhead_per_ktoken_ms, 0, 10, "ms",
         "per 1000 prompt tokens: tokenisation and the input's copy"},
        {"request_overhead_per_client_ms", &EngineConstants::request_overhead_per_client_ms, 0, 1, "ms",
         "per client in flight: the one frontend process streams every client's tokens"},
        {"decode_overhead_per_layer_us", &EngineConstants::decode_overhead_per_layer_us, 0, 60, "us",
         "per layer per decode step under CUDA graphs: scheduling, sampling, graph launch"},
        {"prefill_overhead_per_layer_us", &EngineConstants::prefill_overhead_per_layer_us, 0, 300, "us",
         "per layer per forward with prompt tokens (eager): kernel launches, attention metadata"},
        {"decode_host_per_request_us", &EngineConstants::decode_host_per_request_us, 0, 80, "us",
         "host work per running request per decode step, overlapped with the GPU's step"},
    };
    return info;
}

namespace {
const char* const kNames[] = {"sglang", "vllm", "trtllm", "ideal"};

// {"value": v, "source": "..."} or a bare value.
const nlohmann::json& value_of(const nlohmann::json& v) {
    return v.is_object() && v.contains("value") ? v["value"] : v;
}
}  // namespace

namespace {

// One constant `key` = `v` of an engine (or of its refinement on one GPU) into c. False if `key` is not a constant.
bool parse_constant(const std::string& key, const nlohmann::json& v, const std::string& path, EngineConstants& c,
                    Issues& errors) {
#define X(field, lo, hi)                                                                                  \
    if (key == #field) {                                                                                  \
        if (!detail::is_number(v) || !std::isfinite(v.get<double>()) || v.get<double>() < (lo) ||        \
            v.get<double>() > (hi))                                                                       \
            errors.push_back({path, "must be a number in [" #lo ", " #hi "]"});                           \
        else                                                                                              \
            c.field = v.get<double>();                                                                    \
        return true;                                                                                      \
    }
    MOE_ENGINE_NUMBERS(X)
#undef X
    // (older files: the page size and memory fraction, now each engine's default in the scenario layer,
    // engine_kv_block_tokens / engine_mem_fraction in core/scenario/scenario.h; read past)
    if (key == "kv_block_tokens" || key == "mem_fraction") return true;
    // (older files: the fitted wait for the scheduler's poll, now the scenario's serving.scheduler_recv_interval)
    if (key == "request_wait_decode_steps") return true;
    for (auto [name, field] : {std::pair{"mixed_batches", &EngineConstants::mixed_batches},
                               std::pair{"kv_reserve_output", &EngineConstants::kv_reserve_output},
                               std::pair{"disagg_serial_requests", &EngineConstants::disagg_serial_requests},
                               std::pair{"overlap_schedule", &EngineConstants::overlap_schedule}})
        if (key == name) {
            if (!v.is_boolean()) errors.push_back({path, "must be true or false"});
            else c.*field = v.get<bool>();
            return true;
        }
    return false;
}

// Every constant of object `o` (keys starting with '_' are comments; `skip` is handled by the caller) into c.
void parse_constants(const nlohmann::json& o, const std::string& path, const char* skip, EngineConstants& c, Issues& errors) {
    for (auto f = o.begin(); f != o.end(); ++f) {
        const std::string& key = f.key();
        if ((!key.empty() && key[0] == '_') || key == skip) continue;
        const std::string at = path + "." + detail::shown_text(key);
        if (!parse_constant(key, value_of(f.value()), at, c, errors)) errors.push_back({at, "unknown constant"});
    }
}

}  // namespace

bool parse_engines(const nlohmann::json& j, EngineSet& out, Issues& errors) {
    const size_t before = errors.size();
    if (!j.is_object()) {
        errors.push_back({"engines", "must be a JSON object"});
        return false;
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& name = it.key();
        if (!name.empty() && name[0] == '_') continue;  // "_comment"
        int k = -1;
        for (int i = 0; i < 4; ++i)
            if (name == kNames[i]) k = i;
        if (k < 0) {
            errors.push_back({"engines." + detail::shown_text(name), "unknown engine (sglang, vllm, trtllm, ideal)"});
            continue;
        }
        if (!it.value().is_object()) {
            errors.push_back({"engines." + name, "must be an object"});
            continue;
        }
        const std::string path = "engines." + name;
        if (it.value().contains("gpus"))
            errors.push_back({path + ".gpus", "per-GPU refinements are gone: one set of constants per engine, shared by every GPU"});
        parse_constants(it.value(), path, "gpus", out.engines[k], errors);
    }
    return errors.size() == before;
}

nlohmann::json engines_to_json(const EngineSet& set) {
    nlohmann::json j = nlohmann::json::object();
    for (int i = 0; i < 4; ++i) {
        const EngineConstants& c = set.engines[i];
        nlohmann::json& o = j[kNames[i]];
#define X(field, lo, hi) o[#field] = c.field;
        MOE_ENGINE_NUMBERS(X)
#undef X
        o["mixed_batches"] = c.mixed_batches;
        o["kv_reserve_output"] = c.kv_reserve_output;
        o["disagg_serial_requests"] = c.disagg_serial_requests;
        o["overlap_schedule"] = c.overlap_schedule;
    }
    return j;
}

EngineConstants as_run(EngineConstants k, const Scenario& s) {
    if (s.runtime.engine == EngineKind::sglang && s.runtime.speculative.draft_tokens > 0) {
        k.overlap_schedule = false;
        k.host_overlap = false;
    }
    return k;
}

EngineConstants engine_constants(const EngineSet& set, const Scenario& s) { return as_run(set.get(s.runtime.engine), s); }

const EngineSet& builtin_engines() {
    static const EngineSet set = [] {
        EngineSet s = default_engines();
        for (const EmbeddedFile& f : embedded_files()) {
            if (std::string_view(f.path) != "presets/engines.json") continue;
            auto j = nlohmann::json::parse(f.data, f.data + f.size, nullptr, false);
            Issues errors;
            EngineSet parsed = s;
            // A broken shipped file is our bug; the tests check it parses (test_serving.cpp). Keep the defaults.
            if (parse_engines(j, parsed, errors)) s = parsed;
        }
        return s;
    }();
    return set;
}

namespace {
// Per thread (engine.h): two threads evaluating with different calibrations at once each see their own.
thread_local const EngineSet* t_active = nullptr;
thread_local EngineSet t_held;  // a copy: the caller's set may go away
}  // namespace

const EngineSet& active_engines() { return t_active ? *t_active : builtin_engines(); }

const EngineSet* engines_in_use() { return t_active; }

void use_engines(const EngineSet* set) {
    if (set) {
        if (set != &t_held) t_held = *set;
        t_active = &t_held;
    } else {
        t_active = nullptr;
    }
}

bool engines_from_text(const std::string& text, EngineSet& out, Issues& errors) {
    // parsed from pointers, as every other parse in the core: a std::string's iterators would instantiate
    // nlohmann's lexer and parser a second time (~4 KB gzip of the page's wasm)
    const nlohmann::json j = nlohmann::json::parse(text.data(), text.data() + text.size(), nullptr, false);
    if (j.is_discarded()) {
        errors.push_back({"engines", "not valid JSON"});
        return false;
    }
    EngineSet set = builtin_engines();
    if (!parse_engines(j, set, errors)) return false;
    out = set;
    return true;
}

}  // namespace moe
