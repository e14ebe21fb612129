// estimate_detail.h — the step model's internals, shared by the files that build it (not a public API).
//
// The model (DESIGN §5) is split by what it computes, one file each:
//   op_time.cpp        the one function that turns an operator record into time (roofline / tables / fallback)
//   ops_attention.cpp  attention projections and the attention core of one layer; Gated DeltaNet layers
//   ops_ffn.cpp        dense FFN, shared experts, router and routed experts of one layer
//   comm.cpp           TP all-reduce, all-gather, DeepEP normal / low-latency, pplx
//   topology.cpp       all-to-all and all-reduce on a mesh of chips (public part in topology.h)
//   offload.cpp        experts streamed from the host tier / SSD into HBM
//   step.cpp           one layer under the overlap policy, and one forward step (prefill chunk or decode step)
//   memory.cpp         memory per GPU and the largest batch / context that fit
//   power.cpp          board power and energy per token of a step from its records (public part in power.h)
//   estimate.cpp       estimate(): resolves the scenario into a Ctx and runs the above
//   mixed.cpp          a step over requests of mixed lengths (each its own attention; prefill buckets)
#pragma once
#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "core/step/estimate.h"
#include "core/data/kernels.h"

namespace moe::detail {

constexpr int kDtypeCount = int(Dtype::int4) + 1;

inline double bytes_with_scales(Dtype d) { return dtype_bytes(d) + dtype_scale_bytes_per_elem(d); }

struct Ctx {
    const Scenario& s;
    const Tables& t;
    const Calibration& cal;
    const ModelSpec& m;
    const GpuSpec& g;
    Estimate& e;
    // storage formats (after the GPU's capability matrix and precision.fp4_on_hopper: FP4 on Hopper is kept packed
    // and dequantised in the GEMM, or pre-expanded to FP8)
    Dtype w_attn, w_exp, w_shared, w_embed, kv, disp, comb;
    double bw;          // bytes/s
    int tp, dp, ep, pp, moe_tp, gpn;
    double kv_elem_bytes = 2;  // bytes per cached KV element: dtype_bytes(kv), or an FP8 MLA cache's mix (mla_kv_bytes)
    int cp = 1;         // context-parallel ranks inside the attention TP group (heads split over tp / cp)
    double qkv_in = 0;  // input width of a GQA / MHA layer's q, k, v projection; 0: hidden (EAGLE-3's head: 2h)
    double sm_share = 1.0;  // fraction of SMs left to compute while DeepEP normal kernels run
    // Prefill: the share of the dp attention ranks that carry tokens (workload.prefill_busy_ranks / dp); the routed
    // experts see that share of the EP group's tokens. The dispatch and combine stay at a full rank's tokens: the
    // busy rank sends its tokens to every peer, and its own links bound the exchange.
    double prefill_busy_share = 1.0;
    // families to look tables up in, in order of preference
    const char* families[4] = {nullptr, nullptr, nullptr, nullptr};
    std::string_view family_views[4] = {};  // the same names with their lengths (the table lookups take string_views)
    bool own_tables = false;  // families[0] is the GPU's own (measured on it)
    // whose dense GEMM kernels run (runtime.engine; ideal takes SGLang's) and whether FP8 weights are block-scaled
    // (precision.fp8_scaling): together with the format they pick the GEMM table (Tables::gemm_pick)
    GemmEngine gemm_engine = GemmEngine::sglang;
    bool fp8_block = false;
    // gemm_op has compared this estimate's GEMM inputs other than the shape (table set, calibration, families, GPU
    // peaks) with those its per-thread results were computed under (op_time.cpp), and emptied them if they differ.
    mutable bool gemm_env_checked = false;
    // build_layer has kept the last layer's attention-side records in this estimate (a per-thread slot, step.cpp):
    // another layer group with the same attention at the same shape (DeepSeek-V3's dense and MoE layers) copies them.
    mutable bool attn_memo_valid = false;
    // ... and the rest of the last layer (step.cpp, build_layer): a group that differs only in its attention copies it.
    mutable bool ffn_memo_valid = false;
    // whether a later layer group of this phase can use what the group being built would keep (run_phase sets them):
    // a group keeps its records only then
    mutable bool keep_attn = true, keep_ffn = true;
    // run_phase has grouped the model's layers by kind for this estimate (a per-thread list, step.cpp): the second
    // phase reuses the groups.
    mutable bool layer_groups_done = false;
    // per Dtype (index int(d)): the format the GPU's tensor cores compute it in and their peak in FLOP/s
    // (GpuSpec::compute_dtype, peak_tflops x 1e12), taken once per estimate for time_op
    Dtype compute_of_dtype[kDtypeCount] = {};
    double peak_flops[kDtypeCount] = {};
    void set_peaks() {
        for (int i = 0; i < kDtypeCount; ++i) {
            compute_of_dtype[i] = g.compute_dtype(Dtype(i));
            peak_flops[i] = g.peak_tflops(Dtype(i)) * 1e12;
        }
    }
    // expert_ops has written a routed-experts record priced by the analytical fallback (estimate() warns of it)
    mutable bool analytical_experts = false;
    // the last all-reduce record this estimate built (allreduce_op): it depends on the phase, the tokens and the group
    // size alone, and a layer asks for the same one up to three times (after attention, after the dense FFN or the
    // tensor-parallel experts)
    struct AllreduceMemo {
        bool valid = false;
        Phase ph = Phase::decode;
        double T = 0;
        int n = 0;
        OpRecord op;
    };
    mutable AllreduceMemo last_allreduce = {};
    // sum over the estimate's records of (x - x) for their time_us, flops and exposed_us (run_phase): 0 while every
    // one is finite, NaN otherwise (estimate() checks it instead of another pass over the records)
    mutable double records_nonfinite = 0;
};

// The stored format of the MTP module's embedding/hidden projection (eh_proj, 2h x h): the checkpoint's 16-bit dtype,
// as DeepSeek-V3 ships it (model.layers.61.eh_proj.weight: BF16, 205,520,896 B, no weight_scale_inv; SGLang's and
// vLLM's NextN modules load it as a plain replicated nn.Linear); DeepSeek-V4 quantises its e_proj / h_proj like its
// attention (mtp.0.e_proj.scale in its checkpoint).
inline Dtype mtp_proj_dtype(const Ctx& c) { return c.m.hc_mult > 1 ? c.w_attn : c.w_embed; }
// An EAGLE draft head's fc (the fusion of the token embedding and the target's features) is stored in the draft
// checkpoint's dtype, BF16 in the public heads (e.g. SpecForge's qwen3-32b / gpt-oss-120b EAGLE-3 configs:
// torch_dtype bfloat16), not in the target's attention format.
inline constexpr Dtype kEagleFcDtype = Dtype::bf16;

inline bool native_fp4(const GpuSpec& g, Dtype d);
inline Dtype stored(const GpuSpec& g, Dtype d, Fp4OnHopper mode);

// The formats a draft module's weights are stored in (attention, routed experts, FFN / shared experts): an EAGLE head
// is a checkpoint of its own, BF16 as the public heads ship (kEagleFcDtype); the MTP module is in the target's
// formats unless the checkpoint's exclusion list names it (`mtp*` in Qwen3.5 / 3.6-NVFP4 and DeepSeek-V4-NVFP4,
// `model.layers.78*` in GLM-5.1-NVFP4: ModelSpec::quant_excluded.mtp), then in the model's dtype. A format the
// scenario sets (not auto) applies to the draft as to the target.
struct DraftFormats {
    Dtype attn, exp, ffn;
};
inline DraftFormats draft_formats(const Ctx& c, bool eagle) {
    if (!eagle && !c.m.quant_excluded.mtp) return {c.w_attn, c.w_exp, c.w_shared};
    const PrecisionConfig& p = c.s.precision;
    const Dtype own = eagle ? kEagleFcDtype : (c.m.dtype == Dtype::fp32 ? Dtype::bf16 : c.m.dtype);
    auto pick_one = [&](const DtypeSel& part, Dtype as_target) {
        return part.is_auto && p.weights.is_auto ? stored(c.g, own, p.fp4_on_hopper) : as_target;
    };
    return {pick_one(p.attention, c.w_attn), pick_one(p.experts, c.w_exp), pick_one(p.shared_experts, c.w_shared)};
}

inline bool native_fp4(const GpuSpec& g, Dtype d) { return (d == Dtype::mxfp4 || d == Dtype::nvfp4) && g.dense_tflops_fp4 > 0; }

inline Dtype stored(const GpuSpec& g, Dtype d, Fp4OnHopper mode) {
    // Seed 002 §6's "pre-expand" row: a GPU without FP4 MMA stores FP4 checkpoints as FP8 (BF16 without FP8 cores):
    // memory doubles. The default keeps them packed (dequant, W4A16), as the engines do.
    if ((d == Dtype::mxfp4 || d == Dtype::nvfp4) && !native_fp4(g, d) && mode == Fp4OnHopper::expand)
        return g.dense_tflops_fp8 > 0 ? Dtype::fp8 : Dtype::bf16;
    return d;
}

// The format the tensor cores run weights stored as `w` in: packed 4-bit weights without a native 4-bit MMA are
// dequantised to BF16 inside the GEMM (W4A16: Marlin, triton matmul_ogs); the rest follows the GPU.
// precision.fp4_compute = fp8: FP4 weights on a GPU with FP4 tensor cores cast to FP8 and multiplied at the FP8 rate
// (seed 002 §6, 'B200_current': fp4_cast_fp8), still stored (and read) in 4 bits.
inline Dtype compute_of(const GpuSpec& g, Dtype w, Fp4Compute mode = Fp4Compute::native) {
    if (is_fp4_like(w) && !native_fp4(g, w)) return Dtype::bf16;
    if (is_fp4_like(w) && mode == Fp4Compute::fp8 && g.dense_tflops_fp8 > 0) return Dtype::fp8;
    return g.compute_dtype(w);
}
// Weights stored packed in 4 bits and multiplied in a wider format pay a dequantisation per element per M tile.
inline bool dequantised(const GpuSpec& g, Dtype w) { return is_fp4_like(w) && !native_fp4(g, w); }
// Rows of the activation each dequantised weight tile serves before it is dequantised again (Marlin's 64-row slices
// of the batch; Frantar et al. 2024, arXiv:2408.11743, §4).
constexpr double kDequantRowsPerTile = 64.0;

// Share of the EP group's tokens that enter one rank's expert kernel (at least one of their top_k picks on its
// experts, uniform routing), times the busiest rank's routing.imbalance: 1 without expert parallelism.
inline double moe_rank_token_share(const Ctx& c) {
    if (!c.m.is_moe()) return 0;
    const double local = double(c.m.num_experts + c.s.routing.redundant_experts) / c.ep;
    const double p_hit = 1.0 - std::pow(std::max(0.0, 1.0 - local / c.m.num_experts), double(c.m.top_k));
    return std::min(1.0, p_hit) * c.s.routing.imbalance;
}

inline Dtype pick(const DtypeSel& sel, Dtype fallback) { return sel.is_auto ? fallback : sel.value; }

// Looks a kernel up in the GPU's own tables, then its fallback family, then any family with data.
template <class F>
TableHit lookup(const Ctx& c, F&& f) {
    for (int i = 0; i < 4 && c.families[i]; ++i) {
        TableHit h = f(c.family_views[i]);
        if (h.found) {
            if (!(i == 0 && c.own_tables)) h.source = Source::transferred;
            return h;
        }
    }
    return {};
}

// Records appended to a vector the list does not own, from index `first` on: a layer's attention-side records go
// straight into the estimate's ops, where they come first among the layer's records (no copy out of a scratch list).
struct OpList {
    std::vector<OpRecord>* v = nullptr;
    std::size_t first = 0;
    void push_back(const OpRecord& o) { v->push_back(o); }
    OpRecord* begin() const { return v->data() + first; }
    OpRecord* end() const { return v->data() + v->size(); }
};

struct LayerOps {
    OpList pre;                  // attention side: runs on the attention rank (before dispatch); in the estimate's ops
    std::vector<OpRecord> post;  // FFN / experts side (between dispatch and combine)
    std::vector<OpRecord> shared;  // shared experts: before the dispatch, or under it (runtime.shared_expert_overlap)
    double dispatch_us = 0, combine_us = 0, allreduce_us = 0;
    std::vector<OpRecord> comm;  // records of the communication ops
    double stream_us = 0;        // experts streamed in from the host tier (offload.cpp)
    std::vector<OpRecord> stream;
    LayerOps() {
        post.reserve(4);
        comm.reserve(4);
    }
    // Empty again, keeping the vectors' capacity (layer_time reuses one LayerOps per thread: no allocation per layer).
    void clear() {
        pre = OpList{};
        post.clear();
        shared.clear();
        comm.clear();
        stream.clear();
        dispatch_us = combine_us = allreduce_us = stream_us = 0;
    }
};

template <class List>
double sum_us(const List& v) {
    double s = 0;
    for (const OpRecord& o : v) s += o.time_us;
    return s;
}

struct PhaseShape {
    Phase phase;
    double T;         // tokens in this forward on the attention rank
    double batch;     // sequences (decode) / prompts in the chunk (prefill)
    double ctx;       // decode: KV length; prefill: prompt length
    double cached = 0;  // prefill: tokens of each prompt already in the prefix cache (attended, not computed)
};

struct LayerTime {
    double exposed_us = 0;   // per layer, after overlap
    double compute_us = 0;   // per layer, both micro-batches
    double comm_us = 0;
    double stream_exposed_us = 0;  // expert streaming not hidden by prefetch
    // per-layer records (both micro-batches folded: times x micro-batches), appended by layer_time() to the vector it
    // was given (the estimate's ops): [begin, end) there
    std::size_t begin = 0, end = 0;
};

// op_time.cpp
// dequant_elems: weight elements dequantised by the kernel (counted once per M tile), a compute-side term priced at
// calibration.dequant_flops_per_weight tensor-FLOP equivalents each.
void time_op(const Ctx& c, OpRecord& op, Dtype compute, const TableHit& hit, double eff_compute, double eff_bw,
             double dequant_elems = 0);
OpRecord make_op(const char* name, Phase ph, double flops, double wbytes, double abytes);
OpRecord gemm_op(const Ctx& c, const char* name, Phase ph, double M, double K, double N, Dtype w);
OpRecord memory_op(const Ctx& c, const char* name, Phase ph, double bytes);
// ops_attention.cpp
void attention_ops(const Ctx& c, const PhaseShape& ps, const LayerDesc& ld, LayerOps& L);
void linear_attention_ops(const Ctx& c, const PhaseShape& ps, LayerOps& L);  // a Gated DeltaNet layer
void mamba2_ops(const Ctx& c, const PhaseShape& ps, LayerOps& L);            // a Mamba-2 mixer
// ops_ffn.cpp
void dense_ffn_ops(const Ctx& c, Phase ph, double T, double inter, const char* up_name, const char* down_name,
                   Dtype w, std::vector<OpRecord>& out);
void expert_ops(const Ctx& c, Phase ph, double T, bool masked, A2ABackend be, LayerOps& L);
// Seed 001's TopK weight-and-reduce (vLLM's TopKWeightAndReduce): which object multiplies each token's expert rows
// by its router weights and sums them, for the experts' kernel, activation layout and all-to-all (the sources beside
// weight_reduce_placement in ops_ffn.cpp), and so which pass the layer pays for it.
enum class WeightReduce : std::uint8_t {
    epilogue_sum,      // Triton fused MoE / Marlin: the down GEMM's epilogue weights and scatters each pair's row to
                       // token order (no permute pass either); moe_sum then reads pairs x h, writes tokens x h
    unpermute_reduce,  // DeepGEMM's ep_gather, CUTLASS's moe_unpermute, TensorRT-LLM's finalizeMoeRoutingKernel:
                       // one pass gathers the permuted rows, weights and sums them (pairs x h in, tokens x h out)
    fused_epilogue,    // FlashInfer / TensorRT-LLM CUTLASS MoE with the FINALIZE epilogue: the down GEMM reduce-adds
                       // into the zeroed output; only the zero-fill (tokens x h) is a pass of its own
    combine,           // batched layout after DeepEP low-latency / pplx: the combine kernel weights and reduces
    naive_batched,     // batched layout without such a combine: TopKWeightAndReduceNaiveBatched in finalize()
    unpermute_only,    // mesh and unified-memory chips (MLX, TT-Metal): the unpermute pass, not derived further
};
WeightReduce weight_reduce_placement(const Ctx& c, bool masked, A2ABackend be);
// comm.cpp
OpRecord comm_op(const char* name, Phase ph, double bytes, Engine eng, double us);
OpRecord allreduce_op(const Ctx& c, const char* name, Phase ph, double T, int n);
// All-gather inside the attention TP group of `bytes_per_rank` from each of n ranks (context parallelism's KV).
OpRecord attn_allgather_op(const Ctx& c, const char* name, Phase ph, double bytes_per_rank, int n);
void ep_comm(const Ctx& c, Phase ph, A2ABackend be, double T, LayerOps& L);
// topology.cpp
OpRecord mesh_allreduce_op(const Ctx& c, const char* name, Phase ph, double T, int n);
void mesh_ep_comm(const Ctx& c, Phase ph, double T, LayerOps& L);
// offload.cpp
struct OffloadPlan {
    bool on = false;
    double local = 0, cached = 0;       // experts per layer on this GPU, and of them in HBM
    double miss_experts = 0;            // distinct uncached experts selected in one step (grouped execution)
    double miss_pairs = 0;              // token-expert pairs on uncached experts (per-token execution)
    double hit_rate = 1;                // share of selections served from HBM
    double expert_bytes = 0;            // one expert's weights on this GPU
    double link_GBps = 0;               // the tier's bandwidth
};
OffloadPlan offload_plan(const Ctx& c, double tokens_world);
void offload_ops(const Ctx& c, Phase ph, double tokens_world, bool per_token, LayerOps& L);
// step.cpp
void build_layer(const Ctx& c, const PhaseShape& ps, const LayerDesc& ld, A2ABackend be, bool masked, LayerOps& L);
// What run_phase sums over a phase's records while layer_time writes them, each in record order (the same sums as
// a pass over the records afterwards): the compute records' time x count (the provenance shares' denominator) and
// the bytes streamed in from the host tier.
struct PhaseSums {
    double compute_us = 0;     // time_us x count over the phase's records that are neither comm nor offload
    double offload_bytes = 0;  // comm_bytes x count over offload records
};
// One layer split into n_mb micro-batches under the overlap policy `ov` (none, tbo or full; never auto); its records
// are appended to `ops` (LayerTime::begin / end say where), each given its group index and count, and added to `sums`.
LayerTime layer_time(const Ctx& c, const PhaseShape& ps, const LayerDesc& ld, A2ABackend be, bool masked, OverlapKind ov,
                     int n_mb, std::vector<OpRecord>& ops, int group, double count, PhaseSums& sums);
void run_phase(const Ctx& c, Estimate& e, const PhaseShape& ps, A2ABackend be, PhaseResult& out);
// memory.cpp
void memory(const Ctx& c, Estimate& e);
// estimate.cpp: v as printf's "%.1f" writes it, at out (at least 24 chars), without printf; returns the characters
// written, or 0 where it leaves v to printf (negative, not finite, 1e15 and up, tiny, or an exact tie between two
// tenths, whose rounding printf implementations may choose differently).
std::size_t format_fixed1(double v, char* out);
// mixed.cpp: estimate_into() of a scenario with workload.prompt_lens / context_lens (Scenario::mixed_lengths(),
// already validated): the step at the requests' mean length, each phase with a list then made the mixed step
// (prefill_step_mixed / decode_step_mixed), its attention records and the times that follow from the step rescaled.
void estimate_mixed_lengths(const Scenario& s, const Tables& tables, Estimate& e, bool warnings);

}  // namespace moe::detail
