// gpu_spec.h — one accelerator, from vendor datasheets (dense peaks, no sparsity). SI units in the names.
//
//   moe::GpuSpec g = moe::parse_gpu_spec(json, "hardware", errs);
//   g.peak_tflops(moe::Dtype::fp8)
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "types.h"

namespace moe {

struct GpuSpec {
    std::string id;                     // preset id, e.g. "h800"
    std::string name;                   // display name
    std::string arch;                   // "ampere", "hopper", "blackwell", "cdna3"
    double dense_tflops_bf16 = 0;
    double dense_tflops_fp8 = 0;        // 0: no FP8 tensor cores (A100): fp8 runs as bf16
    double dense_tflops_fp4 = 0;        // 0: no native FP4 (Hopper pre-expands FP4 checkpoints to FP8)
    double hbm_bandwidth_GBps = 0;
    double hbm_capacity_GiB = 0;        // vendor "80 GB" parts are 80 GiB
    double nvlink_bandwidth_GBps = 0;   // per GPU, one direction
    double rdma_bandwidth_GBps = 0;     // per GPU NIC, one direction
    int gpus_per_node = 8;
    int sm_count = 132;
    std::string tables;                 // bench_data family measured on this GPU ("h800", "h20", "h100"), or ""
    std::string tables_fallback;        // family to borrow from when a table is missing (same arch preferred)

    // Peak dense TFLOPS for GEMMs computed in `d` (fp8 falls back to bf16 where unsupported, 4-bit to fp8).
    double peak_tflops(Dtype d) const;
    // The format the tensor cores actually compute in for weights stored as `d` (Hopper: fp4 -> fp8).
    Dtype compute_dtype(Dtype d) const;
};

// The numeric GPU fields with unit, range and a one-line help, for the page's "(?)" and `presets fields`.
struct GpuFieldDesc {
    const char* key;   // "hbm_bandwidth_GBps"
    const char* unit;  // "GB/s"
    double min, max;
    const char* help;
};
const std::vector<GpuFieldDesc>& gpu_fields();

GpuSpec parse_gpu_spec(const nlohmann::json& j, const std::string& path, Issues& errors);
nlohmann::json gpu_spec_to_json(const GpuSpec& g);

}  // namespace moe
