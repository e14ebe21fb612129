// ops_ffn.cpp — dense FFN and shared experts, the router and the routed experts of one layer (seed 000 §4; seeds 001, 003, 004).
// Part of the step model; core/estimate_detail.h lists the files and what each computes.
#include <cstring>

#include "core/base/set_cache.h"
#include "core/step/estimate_detail.h"

namespace moe::detail {

void dense_ffn_ops(const Ctx& c, Phase ph, double T, double inter, const char* up_name, const char* down_name,
                   Dtype w, std::vector<OpRecord>& out) {
    const double i_gpu = inter / c.tp;
    // gate and up fused (SwiGLU), or up alone (Nemotron-H's relu^2 MLP: ffn_matrices 2)
    out.push_back(gemm_op(c, up_name, ph, T, c.m.hidden, (c.m.ffn_matrices - 1) * i_gpu, w));
    out.push_back(gemm_op(c, down_name, ph, T, i_gpu, c.m.hidden, w));
}

// The measured grouped-GEMM tables (bench_data/grouped_gemm: InferSim's DeepGEMM runs on H800 and H20) describe
// tensor-core grouped GEMMs on NVIDIA Hopper; their roofline fraction moves to Blackwell (and Rubin) and between FP8, BF16 and
// native FP4 through the roofline (the BF16 Qwen3-30B-A3B rows of the public set, InferSim README, are reproduced
// that way on H20). Other architectures (Ampere, Ada, CDNA) and W4A16 kernels that dequantise 4-bit weights in the
// GEMM (Marlin-style, a different kernel bound by its 4-bit loads) take the analytical fallback instead.
bool deepgemm_arch(const GpuSpec& g) { return g.arch == "hopper" || g.arch == "blackwell" || g.arch == "rubin"; }

bool grouped_tables_apply(const Ctx& c) { return deepgemm_arch(c.g) && !dequantised(c.g, c.w_exp); }

// A token all-to-all (DeepEP, pplx, MORI): it delivers each rank only the tokens with a pick on its experts; the
// all-gather backend and no EP hand every rank the group's every token.
bool token_all_to_all(A2ABackend be) {
    return be == A2ABackend::deepep_normal || be == A2ABackend::deepep_low_latency || be == A2ABackend::pplx ||
           be == A2ABackend::mori;
}

// The M blocks of a W4A16 MoE kernel (Marlin MoE, vllm csrc/moe/marlin_moe_wna16/ops.cu: moe_block_size 8, 16, 32,
// 48 or 64 rows; every block of one expert's sorted rows runs ceil(block / 16) 16-row MMA tiles, 8 on the
// m_block_size_8 path, whatever rows of it are filled, and loads and dequantises that expert's weight tiles once).
constexpr double kMarlinMoeBlocks[] = {8.0, 16.0, 32.0, 48.0, 64.0};
// The engine's pick: vLLM's fused_marlin_moe takes the smallest block that its mean rows per expert fill to less
// than 0.9, else 64 (vllm/model_executor/layers/fused_moe/fused_marlin_moe.py, "M block size selection logic";
// SGLang's Marlin MoE runner copies the rule).
// Non-decreasing in the rows, which the priced time's monotonicity needs (expert_ops).
double marlin_moe_block_m(double rows_per_expert) {
    for (double b : kMarlinMoeBlocks)
        if (rows_per_expert / b < 0.9) return b;
    return 64.0;
}

// Where the TopK weight-and-reduce runs (seed 001: TopKWeightAndReduce{NoOp, Contiguous, NaiveBatched, Delegate}),
// read from the engines' own source:
// - batched (masked) layout: vLLM's batched experts (BatchedDeepGemmExperts, BatchedTritonExperts, the batched
//   CUTLASS FP8 experts) return TopKWeightAndReduceDelegate from finalize_weight_and_reduce_impl, and
//   DeepEPLLPrepareAndFinalize._finalize asserts it: "Weight application and reduction happens in the combine
//   kernel" (DeepEP's low_latency_combine takes topk_weights; SGLang's DeepEP low-latency path the same). pplx's
//   combine takes the weights too. A batched layout without such a combine falls to vLLM's
//   TopKWeightAndReduceNaiveBatched (topk_weight_and_reduce.py), a reference class that loops over the experts.
// - Triton fused MoE (vLLM fused_moe.py TritonExperts.apply / fused_experts_impl, SGLang fused_moe_triton): the down
//   GEMM runs with MUL_ROUTED_WEIGHT and writes each pair's row at its token's slot of a (tokens, top_k, h) buffer;
//   ops.moe_sum (SGLang moe_sum_reduce) then sums the k rows: NoOp in finalize. The kernel reads its input rows
//   through sorted_token_ids, so no permute pass either. vLLM's fused_marlin_moe (W4A16) the same:
//   moe_wna16_marlin_gemm(mul_topk_weights=...) then torch.sum(..., dim=1).
// - DeepGEMM contiguous (vLLM deep_gemm_moe.py DeepGemmExperts.apply: ep_scatter permute, then
//   deepgemm_unpermute_and_reduce = ep_gather; SGLang's DeepEP normal path forward_deepgemm_contiguous: ep_scatter /
//   ep_gather): one pass gathers each token's k rows, weights and sums them; NoOp in finalize.
// - CUTLASS grouped GEMM (vLLM cutlass_moe.py run_cutlass_moe_fp8: moe_permute, then moe_unpermute, "topk weights
//   and reduction are fused in moe_unpermute cuda kernel"): the same one pass.
// - FlashInfer's CUTLASS fused MoE (TensorRT-LLM's CutlassMoeFCRunner, moe_kernels.cu gemm2): with the TMA
//   warp-specialised down GEMM (SM90 and later) and its FINALIZE epilogue fusion the GEMM reduce-adds the weighted
//   rows into the output after a cudaMemsetAsync of it; otherwise (SM80 / SM89, or the DeepSeek FP8 block-scale
//   runner's BlockScaleFC2, which returns before the fusion is considered) finalizeMoeRoutingKernelLauncher runs
//   the one pass. flashinfer fused_moe/core.py cutlass_fused_moe defaults use_fused_finalize to True and vLLM's
//   FlashInferExperts does not pass it; TensorRT-LLM's mayHaveFinalizeFused leaves W4A16 (use_wfp4a16) out.
// `auto` is the kernel the tile of expert_ops assumes: DeepGEMM on Hopper / Blackwell / Rubin, Triton elsewhere,
// Marlin for weights dequantised in the kernel.
WeightReduce weight_reduce_placement(const Ctx& c, bool masked, A2ABackend be) {
    if (masked)
        return be == A2ABackend::deepep_low_latency || be == A2ABackend::pplx ? WeightReduce::combine
                                                                               : WeightReduce::naive_batched;
    const bool cuda = c.g.topology == Topology::switch_ || c.g.topology == Topology::rack;
    if (!cuda) return WeightReduce::unpermute_only;
    const MoeKernelSel k = c.s.runtime.moe_kernel;
    if (k == MoeKernelSel::flashinfer_cutlass) {
        const bool block_fp8 = c.w_exp == Dtype::fp8 && c.fp8_block;
        return deepgemm_arch(c.g) && !dequantised(c.g, c.w_exp) && !block_fp8 ? WeightReduce::fused_epilogue
                                                                               : WeightReduce::unpermute_reduce;
    }
    if (dequantised(c.g, c.w_exp)) return WeightReduce::epilogue_sum;  // Marlin
    if (k == MoeKernelSel::triton || (k == MoeKernelSel::auto_ && !deepgemm_arch(c.g))) return WeightReduce::epilogue_sum;
    return WeightReduce::unpermute_reduce;  // deepgemm, cutlass, auto on DeepGEMM's GPUs
}

namespace {

// The monotone envelope of the routed experts' time over the grouped-GEMM table's token grid: at each grid point x
// (tokens per GPU, ascending), env = the slowest time of the kernel at any grid point up to x, with the logs the
// interpolation between grid points takes. It depends on everything the kernel's time does except the query's
// batch, so it is kept per thread for the last few shapes: a sweep or plan over the batch (or the context, which
// the experts do not see) computes it once per layout instead of once per point.
struct Envelope {
    std::vector<double> x, log_x, env, log_env;
};

// Every input of the kernel's time at a grid point (expert_ops' op_at), as 64-bit words: equal keys, equal envelopes.
constexpr int kEnvKeyWords = 27;
struct EnvKey {
    std::uint64_t words[kEnvKeyWords] = {};
    bool operator==(const EnvKey& o) const { return std::memcmp(words, o.words, sizeof words) == 0; }
};

template <class OpAt>
const Envelope& envelope(const Ctx& c, const char* family, bool masked, double inter, double wb, double act_b, Dtype comp,
                         double eff0, bool marlin, bool cuda, OpAt&& op_at) {
    const ModelSpec& m = c.m;
    EnvKey key;
    int n = 0;
    auto word = [&](std::uint64_t v) { key.words[n++] = v; };
    auto num = [&](double v) {
        std::uint64_t b;
        std::memcpy(&b, &v, sizeof b);
        word(b);
    };
    word(std::uint64_t(reinterpret_cast<std::uintptr_t>(&c.t)));
    word(c.t.generation());
    word(std::uint64_t(reinterpret_cast<std::uintptr_t>(family)));  // a FamilyRef's static name
    word(std::uint64_t(masked) | std::uint64_t(marlin) << 1 | std::uint64_t(cuda) << 2 |
         std::uint64_t(c.s.runtime.expert_layout == ExpertLayout::per_token) << 3 |
         std::uint64_t(c.s.routing.expert_rows) << 4 | std::uint64_t(c.s.runtime.moe_kernel) << 5);
    word(std::uint64_t(std::uint32_t(m.num_experts)));
    word(std::uint64_t(std::uint32_t(m.top_k)));
    word(std::uint64_t(std::uint32_t(m.expert_width())));
    word(std::uint64_t(std::uint32_t(c.s.routing.redundant_experts)));
    word(std::uint64_t(std::uint32_t(c.ep)));
    word(std::uint64_t(std::uint32_t(c.dp)));
    word(std::uint64_t(std::uint32_t(c.g.tile_tokens)));
    word(std::uint64_t(comp));
    word(std::uint64_t(c.g.compute_dtype(comp)));
    num(inter);
    num(wb);
    num(act_b);
    num(c.s.routing.imbalance);
    num(eff0);
    num(c.cal.hbm_bw_eff);
    num(c.cal.kernel_floor_us);
    num(c.cal.dequant_flops_per_weight);
    num(c.g.peak_tflops(comp));
    num(c.g.peak_tflops(Dtype::bf16));
    num(c.bw);
    num(double(m.moe_intermediate));
    num(double(c.moe_tp));
    num(double(m.num_experts + c.s.routing.redundant_experts) / c.ep);
    thread_local SetCache<EnvKey, Envelope, 1, 8> envelopes;
    if (const Envelope* found = envelopes.find(key)) return *found;
    Envelope& e = envelopes.insert(key);
    e.x = c.t.grouped_gemm_grid(family, masked, m.num_experts, m.top_k, m.expert_width(), int(inter), c.ep);
    e.log_x.clear();
    e.env.clear();
    e.log_env.clear();
    double env = 0;
    for (double x : e.x) {
        env = std::max(env, op_at(x * c.ep / c.dp).time_us);
        e.log_x.push_back(std::log(x));
        e.env.push_back(env);
        e.log_env.push_back(std::log(env));
    }
    return e;
}

}  // namespace

// The format a measured MoE-layer table keys these experts by: FP16 runs as BF16; FP4 experts a GPU without FP4
// tensor cores dequantises inside the kernel (W4A16) are measured as one such kernel, vLLM's MXFP4 path on Hopper
// (bench_data/moe/<family>/vllm_mxfp4.csv): the 4-bit payload and the kernel are the same, the scales' format aside.
static Dtype table_dtype(const GpuSpec& g, Dtype w) {
    if (w == Dtype::fp16) return Dtype::bf16;
    if ((w == Dtype::nvfp4 || w == Dtype::mxfp4) && dequantised(g, w)) return Dtype::mxfp4;
    return w;
}

// Routed experts on the busiest EP rank (seed 000 §4, with the lazy-loading floor of seeds 003/004 and the
// layouts of seed 001).
// A measured fused-MoE layer at t group tokens, re-priced for the routing a model serves. The tables' "balanced"
// routing is a round robin (AIC's collectors): t group tokens' t x top_k picks reach min(E, t x top_k) distinct
// experts, so the timed rank loads x x top_k / ep of its `local` experts at x tokens and all of them from x = E / top_k
// on (Kimi-K2's shape on GB200, EP 8: 76 us at 16 tokens, then flat at 182 us from 48 = 384 / 8). Tokens routed
// independently reach fewer: local (1 - (1 - k/E)^t) (kernels::expected_active_experts), 63% of them at t = E / k.
// The table prices the difference itself: between x_r = ep x that count / top_k and x_b = min(t, E / k) tokens it
// rises by the loads of the experts no token picks, which come off. Below E / k that is the table at x_r; above, the
// table at t less its rise from x_r to E / k. Monotone in t (x_r grows with t), equal to the table once every local
// expert is picked.
static double routed_weight_load_us(const Ctx& c, const MoeHit& hit, MoeKernel kernel, double t, double local) {
    const ModelSpec& m = c.m;
    const double k = m.top_k, E = m.num_experts;
    const double x_b = std::min(t, E / k);
    const double x_r = kernels::expected_active_experts(local, k * local / E, t) * c.ep / k;
    // (routing.expert_rows = even: every expert the mean, the tables' own routing; and no difference to price)
    if (c.s.routing.expert_rows != ExpertRows::random || !(x_r < x_b * (1.0 - 1e-6)) || !(local > 0)) return hit.latency_us;
    auto at = [&](double x) {
        return c.t.moe_layer(c.families[0], table_dtype(c.g, c.w_exp), m.expert_width(), m.moe_intermediate, m.top_k,
                             m.num_experts, c.moe_tp, c.ep, x, kernel);
    };
    const MoeHit hb = at(x_b), hr = at(x_r);
    if (!hb.found || !hr.found) return hit.latency_us;
    return std::max(0.0, hit.latency_us - std::max(0.0, hb.latency_us - hr.latency_us));
}

void expert_ops(const Ctx& c, Phase ph, double T_rank, bool masked, A2ABackend be, LayerOps& L) {
    const ModelSpec& m = c.m;
    // T_rank: the tokens of the busiest attention rank (its router and latent projections run on them). The routed
    // experts see the EP group's tokens: T_all per rank on average, less than T_rank when only some of the attention
    // ranks carry a prefill (Ctx::prefill_busy_share).
    const double T_all = ph == Phase::prefill ? T_rank * c.prefill_busy_share : T_rank;
    const MoeKernelSel kernel = c.s.runtime.moe_kernel;
    // Seed 001's chunking: a standard-format (contiguous) fused MoE whose kernel supports chunking runs the forward's
    // tokens in chunks of the engine's chunk size (vLLM: VLLM_FUSED_MOE_CHUNK_SIZE), each chunk reading the experts'
    // weights again; batched (masked) kernels do not chunk. The chunk counts the tokens entering this rank's kernel
    // (those with at least one pick on its experts); the experts are timed at one chunk's tokens and the time
    // multiplied by the chunks.
    const double chunk = c.s.moe_chunk();
    const double rank_tokens = T_all * c.dp * moe_rank_token_share(c);
    const bool per_token_layout = c.s.runtime.expert_layout == ExpertLayout::per_token;
    const double n_chunks = (!masked && !per_token_layout && chunk > 0 && rank_tokens > chunk) ? std::ceil(rank_tokens / chunk) : 1.0;
    const double T = T_all / n_chunks;
    const double local = double(m.num_experts + c.s.routing.redundant_experts) / c.ep;
    // The experts' input and output width: hidden, or LatentMoE's moe_latent_size (the router still reads hidden).
    const double ew = m.expert_width();
    // An ungated expert (Nemotron-H: up and down around relu^2, ffn_matrices 2) of width i has the FLOPs and weight
    // bytes of a gated one of width 2i/3; no measured MoE table holds such a kernel, so those are not consulted.
    const bool gated = m.ffn_matrices == 3;
    const double inter = double(m.moe_intermediate) / c.moe_tp * (gated ? 1.0 : m.ffn_matrices / 3.0);
    const Dtype comp = compute_of(c.g, c.w_exp, c.s.precision.fp4_compute);
    const double act_b = comp == Dtype::fp8 ? 1.0 : 2.0;
    const double wb = bytes_with_scales(c.w_exp);
    const bool dequant = dequantised(c.g, c.w_exp);
    const bool tables_apply = gated && grouped_tables_apply(c);
    // tokens per attention rank -> token-expert pairs on the busiest rank and the experts they load
    auto pairs_of = [&](double t) { return t * c.dp * m.top_k / c.ep * c.s.routing.imbalance; };
    auto active_of = [&](double t) {
        return std::max(std::min(local, 1.0), kernels::expected_active_experts(local, m.top_k * local / m.num_experts, t * c.dp));
    };

    // router (gate GEMM, replicated): T x h x E
    OpRecord router = make_op("moe.router", ph, 2.0 * T_rank * m.hidden * m.num_experts, double(m.num_experts) * m.hidden * 2.0,
                              T_rank * (m.hidden + m.num_experts) * 2.0);
    time_op(c, router, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
    L.pre.push_back(router);
    if (m.moe_latent > 0) {
        // LatentMoE: every token of the attention rank goes through fc1_latent_proj before the dispatch and its
        // combined routed output through fc2_latent_proj after the combine, on the rank that holds the token. Both
        // are replicated linears (not TP-sharded: vLLM ReplicatedLinear, TensorRT-LLM "replicated across all GPUs"),
        // built with the model's quant_config, so they take the shared experts' format; GEMMs on the GEMM tables.
        L.pre.push_back(gemm_op(c, "moe.latent_down_proj", ph, T_rank, m.hidden, m.moe_latent, c.w_shared));
        L.pre.push_back(gemm_op(c, "moe.latent_up_proj", ph, T_rank, m.moe_latent, m.hidden, c.w_shared));
    }

    const double tokens_world = T * c.dp;  // distinct tokens entering the MoE across the EP group (one chunk)
    const double pairs = pairs_of(T_all);
    // Per-token execution (seed 003's baseline): every token-expert pair loads its expert's weights itself.
    const bool per_token = c.s.runtime.expert_layout == ExpertLayout::per_token;
    // The whole routed-expert layer measured on this GPU (bench_data/moe: AIC's SGLang runs, permutation and combine
    // included) for this exact shape, format and moe_tp x ep layout, at the EP group's tokens (the tables' unit:
    // tokens per rank x ep, bench_data/README.md) scaled to the busiest rank. The kernel the all-to-all feeds: after
    // DeepEP normal the contiguous DeepEP kernel, after DeepEP low-latency the masked one (measured for DeepSeek-V3's
    // shape), without a DeepEP / pplx all-to-all the engine's fused MoE, contiguous layouts only. Per-token and
    // offloaded experts are other kernels; the GPU's own family only (a latency does not transfer to another GPU).
    MoeHit layer;
    // The AIC tables measure native kernels: DeepEP's DeepGEMM kernels, SGLang's Triton fused MoE and vLLM's FlashInfer
    // CUTLASS fused MoE; FP4 weights cast to FP8 (precision.fp4_compute) and a CUTLASS choice are none of them.
    const bool cast_fp4 = is_fp4_like(c.w_exp) && compute_of(c.g, c.w_exp, c.s.precision.fp4_compute) == Dtype::fp8;
    if (gated && !per_token && !cast_fp4 && kernel != MoeKernelSel::cutlass && c.own_tables && c.families[0] &&
        c.s.routing.redundant_experts == 0 && c.s.runtime.expert_offload.tier == OffloadTier::none) {
        // the table at t of the EP group's tokens (the busiest rank's share: routing.imbalance), at the scenario's
        // moe_tp x ep layout or another one of the same tokens
        auto lookup_at = [&](MoeKernel k, double t, int tp, int ep) {
            return c.t.moe_layer(c.families[0], table_dtype(c.g, c.w_exp), m.expert_width(), m.moe_intermediate, m.top_k,
                                 m.num_experts, tp, ep, t * c.s.routing.imbalance, k);
        };
        auto lookup = [&](MoeKernel k, double t) { return lookup_at(k, t, c.moe_tp, c.ep); };
        const bool deepgemm_ok = kernel == MoeKernelSel::auto_ || kernel == MoeKernelSel::deepgemm;
        if (deepgemm_ok && masked && be == A2ABackend::deepep_low_latency) layer = lookup(MoeKernel::deepep_masked, tokens_world);
        if (deepgemm_ok && !masked && be == A2ABackend::deepep_normal) {
            // the rows-not-delivered correction below, at t group tokens (needs a found hit)
            auto corrected = [&](MoeHit hit, double t) {
                // AIC's DeepEP prefill collector hands the timed GPU a fake dispatch output holding every token of
                // the EP group (tokens x ep rows, only tokens x top_k picks of them on its experts: collector/sglang/
                // collect_wideep_deepep_moe.py), while DeepEP normal delivers only the tokens with at least one pick
                // on this rank, 1 - (1 - local/E)^top_k of them under uniform routing. The rows DeepEP would not
                // deliver are taken out at the table's own time per row (MoeSeries::row_us: the rise per group token
                // at fixed work per GPU; h100 8.1 ns, b200 5.4 ns, against 3h bytes at HBM speed, 7.1 and 3.0 ns).
                // Never below half the measured time.
                const double p_hit = 1.0 - std::pow(std::max(0.0, 1.0 - local / m.num_experts), double(m.top_k));
                const double excess_rows = t * c.s.routing.imbalance * (1.0 - p_hit);
                return std::max(hit.latency_us - excess_rows * hit.row_us, 0.5 * hit.latency_us);
            };
            layer = lookup(MoeKernel::deepep_contiguous, tokens_world);
            if (layer.found) {
                // Where the table rises more slowly than the rows taken out (its flat low-token part, where loading
                // the experts' weights sets the time: GB200's up to 512 tokens per GPU), more tokens would come out
                // faster: the corrected time is the largest of those at t, t/2, t/4, ... down to one token (each
                // rank's own rows never take less time with more of them; at most ~20 cached lookups).
                double us = corrected(layer, tokens_world);
                for (double f = 0.5; tokens_world * f >= 1.0; f *= 0.5) {
                    const MoeHit lower = lookup(MoeKernel::deepep_contiguous, tokens_world * f);
                    if (lower.found) us = std::max(us, corrected(lower, tokens_world * f));
                }
                layer.latency_us = us;
            }
        }
        // The fused MoE hands every rank the EP group's tokens (SGLang without DeepEP: all-gathered, routed and
        // permuted on each rank), a cost that grows with EP at fixed tokens per GPU: not the kernel after a DeepEP
        // or pplx all-to-all, which delivers a rank its own pairs only (those go to the grouped-GEMM tables).
        const bool standard = !masked && !token_all_to_all(be);
        // TensorRT-LLM reads its own fused MoE first (trtllm_*.csv: AIC timed it under EP alone, moe_tp 1). A moe_tp
        // layout it has no row of takes the fused table's row of that layout (MoeKernel::fused: vllm_mxfp4.csv for
        // Hopper MXFP4) times TensorRT-LLM(ep = moe_tp x ep) / fused(ep = moe_tp x ep) at the same group tokens: under
        // balanced routing each GPU then holds the same weight bytes and computes the same pairs' FLOPs, split by
        // expert rather than by width. The label names TensorRT-LLM's table, the source says transferred.
        MoeKernel layer_kernel = MoeKernel::fused;  // the table the standard layer was read from
        if (standard && !layer.found && kernel == MoeKernelSel::auto_ && c.gemm_engine == GemmEngine::trtllm) {
            layer = lookup(MoeKernel::trtllm, tokens_world);
            layer_kernel = MoeKernel::trtllm;
            if (!layer.found && c.moe_tp > 1) {
                const int gpus = c.moe_tp * c.ep;
                const MoeHit own = lookup_at(MoeKernel::trtllm, tokens_world, 1, gpus);
                const MoeHit other_ep = lookup_at(MoeKernel::fused, tokens_world, 1, gpus);
                const MoeHit other = own.found && other_ep.found ? lookup(MoeKernel::fused, tokens_world) : MoeHit{};
                if (other.found) {
                    layer = own;
                    layer.latency_us = other.latency_us * own.latency_us / other_ep.latency_us;
                    layer.source = Source::transferred;
                }
            }
        }
        if (standard && !layer.found && kernel == MoeKernelSel::auto_) {
            layer = lookup(MoeKernel::fused, tokens_world);
            layer_kernel = MoeKernel::fused;
        }
        // Triton's own rows: B200's fused table holds TensorRT-LLM's kernel for most keys, so Triton reads its own
        // table there (sglang_triton.csv); a GPU without one has a fused table that is Triton's for every bf16 / fp8
        // key (scripts/distill_aic.py checks it on h100 / h200; their int4 keys are Marlin's).
        if (standard && !layer.found && kernel == MoeKernelSel::triton) {
            layer = lookup(MoeKernel::triton, tokens_world);
            layer_kernel = MoeKernel::triton;
            const Dtype td = table_dtype(c.g, c.w_exp);
            if (!layer.found && (td == Dtype::bf16 || td == Dtype::fp8) && !c.t.has_moe_kernel(c.family_views[0], MoeKernel::triton))
                layer = lookup(MoeKernel::fused, tokens_world), layer_kernel = MoeKernel::fused;
        }
        // vLLM's FlashInferExperts (FlashInfer's cutlass_fused_moe) runs the standard format only, after vLLM's
        // all-gather or without EP (AIC's vLLM 0.24 rows: the same setup as the fused MoE's). Its FP8 rows are
        // block-scaled (128 x 128 weight blocks): per-tensor FP8 weights are another kernel and take the fallback.
        const bool fp8_tensor = table_dtype(c.g, c.w_exp) == Dtype::fp8 && !c.fp8_block;
        if (standard && !fp8_tensor && kernel == MoeKernelSel::flashinfer_cutlass)
            layer = lookup(MoeKernel::flashinfer_cutlass, tokens_world), layer_kernel = MoeKernel::flashinfer_cutlass;
        if (standard && layer.found && layer.source != Source::transferred)
            layer.latency_us = routed_weight_load_us(c, layer, layer_kernel, tokens_world * c.s.routing.imbalance, local);
    }
    // Seed 001's finalize: where the TopK weight-and-reduce runs (weight_reduce_placement) and the passes it costs.
    // A measured MoE layer includes its permutation and weighted combine; per-token execution has neither.
    const WeightReduce reduce = weight_reduce_placement(c, masked, be);
    const bool own_passes = !per_token && !layer.found;
    if (own_passes && !masked && reduce != WeightReduce::epilogue_sum) {
        // contiguous layout: permute the tokens into expert order (read + write every pair's row)
        L.post.push_back(memory_op(c, "moe.permute", ph, 2.0 * pairs * ew * act_b));
    }
    const char* family = nullptr;  // the first family with a table for this kernel
    std::string_view family_view;
    auto query = [&](std::string_view f, double t) {
        return c.t.grouped_gemm(f, masked, m.num_experts, m.top_k, m.expert_width(), int(inter), c.ep, t * c.dp / c.ep);
    };
    TableHit hit_T;  // the family's hit at T (op_at(T) below takes it rather than asking again)
    if (tables_apply && !per_token && !layer.found && (kernel == MoeKernelSel::auto_ || kernel == MoeKernelSel::deepgemm))
        for (int i = 0; i < 4 && c.families[i] && !family; ++i)
            if ((hit_T = query(c.family_views[i], T)).found) family = c.families[i], family_view = c.family_views[i];
    // CUDA kernels (DeepGEMM, Marlin) on switch and rack systems; mesh and unified chips run their own.
    const bool cuda = c.g.topology == Topology::switch_ || c.g.topology == Topology::rack;
    // the grouped fallback's compute fraction: the chip's matmul_efficiency, else the GPU's own from its DeepGEMM
    // grouped-GEMM table (GpuSpec::grouped_gemm_efficiency), else the calibration's. W4A16 experts keep the
    // calibration's: Marlin is another kernel (Ampere's mma.sync over weights it dequantises on the ALUs, not
    // DeepGEMM's FP8 WGMMA), and its only measured layers (AIC's SGLang sglang_marlin_moe int4 rows, Kimi-K2's shape on
    // H100 / H200, bench_data/moe/<family>/sglang.csv, EP 1, 2,048-16,384 tokens) take 1.8-2.3x the fallback's time
    // at 0.585, as if at 0.26-0.32 of the BF16 peak at full tiles: below the calibration's value, and further below
    // H20's DeepGEMM-measured 0.88 (docs/model.md, "4-bit weights without FP4 tensor cores").
    const double eff0 = cuda && dequant && c.g.matmul_efficiency <= 0 ? c.cal.grouped_compute_eff
                                                                      : c.g.grouped_compute_eff_or(c.cal.grouped_compute_eff);
    // The engines' fused MoE: Triton's (runtime.moe_kernel = triton, or auto where DeepGEMM does not run: Ampere, Ada
    // and AMD's CDNA run the engines' Triton fused MoE) or FlashInfer's CUTLASS MoE. Off the tables each reaches its own
    // fraction of the tensor peak and of HBM (DeepGEMM's rows fit grouped_compute_eff) and carries a fixed time per
    // layer, its 5-7 kernels' launches and tails (moe_align_block_size, the two GEMMs, the activation, moe_sum, the
    // activations' quantisation): calibration.{triton,flashinfer}_moe_*, fitted on AIC's measured layers with each GPU
    // held out in turn (tests/unit/test_moe_offtable.cpp). A GPU's own matmul_efficiency or tile (mesh chips) and
    // W4A16 (Marlin) keep theirs.
    const bool triton_kernel = kernel == MoeKernelSel::triton || (kernel == MoeKernelSel::auto_ && !deepgemm_arch(c.g));
    const bool fused_kernel = cuda && !dequant && !per_token && c.g.matmul_efficiency <= 0 && c.g.tile_tokens <= 1 &&
                              (triton_kernel || kernel == MoeKernelSel::flashinfer_cutlass);
    struct KernelEff {
        double compute, hbm, fixed_us;
    };
    const KernelEff fused = !fused_kernel  ? KernelEff{eff0, c.cal.hbm_bw_eff, 0.0}
                            : triton_kernel ? KernelEff{c.cal.triton_moe_compute_eff, c.cal.triton_moe_bw_eff, c.cal.triton_moe_fixed_us}
                                            : KernelEff{c.cal.flashinfer_moe_compute_eff, c.cal.flashinfer_moe_bw_eff,
                                                        c.cal.flashinfer_moe_fixed_us};
    // The kernel at t tokens per attention rank, timed from the table or the analytical fallback.
    auto op_at = [&](double t, const TableHit* known = nullptr) {
        const double p = pairs_of(t), active = active_of(t);
        kernels::Cost k = kernels::grouped_experts(p, active, ew, inter, wb, act_b);
        double wbytes = active * 3.0 * ew * inter * wb;
        const double acts = k.bytes - wbytes;
        if (per_token) wbytes = p * 3.0 * ew * inter * wb;
        OpRecord op = make_op("moe.routed_experts", ph, k.flops, wbytes, acts);
        TableHit hit;
        if (family) {
            hit = known ? *known : query(family_view, t);
            if (!(family == c.families[0] && c.own_tables)) hit.source = Source::transferred;
        }
        // Analytical fallback: grouped-GEMM efficiency times the tile quantisation of each expert's rows to the
        // kernel's M tile: the hardware's tile_tokens where it computes in fixed tiles (32 on Tensix: seed 004's
        // stepwise compute), else 64 masked, 128 contiguous in DeepGEMM, and for W4A16 Marlin MoE 8..64 by its rule.
        // Per-token execution runs one row per call.
        const double per_expert = per_token ? 1.0 : p / std::max(1.0, active);
        const bool marlin = dequant && cuda;
        // runtime.moe_kernel picks the CUDA kernel's tile: Triton fused MoE's BLOCK_SIZE_M is 64, 16 when the tokens
        // do not exceed the experts (vLLM / SGLang fused_moe.py get_default_config); CUTLASS grouped GEMM's 64-row
        // tile, 16 (swap-AB) up to 16 rows (vLLM grouped_mm_c3x sm90_fp8_config_default, _M4). FlashInfer's CUTLASS
        // MoE picks its tile by profiling; off its tables it takes CUTLASS's (not verified for it).
        // auto on a GPU DeepGEMM does not run on (it needs SM90 / SM100: Ampere, Ada and AMD's CDNA run the
        // engines' Triton fused MoE) takes Triton's tile, not DeepGEMM's.
        const bool triton_tile = kernel == MoeKernelSel::triton || (kernel == MoeKernelSel::auto_ && !deepgemm_arch(c.g));
        const bool marlin_blocks = marlin && c.g.tile_tokens <= 1 && !per_token;
        // The rows Marlin's rule reads, contiguous layout (fused_marlin_moe): M * top_k / E of the kernel's own
        // arguments, the tokens handed to the rank's kernel (after a token all-to-all those with a pick on its
        // experts; otherwise, all-gathered or without EP, the group's every token) times top_k over the rank's local
        // experts (w1.size(0)). Under EP that counts every pick of those tokens, local or not, so the engine takes
        // larger blocks than its rows fill (Kimi-K2.5 at EP 8 all-gathered, 128 tokens per GPU: 1,024 x 8 / 48 = 171
        // -> 64 rows for 21 per expert). The masked layout's engine path (vLLM's BatchedMarlinExperts after DeepEP
        // low-latency or pplx: batched_fused_marlin_moe) fixes 64 rows ("TODO: Choose a decent block size like in
        // fused_marlin_moe"); not followed: masked W4A16 experts read the rule at their own rows per expert.
        const double rule_rows =
            masked ? per_expert : t * c.dp * (token_all_to_all(be) ? moe_rank_token_share(c) : 1.0) * m.top_k / local;
        const double tile = c.g.tile_tokens > 1                 ? double(c.g.tile_tokens)
                            : marlin                            ? marlin_moe_block_m(rule_rows)
                            : !cuda                             ? 1.0
                            : triton_tile                       ? (t * c.dp / c.ep <= local ? 16.0 : 64.0)
                            : kernel == MoeKernelSel::cutlass ||
                                      kernel == MoeKernelSel::flashinfer_cutlass
                                                                ? (p <= 16.0 ? 16.0 : 64.0)
                            : masked                            ? 64.0
                                                                : 128.0;
        // The record at an M tile of `tile_rows`: the M tiles the rank runs are each expert's own rows rounded up to
        // the tile, in expectation over how the pairs fall on the experts (routing.expert_rows), never the mean
        // rounded up (which billed a mean of 32.0001 rows, or 8.0001 rows in one-row tiles, a whole extra tile);
        // per-token calls are one row each. The compute side pays the padded rows (tile fill), and W4A16 dequantises
        // every active expert's weights once per M tile of its tokens.
        auto priced = [&](double tile_rows) {
            const double tiles = per_token ? p
                                 : c.s.routing.expert_rows == ExpertRows::even
                                     ? std::max(1.0, active) * kernels::expected_tiles_even(per_expert, tile_rows)
                                     : local * kernels::expected_tiles_random(t * c.dp, p / (local * t * c.dp), tile_rows);
            const double tile_eff = tiles > 0 ? std::min(1.0, p / (tiles * tile_rows)) : 1.0;
            const double dq = !marlin ? 0.0 : 3.0 * ew * inter * (per_token ? active : tiles);
            OpRecord o = op;
            time_op(c, o, comp, hit, std::max(1e-3, fused.compute) * tile_eff, std::max(1e-3, fused.hbm), dq);
            return o;
        };
        OpRecord best = priced(tile);
        // Marlin: a larger block dequantises each expert's weights fewer times (fewer blocks) and pads more rows, and
        // the engine's rule moves to larger blocks as the rows grow. The kernel at these rows is priced at the
        // fastest of the engine's block and the larger ones (those it takes at more rows): on fewer rows a larger
        // block only pads, so the time never falls as tokens are added, where the rule's own block alone would fall
        // by up to 8% at its switch (Kimi-K3 on H20 at a 0.88 compute fraction: the smaller block's random rows spill
        // into second blocks, each dequantising again; tests/unit/test_formats.cpp). Monotone because the rule's
        // block, the tiles at each block and every roof are non-decreasing in the tokens.
        if (marlin_blocks)
            for (double b : kMarlinMoeBlocks)
                if (b > tile) {
                    OpRecord o = priced(b);
                    if (o.time_us < best.time_us) best = o;
                }
        return best;
    };
    OpRecord op = op_at(T, family ? &hit_T : nullptr);
    if (layer.found) {  // the measured time; flops and bytes stay the model's (efficiency = roofline / measured)
        const double compute_us = 1e6 * op.flops / (c.g.peak_tflops(comp) * 1e12);
        const double memory_us = 1e6 * (op.weight_bytes + op.activation_bytes) / c.bw;
        const double roof_us = std::max(compute_us, memory_us);
        op.time_us = layer.latency_us;
        op.efficiency = roof_us / layer.latency_us;
        // The label read from the measurement: the side whose roof the measured time comes closest to (the larger
        // fraction of its peak), not the fallback's side at its efficiencies (issue 30: labels that disagree with
        // the time they carry).
        op.bound = compute_us >= memory_us ? Bound::compute : Bound::memory;
        op.engine = op.bound == Bound::compute ? Engine::tensor : Engine::hbm;
        op.source = layer.source;
        op.table = layer.table;
    } else if (family) {
        // Expert time never falls as the batch grows: a measured point faster than a smaller one (InferSim's H800
        // masked rows at 256 tokens per GPU beat those at 128) is held at the slower time, and between measured
        // points the time is interpolated in log time over log tokens, so it is monotone by construction.
        const Envelope& env = envelope(c, family, masked, inter, wb, act_b, comp, eff0, cuda && dequant, cuda, op_at);
        const std::vector<double>& grid = env.x;
        const double q = T * c.dp / c.ep;  // the grid's unit: tokens per GPU
        if (!grid.empty() && q > grid.front()) {
            // the first point at or above the query (grid ascending, q above its first point: i >= 1)
            const std::size_t i = std::size_t(std::lower_bound(grid.begin(), grid.end(), q) - grid.begin());
            if (i < grid.size()) {
                const double x = grid[i], x_lo = grid[i - 1];
                const double f = x > x_lo ? (std::log(q) - env.log_x[i - 1]) / (env.log_x[i] - env.log_x[i - 1]) : 1.0;
                const double t_us = std::exp(env.log_env[i - 1] + f * (env.log_env[i] - env.log_env[i - 1]));
                // between grid points, or held up to a smaller batch's slower time: not this point's measurement
                const bool held = t_us > op.time_us * (1.0 + 1e-9);
                op.efficiency *= op.time_us / t_us;
                op.time_us = t_us;
                if (op.source == Source::measured && (f < 1.0 || held)) op.source = Source::interpolated;
            } else if (env.env.back() > op.time_us) {  // past the last point: never below the slowest point measured
                op.efficiency *= op.time_us / env.env.back();
                op.time_us = env.env.back();
                if (op.source == Source::measured) op.source = Source::interpolated;
            }
        }
    }
    if (n_chunks > 1) {  // every chunk runs the kernel again: its weights, work and time once per chunk
        op.time_us *= n_chunks;
        op.flops *= n_chunks;
        op.weight_bytes *= n_chunks;
        op.activation_bytes *= n_chunks;
    }
    if (op.source == Source::analytical) c.analytical_experts = true;
    L.post.push_back(op);
    if (fused.fixed_us > 0 && !layer.found && op.source == Source::analytical) {
        // the fused MoE's fixed time per layer (its kernels' launches and tails), once per chunk
        OpRecord fixed = make_op("moe.fused_fixed", ph, 0, 0, 0);
        fixed.time_us = fused.fixed_us * n_chunks;
        fixed.bound = Bound::latency;
        fixed.engine = Engine::tensor;
        fixed.source = Source::analytical;
        L.post.push_back(fixed);
    }
    if (masked && !per_token && kernel == MoeKernelSel::triton) {
        // vLLM's BatchedTritonExperts: both GEMMs skip each expert's blocks past its own rows (batched_triton_kernel
        // returns early), but the SiLU-and-mul between them runs over the whole batched buffer, every local expert's
        // slot padded to the dispatch capacity ("TODO: would be nice to use expert_num_tokens here to reduce garbage
        // compute", fused_batched_moe.py): read gate+up (2 x inter) and write inter, in BF16, for local experts x
        // dispatchers x max tokens per rank (N = max(128, tokens per GPU), as the buffers in memory.cpp).
        const double capacity = c.ep * std::max(128.0, T_rank * c.dp / c.ep);  // (sized for the busiest dispatcher)
        L.post.push_back(memory_op(c, "moe.act_padded", ph, local * capacity * 3.0 * inter * 2.0));
    }
    // The Triton fused MoE of the standard format under EP (vLLM / SGLang fused_moe.py, the all-gather or TP-attention
    // layout: every rank routes all of the group's tokens): moe_align_block_size sorts all tokens x top_k pairs, those
    // on other ranks' experts under expert id -1, and fused_moe_kernel writes zeros for their rows ("Write back zeros to
    // the output when the expert is not in the current expert parallel rank": write_zeros_to_output) instead of
    // skipping them; the activation (silu_and_mul) runs over the whole (tokens x top_k, 2 x inter) buffer and moe_sum
    // reads the whole (tokens, top_k, hidden) one. Per such pair: the gate/up GEMM's zero row (2 x inter BF16), the
    // activation's read of it and its write (inter at the GEMM's input format), the down GEMM's zero row (hidden BF16).
    // (AIC's SGLang rows: at fixed group tokens the time stops falling with EP, ~0.15 us per group token on Kimi-K2's
    // shape, bench_data/README.md "moe"; these bytes at 0.9 of H100's HBM are 0.147 us.) The weight-and-reduce's read
    // of the non-local rows is below (moe.finalize).
    const bool zero_rows = own_passes && !masked && !token_all_to_all(be) && triton_kernel && !dequant && cuda && c.ep > 1;
    const double group_pairs = T_all * c.dp * m.top_k;
    const double nonlocal_pairs = zero_rows ? std::max(0.0, group_pairs - pairs) : 0.0;
    if (nonlocal_pairs > 0) {  // the fused kernel's own writes and reads: at its HBM efficiency
        OpRecord zeros = make_op("moe.nonlocal_rows", ph, 0, 0, nonlocal_pairs * (2.0 * inter * 2.0 * 2.0 + inter * act_b + ew * 2.0));
        time_op(c, zeros, Dtype::bf16, TableHit{}, 1.0, std::max(1e-3, fused.hbm));
        L.post.push_back(zeros);
    }
    if (own_passes) {
        // The output rows the reduce writes: a token all-to-all (DeepEP, pplx, MORI) delivers the rank only the tokens
        // with a pick on its experts (the received tokens, moe_rank_token_share); after an all-gather, or without EP,
        // every rank's reduce writes every token of the group (vLLM moe_sum / ep_gather over all M rows).
        const double group_tokens = T_all * c.dp;
        const double rows = token_all_to_all(be) ? std::min({group_tokens, pairs, group_tokens * moe_rank_token_share(c)}) : group_tokens;
        // BF16 throughout: the down GEMM's output dtype (vLLM / SGLang out_dtype, DeepGEMM's bf16 D) and the layer's.
        const double in_b = (pairs + nonlocal_pairs) * ew * 2.0, out_b = rows * ew * 2.0;
        switch (reduce) {
            case WeightReduce::epilogue_sum:  // moe_sum: read the k weighted rows of each token, write the token
            case WeightReduce::unpermute_reduce:  // ep_gather / moe_unpermute / finalizeMoeRoutingKernel: the same bytes
            case WeightReduce::naive_batched:  // at least those bytes (a reference loop over the experts)
                L.post.push_back(memory_op(c, "moe.finalize", ph, in_b + out_b));
                break;
            case WeightReduce::fused_epilogue:  // the zero-fill of the output the GEMM's epilogue reduce-adds into
                L.post.push_back(memory_op(c, "moe.finalize", ph, out_b));
                break;
            case WeightReduce::combine:  // inside the combine kernel, priced with it (ep_comm)
                break;
            case WeightReduce::unpermute_only:  // read + write every pair's row, as the permute
                L.post.push_back(memory_op(c, "moe.unpermute", ph, 2.0 * in_b));
                break;
        }
    }
    offload_ops(c, ph, T_all * c.dp, per_token, L);
}

}  // namespace moe::detail
