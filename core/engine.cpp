// engine.cpp — the engines' system constants: documented defaults, and presets/engines.json (fitted values).
#include "engine.h"

#include <cmath>

#include "embedded.h"
#include "json_util.h"

namespace moe {

// Every numeric constant, with its allowed range (a fit or a hand edit outside it is an error, not a silent clamp).
#define MOE_ENGINE_NUMBERS(X)                                                                                     \
    X(request_overhead_ms, 0, 1e4) X(request_overhead_per_ktoken_ms, 0, 1e4) X(request_overhead_per_client_ms, 0, 1e3) X(decode_overhead_per_layer_us, 0, 1e4) X(prefill_overhead_per_layer_us, 0, 1e5) X(decode_host_per_request_us, 0, 1e4) X(request_wait_decode_steps, 0, 1e3)          \
    X(decode_kernel_scale, 0.1, 10) X(prefill_kernel_scale, 0.1, 10) X(decode_kernel_scale_blackwell, 0.1, 10)        \
    X(prefill_kernel_scale_blackwell, 0.1, 10) X(mem_fraction, 0.05, 1)                                                \
    X(kv_transfer_eff, 0.01, 1) X(kv_transfer_latency_ms, 0, 1e4) X(wave_persistence, 0, 1)                         \
    X(ttft_typical_error, 0, 100) X(tpot_typical_error, 0, 100)
#define MOE_ENGINE_INTS(X) X(kv_block_tokens, 1, 4096)

EngineSet default_engines() {
    EngineSet s;
    // SGLang: prefill runs as its own forward and pauses decoding (--enable-mixed-chunk is off by default);
    // chunked_prefill_size 8192 on 80-192 GB GPUs; page size 1 token; mem_fraction_static ~0.88.
    EngineConstants& sg = s.get(EngineKind::sglang);
    sg.mixed_batches = false;
    sg.kv_block_tokens = 1;
    sg.mem_fraction = 0.88;
    sg.wave_persistence = 1.0;  // prefill-first scheduling re-aligns each round (docs/model.md, "Serving")
    // vLLM V1: chunked prefill always on, prefill chunks share a step with the decode batch under a token budget
    // (max_num_batched_tokens); 16-token KV blocks; gpu_memory_utilization 0.9.
    EngineConstants& vl = s.get(EngineKind::vllm);
    vl.mixed_batches = true;
    vl.kv_block_tokens = 16;
    vl.mem_fraction = 0.9;
    // TensorRT-LLM (PyTorch backend): in-flight batching with chunked context, 32-token KV blocks,
    // free_gpu_memory_fraction 0.9 of what is left after the weights.
    EngineConstants& tr = s.get(EngineKind::trtllm);
    tr.mixed_batches = true;
    tr.kv_block_tokens = 32;
    tr.mem_fraction = 0.9;
    tr.kv_reserve_output = true;  // CapacitySchedulerPolicy.GUARANTEED_NO_EVICT, the default
    // ideal: no host overhead, kernels exactly as the tables say, mixed batches.
    EngineConstants& id = s.get(EngineKind::ideal);
    id.mixed_batches = true;
    id.kv_block_tokens = 1;
    id.mem_fraction = 0.9;
    id.kv_transfer_eff = 1.0;
    id.kv_transfer_latency_ms = 0;
    return s;
}

namespace {
const char* const kNames[] = {"sglang", "vllm", "trtllm", "ideal"};

// {"value": v, "source": "..."} or a bare value.
const nlohmann::json& value_of(const nlohmann::json& v) {
    return v.is_object() && v.contains("value") ? v["value"] : v;
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
        EngineConstants& c = out.engines[k];
        for (auto f = it.value().begin(); f != it.value().end(); ++f) {
            const std::string& key = f.key();
            const std::string path = "engines." + name + "." + detail::shown_text(key);
            if (!key.empty() && key[0] == '_') continue;
            const nlohmann::json& v = value_of(f.value());
            bool known = false;
#define X(field, lo, hi)                                                                                  \
    if (key == #field) {                                                                                  \
        known = true;                                                                                     \
        if (!detail::is_number(v) || !std::isfinite(v.get<double>()) || v.get<double>() < (lo) ||        \
            v.get<double>() > (hi))                                                                       \
            errors.push_back({path, "must be a number in [" #lo ", " #hi "]"});                           \
        else                                                                                              \
            c.field = v.get<double>();                                                                    \
    }
            MOE_ENGINE_NUMBERS(X)
#undef X
#define X(field, lo, hi)                                                                                  \
    if (key == #field) {                                                                                  \
        known = true;                                                                                     \
        if (!detail::is_number(v) || v.get<double>() != std::floor(v.get<double>()) ||                  \
            v.get<double>() < (lo) || v.get<double>() > (hi))                                             \
            errors.push_back({path, "must be a whole number in [" #lo ", " #hi "]"});                     \
        else                                                                                              \
            c.field = int(v.get<double>());                                                               \
    }
            MOE_ENGINE_INTS(X)
#undef X
            if (key == "mixed_batches") {
                known = true;
                if (!v.is_boolean()) errors.push_back({path, "must be true or false"});
                else c.mixed_batches = v.get<bool>();
            }
            if (key == "kv_reserve_output") {
                known = true;
                if (!v.is_boolean()) errors.push_back({path, "must be true or false"});
                else c.kv_reserve_output = v.get<bool>();
            }
            if (!known) errors.push_back({path, "unknown constant"});
        }
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
        MOE_ENGINE_INTS(X)
#undef X
        o["mixed_batches"] = c.mixed_batches;
        o["kv_reserve_output"] = c.kv_reserve_output;
    }
    return j;
}

const EngineSet& builtin_engines() {
    static const EngineSet set = [] {
        EngineSet s = default_engines();
        for (std::size_t i = 0; i < kEmbeddedFileCount; ++i) {
            if (std::string_view(kEmbeddedFiles[i].path) != "presets/engines.json") continue;
            auto j = nlohmann::json::parse(kEmbeddedFiles[i].data, kEmbeddedFiles[i].data + kEmbeddedFiles[i].size,
                                           nullptr, false);
            Issues errors;
            EngineSet parsed = s;
            // A broken shipped file is our bug; the tests check it parses (test_serving.cpp). Keep the defaults.
            if (parse_engines(j, parsed, errors)) s = parsed;
        }
        return s;
    }();
    return set;
}

}  // namespace moe
