// tables.h — measured kernel-efficiency tables (bench_data/ CSVs), checked when loaded, looked up with
// interpolation between grid points; every lookup says where its number came from.
//
// Room: core/data/ — the measured kernel tables (bench_data/), their loading and lookups (GEMM, grouped GEMM, MoE
// layer, attention, collectives, GDN), the kernel FLOP/byte formulas (kernels.h) and the calibration constants.
// What each table's keys and latencies mean: bench_data/README.md. May include core/base/ and core/scenario/.
//
//   moe::Tables t;  moe::Issues errs;
//   t.load_csv("bench_data/gemm/h800/data.csv", text, errs);   // columns read by header name
//   const moe::Tables& builtin = moe::builtin_tables();         // every embedded bench_data file
//   moe::TableHit h = builtin.gemm("h800", m, k, n);            // h.util, h.source, h.table
//   moe::CommHit a = builtin.collective("h100", "all_reduce", "sglang", 8, 16384);  // a.latency_us, a.source
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/calibration.h"
#include "core/base/types.h"

namespace moe {

// Result of a lookup: the fraction of the roofline (max(flops/peak, bytes/bandwidth) on the GPU the table was measured
// on) that the kernel achieved there. The estimator applies it to the target GPU's roofline, which reproduces the
// measurement exactly on the same GPU and rescales it through the roofline on another.
struct TableHit {
    bool found = false;
    double util = 0;                     // achieved / roofline, in (0, 1]
    Source source = Source::analytical;  // measured (a grid point), interpolated, or transferred (another shape)
    const char* table = "";              // the file it came from
    // util is the kernel's compute efficiency only (prefill attention, whose loads overlap its matmuls): the
    // estimator takes max(compute / util, bytes / (bandwidth x hbm_bw_eff)) instead of roofline / util.
    bool compute_only = false;
};

// Result of a collective lookup: the measured latency itself (communication has no roofline to take a fraction of).
struct CommHit {
    bool found = false;
    double latency_us = 0;
    Source source = Source::analytical;  // measured (a grid point) or interpolated (between or past grid points)
    const char* table = "";
};

struct FamilyRef;

// The dense GEMM kernel a lookup wants (bench_data/README.md, "gemm"): its input format, and the engine whose kernel
// library runs it. AIConfigurator timed each engine's own kernels, and they differ by up to 2x on one shape (B200,
// 8192 x 8192 at M = 64: block-scaled FP8 in 31 us with SGLang's DeepGEMM, 20 us with TensorRT-LLM's).
enum class GemmFormat : std::uint8_t {
    fp8 = 1,        // FP8, one scale per tensor (or per channel): CUTLASS / cuBLASLt scaled_mm
    bf16 = 2,       // BF16 (cuBLAS)
    fp8_block = 3,  // FP8 with 128 x 128 weight-block and 1 x 128 activation-group scales (DeepGEMM)
    nvfp4 = 4,      // NVFP4 weights and activations (E2M1, an E4M3 scale per 16), Blackwell's FP4 tensor cores
};
enum class GemmEngine : std::uint8_t { any = 0, sglang, vllm, trtllm };  // any: a table of no engine (InferSim, BLIS)
struct GemmKernel {
    GemmFormat format = GemmFormat::bf16;
    GemmEngine engine = GemmEngine::any;
};
// Bytes per element of a format's activations and weights (with their scales), as the roofline counts them.
inline double gemm_format_bytes(GemmFormat f) {
    switch (f) {
        case GemmFormat::bf16: return 2.0;
        case GemmFormat::nvfp4: return 0.5 + 1.0 / 16.0;
        default: return 1.0;
    }
}

// Result of a measured MoE-layer lookup: the routed-expert layer's latency itself (bench_data/moe: one MoE layer's
// token permutation, gate/up GEMM, activation, down GEMM and weighted combine on one GPU).
struct MoeHit {
    bool found = false;
    double latency_us = 0;
    Source source = Source::analytical;  // measured (a grid point) or interpolated (between, below or past the points)
    const char* table = "";
    // DeepEP contiguous tables: the time each received token row adds (us), read off the table's own diagonals (see
    // MoeSeries::row_us); 0 for the other kernels.
    double row_us = 0;
};

// The kernel path a bench_data/moe series measured (bench_data/README.md, "moe"): the engine's fused MoE (SGLang's
// moe_perf: every rank handed the EP group's tokens, `sglang.csv`), or DeepEP's expert compute after its dispatch,
// contiguous for DeepEP normal (prefill, `*deepep_prefill.csv`) or masked for DeepEP low-latency (decode, CUDA graph,
// `*deepep_decode.csv`); or vLLM's FlashInfer-CUTLASS fused MoE (FlashInferExperts, the same setup as `fused`: every
// rank handed the group's tokens; `*flashinfer_cutlass.csv`); or SGLang's Triton fused MoE alone where the fused table
// holds another kernel's time for some keys (B200's `sglang_triton.csv`; on h100 / h200 the fused table is Triton's).
// `trtllm`: TensorRT-LLM's own fused MoE (files named trtllm_*.csv; the only kind named by a prefix, the others by
// their ends), which a TensorRT-LLM scenario reads before the `fused` tables. (B200's sglang.csv holds SGLang's calls
// of TensorRT-LLM-gen kernels for most keys: `fused`, as SGLang measured them.)
enum class MoeKernel : std::uint8_t { fused, deepep_contiguous, deepep_masked, flashinfer_cutlass, triton, trtllm };

// One (kernel, dtype, shape, layout) series of a bench_data/moe table: latency over the tokens entering the MoE layer.
struct MoeSeries {
    const FamilyRef* ref = nullptr;  // the GPU family it was measured on
    MoeKernel kernel = MoeKernel::fused;
    std::string path;
    Dtype dtype = Dtype::bf16;
    int hidden = 0, inter = 0, top_k = 0, experts = 0, tp = 0, ep = 0;
    std::vector<double> tokens, us;  // ascending tokens, latency in us
    std::vector<double> log_tokens, log_us;  // their logs, taken at load (the lookup's interpolation is log-log)
    // DeepEP contiguous tables (AIC's collector hands the timed GPU every token of the group as a received row): the
    // time per received row, the median over the file's neighbouring EP sizes of how much the latency rises per
    // group token at the same tokens per rank, i.e. at the same expert work (bench_data/README.md, "moe, DeepEP").
    double row_us = 0;
};

// Result of a measured Gated DeltaNet prefill lookup (bench_data/gdn: one sequence's causal conv and chunked delta
// rule kernels on one GPU).
struct GdnHit {
    bool found = false;
    double conv_us = 0, core_us = 0;
    Source source = Source::analytical;  // measured (a grid point) or interpolated
    const char* table = "";
};

// One (k heads, v heads, k dim, v dim) series of a bench_data/gdn table, heads per GPU.
struct GdnSeries {
    const FamilyRef* ref = nullptr;
    std::string path;
    int k_heads = 0, v_heads = 0, k_dim = 0, v_dim = 0;
    std::vector<double> tokens, conv_us, core_us;  // ascending tokens
};

class Tables {
public:
    // path: "bench_data/<kind>/[<phase>/]<family>/<file>.csv". Files of kinds the model does not use (dsa, and
    // gdn's per-phase H20 tables) are accepted and ignored. Rows are checked: numeric, finite, positive latency.
    bool load_csv(std::string_view path, std::string_view text, Issues& errors);
    std::size_t table_count() const { return tables_.size() + moe_.size() + gdn_.size(); }
    std::size_t row_count() const;
    bool has_family(std::string_view family) const;

