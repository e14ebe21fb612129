// gpu_spec.h — one accelerator, from vendor datasheets (dense peaks, no sparsity). SI units in the names.
//
//   moe::GpuSpec g = moe::parse_gpu_spec(json, "hardware", errs);
//   g.peak_tflops(moe::Dtype::fp8)
#pragma once
#include <nlohmann/json.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "core/base/types.h"

namespace moe {

// How the devices of one deployment are connected (DESIGN §10):
//   switch   every GPU of a node on one NVLink switch, RDMA between nodes (the v1 model)
//   rack     one NVLink domain of gpus_per_node GPUs, up to 72 (GB200/GB300 NVL72): wide EP inside pays no RDMA
//   mesh     a 2D mesh of mesh_rows x mesh_cols chips joined by links_per_chip point-to-point links
//            (Tenstorrent Galaxy, seed 004): all-to-all costed by hops along lines or rings (core/topology.cpp)
//   unified  one chip whose CPU and GPU share memory (Apple silicon, seed 003)
enum class Topology : std::uint8_t { switch_, rack, mesh, unified };
const char* topology_name(Topology t);
const char* const* topology_choices();  // null-terminated, in enum order

struct GpuSpec {
    std::string id;                     // preset id, e.g. "h800"
    std::string name;                   // display name
    std::string arch;                   // "ampere", "hopper", "blackwell", "rubin", "cdna3", "cdna4", ...
    double dense_tflops_bf16 = 0;
    double dense_tflops_fp8 = 0;        // 0: no FP8 tensor cores (A100): fp8 runs as bf16
    double dense_tflops_fp4 = 0;        // 0: no native FP4 (Hopper pre-expands FP4 checkpoints to FP8)
    double hbm_bandwidth_GBps = 0;
    double hbm_capacity_GiB = 0;        // vendor "80 GB" parts are 80 GiB
    double nvlink_bandwidth_GBps = 0;   // per GPU, one direction
    double rdma_bandwidth_GBps = 0;     // per GPU NIC, one direction
    int gpus_per_node = 8;
    int sm_count = 132;
    Topology topology = Topology::switch_;
    int mesh_rows = 1, mesh_cols = 1;   // mesh: chips along the dispatch axis (rows) and the TP axis (columns)
    bool mesh_ring = false;             // mesh: the axes wrap around (ring / torus) rather than end (line)
    int links_per_chip = 0;             // mesh: point-to-point links of one chip, shared by its 4 neighbours
    double link_bandwidth_GBps = 0;     // mesh: one link, one direction (100 GbE = 12.5 GB/s)
    double matmul_efficiency = 0;       // fraction of peak a matmul reaches without a measured table (0: calibration's)
    // The dense GEMM fallback's two efficiencies on this GPU, from its own measured GEMM table (presets cite
    // scripts/derive_gpu_eff.py; 0: calibration.gemm_compute_eff / hbm_bw_eff). matmul_efficiency takes precedence.
    double gemm_efficiency = 0;         // fraction of the dense peak (compute side)
    double gemm_hbm_efficiency = 0;     // fraction of hbm_bandwidth_GBps a GEMM streams its weights at (memory side)
    // The grouped-GEMM (routed experts) and attention fallbacks' compute fractions on this GPU, from its own measured
    // grouped-GEMM and prefill-attention tables (presets cite scripts/derive_gpu_eff_fallbacks.py; 0: the calibration's
    // grouped_compute_eff / attn_prefill_compute_eff). matmul_efficiency takes precedence over the grouped one.
    double grouped_gemm_efficiency = 0;  // fraction of the peak a grouped GEMM reaches at full M tiles
    double attn_efficiency = 0;  // fraction of the BF16 peak an attention kernel's compute side reaches
    int tile_tokens = 1;                // compute granularity: an expert's token count is rounded up to this (32 on Tensix)
    double host_memory_bytes = 0;       // memory tier below HBM (CPU DRAM; 0: none)
    double host_bandwidth_GBps = 0;     // host -> device, one direction (PCIe / C2C; unified: a copy in shared memory)
    double ssd_bandwidth_GBps = 0;      // SSD read bandwidth (0: unknown)
    double gpu_hour_usd = 0;            // an example on-demand price of one GPU-hour, USD (0: none given); presets
                                        // cite where and when (presets/hardware/README.md)
    double board_power_w = 0;           // board power limit (TDP / TBP), W (0: unknown: no power or energy outputs)
    double idle_power_w = 0;            // power of the GPU held by a running engine with no kernel running, W
                                        // (0: board_power_w / 7, docs/model.md "Power and energy")
    std::string tables;                 // bench_data family measured on this GPU ("h800", "h20", "h100"), or ""
    std::string tables_fallback;        // family to borrow from when a table is missing (same arch preferred)

