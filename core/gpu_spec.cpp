#include "gpu_spec.h"

#include "json_util.h"

namespace moe {
using namespace detail;

double GpuSpec::peak_tflops(Dtype d) const {
    switch (compute_dtype(d)) {
        case Dtype::fp8: return dense_tflops_fp8 > 0 ? dense_tflops_fp8 : dense_tflops_bf16;
        case Dtype::mxfp4:
        case Dtype::nvfp4: return dense_tflops_fp4 > 0 ? dense_tflops_fp4 : peak_tflops(Dtype::fp8);
        case Dtype::fp32: return dense_tflops_bf16 / 2;  // not a GEMM dtype we serve in; a conservative guess
        default: return dense_tflops_bf16;
    }
}

Dtype GpuSpec::compute_dtype(Dtype d) const {
    switch (d) {
        case Dtype::mxfp4:
        case Dtype::nvfp4:
            // Native FP4 MMA only where the GPU has it (Blackwell); Hopper runs FP4 checkpoints as FP8 (seed 002 §6).
            if (dense_tflops_fp4 > 0) return d;
            return dense_tflops_fp8 > 0 ? Dtype::fp8 : Dtype::bf16;
        case Dtype::int4: return Dtype::bf16;  // W4A16: dequantised in the GEMM, bf16 MMA
        case Dtype::fp8: return dense_tflops_fp8 > 0 ? Dtype::fp8 : Dtype::bf16;
        default: return d;
    }
}

const std::vector<GpuFieldDesc>& gpu_fields() {
    static const std::vector<GpuFieldDesc> fields = {
        {"dense_tflops_bf16", "TFLOPS", 1e-3, 1e6, "Peak dense BF16 tensor throughput (datasheet, without 2:4 sparsity)."},
        {"dense_tflops_fp8", "TFLOPS", 0, 1e6, "Peak dense FP8 tensor throughput; 0 when the GPU has no FP8 tensor cores (FP8 then runs as BF16)."},
        {"dense_tflops_fp4", "TFLOPS", 0, 1e6, "Peak dense FP4 tensor throughput; 0 when there are none (FP4 checkpoints are pre-expanded to FP8)."},
        {"hbm_bandwidth_GBps", "GB/s", 1e-3, 1e7, "HBM bandwidth of one GPU."},
        {"hbm_capacity_GiB", "GiB", 1e-3, 1e6, "HBM capacity of one GPU (vendors' \"80 GB\" parts are 80 GiB)."},
        {"nvlink_bandwidth_GBps", "GB/s", 1e-3, 1e7, "NVLink (scale-up) bandwidth per GPU, one direction."},
        {"rdma_bandwidth_GBps", "GB/s", 1e-3, 1e7, "RDMA NIC bandwidth per GPU, one direction (400 Gb/s = 50 GB/s)."},
        {"gpus_per_node", "GPUs", 1, 1024, "GPUs in one NVLink domain; traffic beyond it goes over RDMA."},
        {"sm_count", "SMs", 1, 100000, "Streaming multiprocessors; DeepEP normal-mode kernels take runtime.comm_sms of them."},
    };
    return fields;
}

GpuSpec parse_gpu_spec(const json& j, const std::string& path, Issues& errors) {
    GpuSpec g;
    if (!j.is_object()) {
        errors.push_back({path, "must be a hardware preset id or an object of GPU fields"});
        return g;
    }
    static const char* const known[] = {"id", "name", "arch", "dense_tflops_bf16", "dense_tflops_fp8", "dense_tflops_fp4",
                                        "hbm_bandwidth_GBps", "hbm_capacity_GiB", "nvlink_bandwidth_GBps",
                                        "rdma_bandwidth_GBps", "gpus_per_node", "sm_count", "tables",
                                        "tables_fallback", "source", "description", "base"};
    for (auto it = j.begin(); it != j.end(); ++it) {
        bool ok = false;
        for (const char* k : known) ok = ok || it.key() == k;
        if (!ok) errors.push_back({path + "." + shown_text(it.key()), "unknown key"});
    }
    g.id = read_str(j, "id");
    g.name = read_str(j, "name", g.id);
    g.arch = read_str(j, "arch", "hopper");
    g.dense_tflops_bf16 = read_num(j, "dense_tflops_bf16", path, errors, 0, true, 1e-3, 1e6);
    g.dense_tflops_fp8 = read_num(j, "dense_tflops_fp8", path, errors, 0, false, 0, 1e6);
    g.dense_tflops_fp4 = read_num(j, "dense_tflops_fp4", path, errors, 0, false, 0, 1e6);
    g.hbm_bandwidth_GBps = read_num(j, "hbm_bandwidth_GBps", path, errors, 0, true, 1e-3, 1e7);
    g.hbm_capacity_GiB = read_num(j, "hbm_capacity_GiB", path, errors, 0, true, 1e-3, 1e6);
    g.nvlink_bandwidth_GBps = read_num(j, "nvlink_bandwidth_GBps", path, errors, 0, true, 1e-3, 1e7);
    g.rdma_bandwidth_GBps = read_num(j, "rdma_bandwidth_GBps", path, errors, 0, true, 1e-3, 1e7);
    g.gpus_per_node = read_int(j, "gpus_per_node", path, errors, 8, false, 1, 1024);
    g.sm_count = read_int(j, "sm_count", path, errors, 132, false, 1, 100000);
    g.tables = read_str(j, "tables");
    g.tables_fallback = read_str(j, "tables_fallback");
    return g;
}

json gpu_spec_to_json(const GpuSpec& g) {
    json j;
    j["id"] = g.id;
    j["name"] = g.name;
    j["arch"] = g.arch;
    j["dense_tflops_bf16"] = g.dense_tflops_bf16;
    j["dense_tflops_fp8"] = g.dense_tflops_fp8;
    j["dense_tflops_fp4"] = g.dense_tflops_fp4;
    j["hbm_bandwidth_GBps"] = g.hbm_bandwidth_GBps;
    j["hbm_capacity_GiB"] = g.hbm_capacity_GiB;
    j["nvlink_bandwidth_GBps"] = g.nvlink_bandwidth_GBps;
    j["rdma_bandwidth_GBps"] = g.rdma_bandwidth_GBps;
    j["gpus_per_node"] = g.gpus_per_node;
    j["sm_count"] = g.sm_count;
    j["tables"] = g.tables;
    j["tables_fallback"] = g.tables_fallback;
    return j;
}

}  // namespace moe