    // Dense GEMM (M x K) * (K x N): exact (K, N) shape interpolated in log M, else the nearest measured shapes.
    // in_bytes (1 = FP8, 2 = BF16 inputs; 0 = any): tables of that input width are preferred when the family has
    // any; otherwise every table of the family competes, as before per-dtype tables existed.
    // in_bytes: 2 = bf16, 1 = block-scaled FP8 (the DeepGEMM tables' format), 0 = any format.
    TableHit gemm(std::string_view family, double m, int k, int n, int in_bytes = 0) const;
    TableHit gemm(std::string_view family, double m, int k, int n, GemmKernel kernel) const;
    // Collective latency on `gpus` GPUs of one NVLink domain for a buffer of `bytes` (all_reduce: the reduced
    // buffer; all_gather: the gathered output; reduce_scatter: the full input). op: all_reduce | all_gather |
    // reduce_scatter; impl: sglang | vllm | trtllm (the engine's own all-reduce inside a CUDA graph), sglang_eager |
    // vllm_eager (outside one), nccl. Interpolated in log latency over log bytes (and log GPU count between measured
    // counts); below the smallest message the smallest's latency, above the largest the largest's bandwidth. Not
    // found: GPU count outside the measured ones, or no such table.
    CommHit collective(std::string_view family, std::string_view op, std::string_view impl, int gpus, double bytes) const;
    // Routed experts (DeepGEMM grouped GEMM): masked layout (decode tables) or contiguous (prefill tables), by
    // model shape, interpolated in log EP size and log tokens per GPU.
    TableHit grouped_gemm(std::string_view family, bool masked, int num_experts, int top_k, int hidden,
                          int moe_intermediate, int ep, double tokens_per_gpu) const;
    // The measured token counts (in the query's tokens per GPU) of the table lines grouped_gemm() interpolates
    // between for this query, ascending; empty when no table covers it. The estimator evaluates the kernel at these
    // points to keep its time monotone in the batch (a measured point may be faster than a smaller one).
    std::vector<double> grouped_gemm_grid(std::string_view family, bool masked, int num_experts, int top_k, int hidden,
                                          int moe_intermediate, int ep) const;
    // Routed-expert MoE layer measured as a whole (bench_data/moe/<family>/*.csv, core/tables_moe.cpp): the exact
    // (kernel, dtype, hidden, moe intermediate of the whole model, top-k, routed experts, moe_tp, ep) key; `tokens` =
    // tokens entering the layer across the EP group (tokens per rank x ep). Interpolated log-log in tokens; below the
    // first point the first point's time, past the last point the last point's time scaled linearly in tokens. A
    // DeepEP kernel without a series at this ep takes the geometric mean of ep/2 and 2ep at the same tokens per rank
    // (interpolated). Not found: no such key.
    MoeHit moe_layer(std::string_view family, Dtype dtype, int hidden, int inter, int top_k, int experts, int tp, int ep,
                     double tokens, MoeKernel kernel = MoeKernel::fused) const;
    // Whether `family` has any MoE series measured with `kernel` (a table file of that kernel was loaded for it).
    bool has_moe_kernel(std::string_view family, MoeKernel kernel) const;
    // Gated DeltaNet prefill of one sequence of `tokens` (bench_data/gdn/<family>/*.csv, core/tables_gdn.cpp): the
    // exact (k heads, v heads per GPU, k dim, v dim) key, the conv and the chunked delta-rule kernels, each
    // interpolated log-log in tokens (below the first point its time, past the last linear in tokens).
    GdnHit gdn_prefill(std::string_view family, int k_heads, int v_heads, int k_dim, int v_dim, double tokens) const;
    // Attention cores, by heads per GPU.
    TableHit mha_decode(std::string_view family, int heads, int kv_heads, int head_dim, double batch, double kv_len,
                        bool fp8_kv) const;
    // Prefill attention: the tables time one causal sequence; a chunk of `seqs` prompts of `seq_len` tokens (window
    // 0 = full) on a GPU of `sms` SMs (0: the table's own) is costed with FlashAttention's tile schedule
    // (kernels::flash_tile_efficiency): the table's per-call timing overhead (fitted per table) and its own tile
    // efficiency are taken off each point, what remains is the kernel's rate per useful tile, interpolated in log
    // seq_len and put back under the target's tiles. On the table's own shape, one sequence and the table GPU's SM
    // count this is the table's latency less its per-call overhead.
    TableHit mha_prefill(std::string_view family, int heads, int kv_heads, int head_dim, double seq_len, double seqs = 1,
                         double window = 0, int sms = 0) const;
    // Another head count splits the table point into its compute and HBM sides; `fp8_kv`: the query's cache is FP8.
    TableHit mla_decode(std::string_view family, int heads, int kv_lora, int rope, double batch, double kv_len,
                        bool fp8_kv = false) const;
    TableHit mla_prefill(std::string_view family, int heads, int qk_nope, int rope, double seq_len, double seqs = 1,
                         double window = 0, int sms = 0) const;

