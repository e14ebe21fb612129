#include "core/scenario/gpu_spec.h"

#include "core/base/json_util.h"

namespace moe {
using namespace detail;

// GpuSpec::peak_tflops and compute_dtype are defined inline in gpu_spec.h.

namespace {
const char* const kTopologies[] = {"switch", "rack", "mesh", "unified", nullptr};
const char* const kWraps[] = {"line", "ring", nullptr};
}  // namespace

const char* topology_name(Topology t) { return kTopologies[int(t)]; }
const char* const* topology_choices() { return kTopologies; }

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
        {"mesh_rows", "chips", 1, 1024, "Mesh topology: chips along the dispatch axis (the attention-DP rows of seed 004)."},
        {"mesh_cols", "chips", 1, 1024, "Mesh topology: chips along the other axis (attention TP in seed 004)."},
        {"links_per_chip", "links", 0, 1024, "Mesh topology: point-to-point links of one chip, split over its neighbours (Wormhole: 16 x 100 GbE)."},
        {"link_bandwidth_GBps", "GB/s", 0, 1e7, "Mesh topology: one link, one direction (100 GbE = 12.5 GB/s)."},
        {"matmul_efficiency", "", 0, 1, "Fraction of peak a GEMM reaches on this hardware when no measured table covers it; 0: the calibration's default (fitted on NVIDIA kernels)."},
        {"gemm_efficiency", "", 0, 1, "Fraction of the dense peak a GEMM reaches on this GPU when no measured table covers it (the fallback's compute side): the plateau of the GPU's own measured large-M GEMMs (scripts/derive_gpu_eff.py); 0: the calibration's gemm_compute_eff. matmul_efficiency, when set, takes precedence."},
        {"gemm_hbm_efficiency", "", 0, 1, "Fraction of HBM bandwidth a GEMM streams its weights at on this GPU when no measured table covers it (the fallback's memory side): the GPU's own measured small-M GEMMs' bytes / time (scripts/derive_gpu_eff.py); 0: the calibration's hbm_bw_eff."},
        {"grouped_gemm_efficiency", "", 0, 1, "Fraction of the peak a grouped GEMM (the routed experts) reaches on this GPU at full M tiles when no measured table covers it (the expert fallback's compute side): the plateau of the GPU's own measured contiguous grouped GEMMs (scripts/derive_gpu_eff_fallbacks.py); 0: the calibration's grouped_compute_eff (also for W4A16 experts). matmul_efficiency, when set, takes precedence."},
        {"attn_efficiency", "", 0, 1, "Fraction of the BF16 peak attention reaches on this GPU when no measured table covers it (the attention fallback's compute side): the plateau of the GPU's own measured long-prompt prefill attention (scripts/derive_gpu_eff_fallbacks.py); 0: the calibration's attn_prefill_compute_eff."},
        {"tile_tokens", "tokens", 1, 4096, "Compute granularity: each expert's token count is rounded up to a multiple of this (32 on Tenstorrent)."},
        {"host_memory_bytes", "bytes", 0, 1e15, "Memory tier below HBM (CPU DRAM) that offloaded experts live in; 0: none."},
        {"host_bandwidth_GBps", "GB/s", 0, 1e7, "Host-to-device bandwidth, one direction (PCIe, NVLink-C2C; unified memory: a copy inside it)."},
        {"ssd_bandwidth_GBps", "GB/s", 0, 1e7, "SSD read bandwidth for experts offloaded to SSD; 0: unknown."},
        {"gpu_hour_usd", "USD/h", 0, 1e6, "An example on-demand price of one GPU-hour (presets cite a public price page and its date; 0: none). cost.gpu_hour_usd overrides it."},
        {"board_power_w", "W", 0, 1e5, "Board power limit (TDP / total board power) from the datasheet; 0: unknown (no power or energy outputs)."},
        {"idle_power_w", "W", 0, 1e5, "Power of the GPU held by a serving engine with no kernel running (clocks up, CUDA context); 0: board_power_w / 7."},
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
                                        "tables_fallback", "source", "description", "base",
                                        "topology", "mesh_rows", "mesh_cols", "mesh_wrap", "links_per_chip",
                                        "link_bandwidth_GBps", "tile_tokens", "matmul_efficiency", "gemm_efficiency",
                                        "gemm_hbm_efficiency", "grouped_gemm_efficiency", "attn_efficiency",
                                        "host_memory_bytes",
                                        "host_bandwidth_GBps", "ssd_bandwidth_GBps", "gpu_hour_usd", "board_power_w",
                                        "idle_power_w"};
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
    auto choice = [&](const char* key, const char* const* names, const char* def) {
        const std::string v = read_str(j, key, def);
        for (int i = 0; names[i]; ++i)
            if (v == names[i]) return i;
        std::string list;
        for (int i = 0; names[i]; ++i) list += std::string(i ? ", " : "") + names[i];
        errors.push_back({path + "." + key, "must be one of " + list + ", got '" + shown_text(v) + "'"});
        return 0;
    };
    g.topology = Topology(choice("topology", kTopologies, "switch"));
    g.mesh_ring = choice("mesh_wrap", kWraps, "line") == 1;
    g.mesh_rows = read_int(j, "mesh_rows", path, errors, 1, false, 1, 1024);
    g.mesh_cols = read_int(j, "mesh_cols", path, errors, 1, false, 1, 1024);
    g.links_per_chip = read_int(j, "links_per_chip", path, errors, 0, false, 0, 1024);
    g.link_bandwidth_GBps = read_num(j, "link_bandwidth_GBps", path, errors, 0, false, 0, 1e7);
    g.tile_tokens = read_int(j, "tile_tokens", path, errors, 1, false, 1, 4096);
    g.matmul_efficiency = read_num(j, "matmul_efficiency", path, errors, 0, false, 0, 1);
    g.gemm_efficiency = read_num(j, "gemm_efficiency", path, errors, 0, false, 0, 1);
    g.gemm_hbm_efficiency = read_num(j, "gemm_hbm_efficiency", path, errors, 0, false, 0, 1);
    g.grouped_gemm_efficiency = read_num(j, "grouped_gemm_efficiency", path, errors, 0, false, 0, 1);
    g.attn_efficiency = read_num(j, "attn_efficiency", path, errors, 0, false, 0, 1);
    g.host_memory_bytes = read_num(j, "host_memory_bytes", path, errors, 0, false, 0, 1e15);
    g.host_bandwidth_GBps = read_num(j, "host_bandwidth_GBps", path, errors, 0, false, 0, 1e7);
    g.ssd_bandwidth_GBps = read_num(j, "ssd_bandwidth_GBps", path, errors, 0, false, 0, 1e7);
    g.gpu_hour_usd = read_num(j, "gpu_hour_usd", path, errors, 0, false, 0, 1e6);
    g.board_power_w = read_num(j, "board_power_w", path, errors, 0, false, 0, 1e5);
    g.idle_power_w = read_num(j, "idle_power_w", path, errors, 0, false, 0, 1e5);
    if (g.board_power_w > 0 && g.idle_power_w >= g.board_power_w)
        errors.push_back({path + ".idle_power_w", "must be below board_power_w (" + std::to_string(int(g.board_power_w)) + " W)"});
    if (g.topology == Topology::mesh) {
        // the mesh is the whole NVLink-like domain: no RDMA inside it
        if (!(g.link_bandwidth_GBps > 0) || g.links_per_chip < 1)
            errors.push_back({path + ".link_bandwidth_GBps", "a mesh needs links_per_chip >= 1 and link_bandwidth_GBps > 0"});
        g.gpus_per_node = g.mesh_chips();
    }
    if (g.topology == Topology::rack && g.gpus_per_node > 72)
        errors.push_back({path + ".gpus_per_node", std::to_string(g.gpus_per_node) + " exceeds 72: a rack is one NVLink domain of at most 72 GPUs"});
    if (g.topology == Topology::unified) g.gpus_per_node = 1;
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
    j["topology"] = topology_name(g.topology);
    j["mesh_rows"] = g.mesh_rows;
    j["mesh_cols"] = g.mesh_cols;
    j["mesh_wrap"] = g.mesh_ring ? "ring" : "line";
    j["links_per_chip"] = g.links_per_chip;
    j["link_bandwidth_GBps"] = g.link_bandwidth_GBps;
    j["tile_tokens"] = g.tile_tokens;
    j["matmul_efficiency"] = g.matmul_efficiency;
    j["gemm_efficiency"] = g.gemm_efficiency;
    j["gemm_hbm_efficiency"] = g.gemm_hbm_efficiency;
    j["grouped_gemm_efficiency"] = g.grouped_gemm_efficiency;
    j["attn_efficiency"] = g.attn_efficiency;
    j["host_memory_bytes"] = g.host_memory_bytes;
    j["host_bandwidth_GBps"] = g.host_bandwidth_GBps;
    j["ssd_bandwidth_GBps"] = g.ssd_bandwidth_GBps;
    j["gpu_hour_usd"] = g.gpu_hour_usd;
    j["board_power_w"] = g.board_power_w;
    j["idle_power_w"] = g.idle_power_w;
    return j;
}

}  // namespace moe