    int mesh_chips() const { return mesh_rows * mesh_cols; }
    // The dense GEMM fallback's efficiencies on this GPU, given the calibration's defaults.
    double gemm_compute_eff_or(double calibration_default) const {
        return matmul_efficiency > 0 ? matmul_efficiency : gemm_efficiency > 0 ? gemm_efficiency : calibration_default;
    }
    double gemm_hbm_eff_or(double calibration_default) const {
        return gemm_hbm_efficiency > 0 ? gemm_hbm_efficiency : calibration_default;
    }
    // The grouped-GEMM and attention fallbacks' compute fractions on this GPU, given the calibration's defaults.
    double grouped_compute_eff_or(double calibration_default) const {
        return matmul_efficiency > 0         ? matmul_efficiency
               : grouped_gemm_efficiency > 0 ? grouped_gemm_efficiency
                                             : calibration_default;
    }
    double attn_compute_eff_or(double calibration_default) const {
        return attn_efficiency > 0 ? attn_efficiency : calibration_default;
    }
    // AMD Instinct platforms (CDNA on a switch-topology preset): the GPUs of a node are a fully connected Infinity Fabric
    // (xGMI) mesh, each GPU with one link to each of its gpus_per_node - 1 peers (MI300X / MI325X / MI355X OAM
    // platforms: 7 links; ROCm blog "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X"), so
    // traffic to one peer has that one link, not the GPU's aggregate nvlink_bandwidth_GBps.
    bool xgmi_mesh() const { return topology == Topology::switch_ && arch.rfind("cdna", 0) == 0 && gpus_per_node > 1; }
    // One xGMI link, one direction: the GPU's aggregate over its gpus_per_node - 1 links (MI355X 537.6 / 7 = 76.8 GB/s).
    double xgmi_link_GBps() const { return nvlink_bandwidth_GBps / std::max(1, gpus_per_node - 1); }
    // Bandwidth from a chip to one mesh neighbour, one direction: its links split over the 4 directions of a 2D mesh
    // (2 on a 1-row mesh).
    double neighbour_GBps() const {
        const int dirs = (mesh_rows > 1 ? 2 : 0) + (mesh_cols > 1 ? 2 : 0);
        return links_per_chip * link_bandwidth_GBps / std::max(1, dirs);
    }
    // Peak dense TFLOPS for GEMMs computed in `d` (fp8 falls back to bf16 where unsupported, 4-bit to fp8).
    // (Defined here, inline: the step model asks for every operator.)
    double peak_tflops(Dtype d) const {
        switch (compute_dtype(d)) {
            case Dtype::fp8: return dense_tflops_fp8 > 0 ? dense_tflops_fp8 : dense_tflops_bf16;
            case Dtype::mxfp4:
            case Dtype::nvfp4: return dense_tflops_fp4 > 0 ? dense_tflops_fp4 : peak_tflops(Dtype::fp8);
            case Dtype::fp32: return dense_tflops_bf16 / 2;  // not a GEMM dtype we serve in; a conservative guess
            default: return dense_tflops_bf16;
        }
    }
    // The format the tensor cores actually compute in for weights stored as `d` (Hopper: fp4 -> fp8).
    Dtype compute_dtype(Dtype d) const {
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
