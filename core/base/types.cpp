#include "core/base/types.h"

namespace moe {

bool parse_dtype(std::string_view t, Dtype& out) {
    struct Name { const char* name; Dtype d; };
    static const Name names[] = {
        {"fp32", Dtype::fp32},   {"float32", Dtype::fp32}, {"bf16", Dtype::bf16}, {"bfloat16", Dtype::bf16},
        {"fp16", Dtype::fp16},   {"float16", Dtype::fp16}, {"fp8", Dtype::fp8},   {"fp8_e4m3", Dtype::fp8},
        {"mxfp4", Dtype::mxfp4}, {"nvfp4", Dtype::nvfp4},  {"int4", Dtype::int4},
    };
    for (const Name& n : names)
        if (t == n.name) { out = n.d; return true; }
    return false;
}

const char* dtype_name(Dtype d) {
    switch (d) {
        case Dtype::fp32: return "fp32";
        case Dtype::bf16: return "bf16";
        case Dtype::fp16: return "fp16";
        case Dtype::fp8: return "fp8";
        case Dtype::mxfp4: return "mxfp4";
        case Dtype::nvfp4: return "nvfp4";
        case Dtype::int4: return "int4";
    }
    return "?";
}

// dtype_bytes and dtype_scale_bytes_per_elem are defined inline in types.h.

const char* phase_name(Phase p) { return p == Phase::prefill ? "prefill" : "decode"; }

const char* bound_name(Bound b) {
    switch (b) {
        case Bound::compute: return "compute";
        case Bound::memory: return "memory";
        case Bound::comm: return "comm";
        case Bound::latency: return "latency";
        case Bound::none: return "none";
        case Bound::offload: return "offload";
    }
    return "?";
}

const char* source_name(Source s) {
    switch (s) {
        case Source::measured: return "measured";
        case Source::interpolated: return "interpolated";
        case Source::transferred: return "transferred";
        case Source::analytical: return "analytical";
    }
    return "?";
}

}  // namespace moe
