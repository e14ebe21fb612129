// calibration.h — the model's calibration constants: efficiency caps, overheads and communication efficiencies
// and latencies. Values live in presets/calibration.json (each with where it comes from) and are fitted on the
// public measurements only (reference/public_measurements.csv). The defaults below are starting points (the fit's
// and a table set's without a calibration file); builtin_tables() always carries the file's values.
//
//   moe::Calibration c;  moe::Issues e;  moe::parse_calibration(json, c, e);
#pragma once
#include <nlohmann/json.hpp>

#include "core/base/types.h"

namespace moe {

struct Calibration {
    // Analytical fallback (no table covers the kernel)
    double gemm_compute_eff = 0.70;        // dense GEMM, fraction of peak
    double grouped_compute_eff = 0.65;     // grouped GEMM at full tiles
    double attn_prefill_compute_eff = 0.55;
    double attn_decode_bw_eff = 0.75;
    double sparse_attn_prefill_eff = 0.645;  // DSA's sparse prefill kernel (FlashMLA), fraction of the BF16 peak: measured
    double hbm_bw_eff = 0.80;              // memory-bound kernels without a table
    double kernel_floor_us = 3.0;          // shortest kernel (launch + tail)
    double gemm_table_overhead_us = 4.0;   // per-call timing overhead inside the bench_data GEMM latencies
    double gemm_tile_fixed_iters = 1.4;    // DeepGEMM: fixed cost per output tile, in k-iterations (BLOCK_K 128)
    double attn_tile_fixed_iters = 1.9;    // FlashAttention: fixed cost per CTA, in KV-block iterations
    double attn_softmax_exposed = 1.45;    // softmax time per score not hidden under the matmuls, in exp units
    double misc_passes = 12;               // norms, residuals, rope, quantisation: passes over T*h bf16 per layer
    // Communication: effective fraction of link bandwidth and a fixed latency per collective / kernel
    double nvlink_ll_eff = 0.72;
    double rdma_ll_eff = 0.84;
    double ll_latency_us = 20;
    double nvlink_normal_eff = 0.78;
    double rdma_normal_eff = 0.92;
    double normal_latency_us = 60;
    double allreduce_eff = 0.70;
    double allreduce_latency_us = 10;
    double allgather_eff = 0.75;
    // Mesh all-to-all (core/topology.cpp): fitted on seed 004's dispatch table on a Tenstorrent Galaxy
    double mesh_latency_us = 22.7;         // fixed cost of one dispatch / combine kernel
    double mesh_link_eff = 0.346;          // fraction of the link to one neighbour a token stream reaches
    double mesh_write_eff = 0.411;         // fraction of DRAM bandwidth writing received tokens
    // Host / runtime
    double prefill_overhead_ms = 2.0;
    double decode_overhead_ms = 1.0;
    double reserve_GB = 2.0;               // CUDA context, graphs, allocator slack
    double cublas_workspace_MB = 64;
    double nccl_buffer_MB = 256;
    double grouped_load_factor = 1.3;      // max tokens per expert over the mean, for workspace sizing
    double dequant_flops_per_weight = 32;  // W4A16: ALU work to dequantise one weight, in tensor-FLOP equivalents
    // The engines' fused-MoE kernels off the tables (core/step/ops_ffn.cpp): Triton's fused MoE (SGLang / vLLM
    // fused_moe.py) and FlashInfer's CUTLASS MoE reach their own fraction of the tensor peak and of HBM, and carry a
    // fixed time per layer (their 5-7 kernels' launches and tails), fitted on AIC's measured layers.
    double triton_moe_compute_eff = 0.39;
    double triton_moe_bw_eff = 0.81;
    double triton_moe_fixed_us = 26;
    double flashinfer_moe_compute_eff = 0.36;
    double flashinfer_moe_bw_eff = 0.70;
    double flashinfer_moe_fixed_us = 20;
};

bool parse_calibration(const nlohmann::json& j, Calibration& c, Issues& errors);
nlohmann::json calibration_to_json(const Calibration& c);

}  // namespace moe
