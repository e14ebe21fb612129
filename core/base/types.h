// types.h — small shared vocabulary of the core: data types, issues (user errors as values), provenance.
//
// Room: core/base/ — the vocabulary every layer shares (Dtype, Issue, provenance), JSON read helpers, the one
// per-thread cache template (set_cache.h), the embedded-file index. Includes nothing of core/.
//
//   moe::Dtype d;  if (!moe::parse_dtype("fp8", d)) ...;   moe::dtype_bytes(d) == 1.0
//   moe::Issue{"parallel.ep", "48 does not divide 256 routed experts"}
//
// Everything in core/ is exception-free, allocation-light and free of I/O.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace moe {

// Storage / compute formats. bytes are the payload only; block-scale overheads are separate.
enum class Dtype : std::uint8_t { fp32, bf16, fp16, fp8, mxfp4, nvfp4, int4 };  // int4 last (detail::kDtypeCount)

bool parse_dtype(std::string_view text, Dtype& out);
const char* dtype_name(Dtype d);
inline double dtype_bytes(Dtype d) {
    switch (d) {
        case Dtype::fp32: return 4;
        case Dtype::bf16:
        case Dtype::fp16: return 2;
        case Dtype::fp8: return 1;
        case Dtype::mxfp4:
        case Dtype::nvfp4:
        case Dtype::int4: return 0.5;
    }
    return 2;
}
// Extra bytes per element for the format's scales: fp8 128x128 blocks (fp32 scale), mxfp4 one E8M0 byte
// per 32, nvfp4 one FP8 byte per 16 (+ a per-tensor fp32, negligible), int4 one bf16 scale per 128 (GPTQ/AWQ g128).
inline double dtype_scale_bytes_per_elem(Dtype d) {
    switch (d) {
        case Dtype::fp8: return 4.0 / (128.0 * 128.0);  // one fp32 scale per 128x128 weight block
        case Dtype::mxfp4: return 1.0 / 32.0;           // one E8M0 byte per 32 elements (OCP MX)
        case Dtype::nvfp4: return 1.0 / 16.0;           // one E4M3 byte per 16 elements (+ per-tensor fp32)
        case Dtype::int4: return 2.0 / 128.0;           // one bf16 scale per group of 128 (GPTQ/AWQ)
        default: return 0;
    }
}
// Is the format a 4-bit one (mxfp4, nvfp4, int4)?
inline bool is_fp4_like(Dtype d) { return d == Dtype::mxfp4 || d == Dtype::nvfp4 || d == Dtype::int4; }

enum class Phase : std::uint8_t { prefill, decode };
const char* phase_name(Phase p);

// What bounds an operator's time.
enum class Bound : std::uint8_t { compute, memory, comm, latency, none, offload };
const char* bound_name(Bound b);

// Where an efficiency came from (DESIGN §3 "every lookup says where its number came from").
// Ordered from most to least trustworthy.
enum class Source : std::uint8_t { measured, interpolated, transferred, analytical };
const char* source_name(Source s);

// A user-input problem, named by its dot path into the scenario (or a file position).
struct Issue {
    std::string path;
    std::string message;
    std::string text() const { return path.empty() ? message : path + ": " + message; }
};
using Issues = std::vector<Issue>;

}  // namespace moe
