// engine.cpp — the engines' system constants: documented defaults, and presets/engines.json (fitted values).
#include "core/serving/engine.h"

#include <cmath>

#include "core/base/embedded.h"
#include "core/base/json_util.h"

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
#define X(field, lo, hi)                                                                                  \
    if (key == #field) {                                                                                  \
        if (!detail::is_number(v) || v.get<double>() != std::floor(v.get<double>()) ||                  \
            v.get<double>() < (lo) || v.get<double>() > (hi))                                             \
            errors.push_back({path, "must be a whole number in [" #lo ", " #hi "]"});                     \
        else                                                                                              \
            c.field = int(v.get<double>());                                                               \
        return true;                                                                                      \
    }
    MOE_ENGINE_INTS(X)
#undef X
    for (auto [name, field] : {std::pair{"mixed_batches", &EngineConstants::mixed_batches},
                               std::pair{"kv_reserve_output", &EngineConstants::kv_reserve_output}})
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
        parse_constants(it.value(), path, "gpus", out.engines[k], errors);
        // The per-GPU refinements, each from the engine's constants just read.
        if (!it.value().contains("gpus")) continue;
        const nlohmann::json& gpus = it.value()["gpus"];
        if (!gpus.is_object()) {
            errors.push_back({path + ".gpus", "must be an object of GPU ids"});
            continue;
        }
        out.gpus[k].clear();
        for (auto g = gpus.begin(); g != gpus.end(); ++g) {
            const std::string gpath = path + ".gpus." + detail::shown_text(g.key());
            if (g.key().empty() || g.key()[0] == '_') continue;
            if (!g.value().is_object()) {
                errors.push_back({gpath, "must be an object"});
                continue;
            }
            GpuEngineConstants gc{g.key(), out.engines[k]};
            parse_constants(g.value(), gpath, "", gc.constants, errors);
            out.gpus[k].push_back(std::move(gc));
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
        // a GPU's refinement: the numbers that differ from the engine's
        for (const GpuEngineConstants& g : set.gpus[i]) {
            nlohmann::json& go = o["gpus"][g.gpu];
            go = nlohmann::json::object();
#define X(field, lo, hi) \
    if (g.constants.field != c.field) go[#field] = g.constants.field;
            MOE_ENGINE_NUMBERS(X)
            MOE_ENGINE_INTS(X)
#undef X
        }
    }
    return j;
}

const std::string& engine_platform(const Scenario& s) {
    if (s.hardware_ref == "inline" && s.hardware_inline.is_object() && s.hardware_inline.contains("base") &&
        s.hardware_inline["base"].is_string())
        return s.hardware_inline["base"].get_ref<const std::string&>();
    return s.gpu.id;
}

const EngineConstants& engine_constants(const EngineSet& set, const Scenario& s) {
    return set.get(s.runtime.engine, engine_platform(s));
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