    // Calibration constants (presets/calibration.json for the built-in tables).
    Calibration calibration;
    // Identifies this object's table set (not its calibration): a fresh value whenever the set changes (the MoE-layer
    // series included), never 0. For
    // caches of lookups kept across calls (per thread), with the address of the object.
    std::uint64_t generation() const { return gen_; }

    struct Table;
    // gemm() in two steps, for a caller that keeps a shape's pick across queries at other m (the estimator, across
    // the batch): gemm_pick() finds what a (family, k, n, kernel) shape reads, gemm_at() interpolates it at m.
    // gemm(family, m, k, n, kernel) is gemm_at(pick, m, k, n) of that pick. The pick takes the kernel's format from
    // its engine's table, else from another engine's, else a related format's (FP8 per tensor and block-scaled stand
    // in for each other; NVFP4 borrows FP8's, as before NVFP4 tables existed), else any table of the family. A pick holds while generation() and
    // calibration stay the same. Not found (best == nullptr): gemm() finds no table either.
    struct GemmPick {
        const Table* best = nullptr;
        double dist = 0;
        double ovh = 0;              // the per-call overhead taken off the table's latencies, in seconds
        int line = -1;               // the line Table::at(1, m) reads, -1 if none sits at 1 exactly
        std::vector<double> utils;   // that line's points' efficiencies at ovh
        // gemm_at's transfer ratio from the table's shape to (mem_k, any n) where the target is memory-bound: it
        // does not depend on m (kernels::gemm_tile_efficiency_by); 0 = not known
        int mem_k = 0;
        double mem_ratio = 0;
        // A shape inside a table family's (k, n) grid (AIConfigurator's GEMM tables measure every k x n of their
        // axes): the measured shapes at the rectangle's corners, (k0, n0), (k0, n1), (k1, n0), (k1, n1), and their
        // bilinear weights; gemm_at reads each corner's latency at m and interpolates it. No corners: the nearest shape
        // transferred (best).
        const Table* corner[4] = {nullptr, nullptr, nullptr, nullptr};
        double corner_w[4] = {0, 0, 0, 0};
    };
    // Fills `out` (its vector's storage reused).
    void gemm_pick(std::string_view family, int k, int n, GemmKernel kernel, GemmPick& out) const;
    TableHit gemm_at(const GemmPick& pick, double m, int k, int n) const;
    Tables();
    ~Tables();
    Tables(const Tables&);
    Tables& operator=(const Tables&);

private:
    static constexpr int kKinds = 8;     // table kinds (gemm, grouped x2, mha x2, mla x2, comm)
    static constexpr int kFamilySlots = 8;  // >= the number of known GPU families (family_ref)
    std::vector<Table*> tables_;
    // Identifies this object's table set for the per-thread lookup caches (tables.cpp): a new value from a global
    // counter whenever the set changes (construction, copy, assignment, add_table), so a cached pick never outlives it.
    std::uint64_t gen_ = 0;
    static std::uint64_t next_gen();  // the next value of that global counter (tables.cpp)
    // tables_ by kind and GPU family: each lookup walks one short list
    std::vector<const Table*> buckets_[kKinds][kFamilySlots];
    // per family: the best HBM streaming fraction its decode-attention (MHA) tables reach (the best points are the
    // memory-bound ones); used to split an MLA decode point into its compute and memory sides
    double stream_util_[kFamilySlots] = {};
    // bench_data/moe series, sorted by (family, kernel, dtype, hidden, inter, top_k, experts, tp, ep) (tables_moe.cpp)
    std::vector<MoeSeries> moe_;
    // per family: a bit (1 << MoeKernel) for each kernel it has a series of, set as the series load (has_moe_kernel)
    std::uint8_t moe_kernels_[kFamilySlots] = {};
    bool load_moe_csv(const std::string& path, const FamilyRef& ref, std::string_view text, Issues& errors);
    // bench_data/gdn/<family>/*.csv series, sorted by (family, k heads, v heads, k dim, v dim) (tables_gdn.cpp)
    std::vector<GdnSeries> gdn_;
    bool load_gdn_csv(const std::string& path, const FamilyRef& ref, std::string_view text, Issues& errors);
    void add_table(Table* t);
    const std::vector<const Table*>* bucket(int kind, std::string_view family) const;
    GemmPick& gemm_slot(std::string_view family, int k, int n, int format, int engine) const;  // the per-thread pick (tables.cpp)
};

// The reference GPU each family's tables were measured on (used to turn latencies into roofline fractions).
struct FamilyRef {
    const char* family;
    double tflops_bf16, tflops_fp8, hbm_GBps;
    int sm_count;
    double sfu_tflops;   // special-function (exp) throughput, for the attention head-dim transfer
    double nvlink_GBps;  // per GPU, one direction: the link the family's collective tables were measured on
};
// nullptr for an unknown family. Known: h20, h800, h100, h200, b200, gb200.
const FamilyRef* family_ref(std::string_view family);

// Every embedded bench_data CSV plus presets/calibration.json.
const Tables& builtin_tables();

}  // namespace moe
