// estimate.cpp — the latency and memory model (DESIGN §5).
//
// [SECTION] context: resolved dtypes, backends and the one function that turns an operator record into time
// [SECTION] attention, FFN and MoE operators of one layer
// [SECTION] communication (TP all-reduce, all-gather, DeepEP normal / low-latency, pplx)
// [SECTION] overlap policies and the step
// [SECTION] memory per GPU and the largest batch / context that fit
// [SECTION] estimate()
#include "estimate.h"

#include <algorithm>
#include <cmath>

#include "kernels.h"

namespace moe {

const char* engine_name(Engine e) {
    switch (e) {
        case Engine::tensor: return "tensor";
        case Engine::hbm: return "hbm";
        case Engine::nvlink: return "nvlink";
        case Engine::rdma: return "rdma";
        case Engine::host: return "host";
    }
    return "?";
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] context
// ---------------------------------------------------------------------------------------------------------------

double bytes_with_scales(Dtype d) { return dtype_bytes(d) + dtype_scale_bytes_per_elem(d); }

struct Ctx {
    const Scenario& s;
    const Tables& t;
    const Calibration& cal;
    const ModelSpec& m;
    const GpuSpec& g;
    Estimate& e;
    // storage formats (after the GPU's capability matrix: FP4 on Hopper is pre-expanded to FP8)
    Dtype w_attn, w_exp, w_shared, w_embed, kv, disp, comb;
    double bw;          // bytes/s
    int tp, dp, ep, pp, moe_tp, gpn;
    double sm_share = 1.0;  // fraction of SMs left to compute while DeepEP normal kernels run
    // families to look tables up in, in order of preference
    const char* families[4] = {nullptr, nullptr, nullptr, nullptr};
    bool own_tables = false;  // families[0] is the GPU's own (measured on it)
};

Dtype stored(const GpuSpec& g, Dtype d) {
    // Seed 002 §6: Hopper (no FP4 MMA) serves FP4 checkpoints pre-expanded to FP8: memory doubles.
    if ((d == Dtype::mxfp4 || d == Dtype::nvfp4) && g.dense_tflops_fp4 <= 0) return Dtype::fp8;
    return d;
}

Dtype pick(const DtypeSel& sel, Dtype fallback) { return sel.is_auto ? fallback : sel.value; }

// Looks a kernel up in the GPU's own tables, then its fallback family, then any family with data.
template <class F>
TableHit lookup(const Ctx& c, F&& f) {
    for (int i = 0; i < 4 && c.families[i]; ++i) {
        TableHit h = f(c.families[i]);
        if (h.found) {
            if (!(i == 0 && c.own_tables)) h.source = Source::transferred;
            return h;
        }
    }
    return {};
}

// The one function that turns a record into time: a roofline max(flops/peak, bytes/bw), divided by the efficiency
// measured for this kernel (same GPU: reproduces the measurement; another GPU: rescaled through the roofline), or
// the analytical fallback's efficiencies when no table covers it.
void time_op(const Ctx& c, OpRecord& op, Dtype compute, const TableHit& hit, double eff_compute, double eff_bw) {
    const double peak = c.g.peak_tflops(compute) * 1e12;
    const double bytes = op.weight_bytes + op.activation_bytes;
    op.compute_dtype = c.g.compute_dtype(compute);
    const double t_c = op.flops / peak, t_m = bytes / c.bw;
    op.bound = t_c >= t_m ? Bound::compute : Bound::memory;
    double t;
    if (hit.found && hit.util > 0) {
        if (hit.compute_only) {  // the kernel's loads overlap its matmuls: memory at the streaming efficiency
            const double tc = t_c / hit.util, tm = t_m / c.cal.hbm_bw_eff;
            t = std::max(tc, tm);
            op.bound = tc >= tm ? Bound::compute : Bound::memory;
            op.efficiency = tc >= tm ? hit.util : c.cal.hbm_bw_eff;
        } else {
            t = std::max(t_c, t_m) / hit.util;
            op.efficiency = hit.util;
        }
        op.source = hit.source;
        op.table = hit.table;
    } else {
        t = std::max(t_c / eff_compute, t_m / eff_bw);
        op.efficiency = op.bound == Bound::compute ? eff_compute : eff_bw;
        op.source = Source::analytical;
    }
    op.engine = op.bound == Bound::compute ? Engine::tensor : Engine::hbm;
    op.time_us = std::max(t * 1e6, c.cal.kernel_floor_us);
}

OpRecord make_op(const char* name, Phase ph, double flops, double wbytes, double abytes) {
    OpRecord op;
    op.name = name;
    op.phase = ph;
    op.flops = flops;
    op.weight_bytes = wbytes;
    op.activation_bytes = abytes;
    return op;
}

// A dense GEMM (M x K) x (K x N) with weights in `w`.
OpRecord gemm_op(const Ctx& c, const char* name, Phase ph, double M, double K, double N, Dtype w) {
    const Dtype comp = c.g.compute_dtype(w);
    const double act_b = comp == Dtype::fp8 ? 1.0 : 2.0;
    kernels::Cost k = kernels::gemm(M, K, N, act_b, bytes_with_scales(w));
    OpRecord op = make_op(name, ph, k.flops, K * N * bytes_with_scales(w), k.bytes - K * N * bytes_with_scales(w));
    // The tables key shapes by int; wider GEMMs (only absurd configs reach 2^31) look up the widest measured shapes.
    const int k_key = int(std::min(K, 1e9)), n_key = int(std::min(N, 1e9));
    TableHit hit = lookup(c, [&](const char* f) { return c.t.gemm(f, M, k_key, n_key); });
    time_op(c, op, comp, hit, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
    return op;
}

OpRecord memory_op(const Ctx& c, const char* name, Phase ph, double bytes) {
    OpRecord op = make_op(name, ph, 0, 0, bytes);
    time_op(c, op, Dtype::bf16, TableHit{}, 1.0, c.cal.hbm_bw_eff);
    return op;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] operators of one layer for T tokens on one attention-DP rank
// ---------------------------------------------------------------------------------------------------------------

struct LayerOps {
    std::vector<OpRecord> pre;   // attention side: runs on the attention rank (before dispatch)
    std::vector<OpRecord> post;  // FFN / experts side (between dispatch and combine)
    double dispatch_us = 0, combine_us = 0, allreduce_us = 0;
    std::vector<OpRecord> comm;  // records of the communication ops
    LayerOps() {
        pre.reserve(12);
        post.reserve(4);
        comm.reserve(4);
    }
};

double sum_us(const std::vector<OpRecord>& v) {
    double s = 0;
    for (const OpRecord& o : v) s += o.time_us;
    return s;
}

struct PhaseShape {
    Phase phase;
    double T;         // tokens in this forward on the attention rank
    double batch;     // sequences (decode) / prompts in the chunk (prefill)
    double ctx;       // decode: KV length; prefill: prompt length
};

void attention_ops(const Ctx& c, const PhaseShape& ps, int window, LayerOps& L) {
    const ModelSpec& m = c.m;
    const double T = ps.T, h = m.hidden;
    const double Hr = double(m.num_heads) / c.tp;  // heads per GPU
    const Phase ph = ps.phase;
    if (m.attn == AttnKind::mla) {
        const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
        if (m.q_lora_rank > 0) {
            // fused q_a + kv_a (replicated across TP ranks), then q_b (head-sharded)
            L.pre.push_back(gemm_op(c, "attn.qkv_a_proj", ph, T, h, m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim, c.w_attn));
            L.pre.push_back(gemm_op(c, "attn.q_b_proj", ph, T, m.q_lora_rank, Hr * qk, c.w_attn));
        } else {
            L.pre.push_back(gemm_op(c, "attn.q_proj", ph, T, h, Hr * qk, c.w_attn));
            L.pre.push_back(gemm_op(c, "attn.kv_a_proj", ph, T, h, m.kv_lora_rank + m.qk_rope_head_dim, c.w_attn));
        }
        const double kvb = dtype_bytes(c.kv);
        if (ph == Phase::decode) {
            // absorbed: q_nope x W_UK -> latent, attention over the latent cache, x W_UV -> v
            const double wb = 2.0;  // absorbed per-head matrices are kept in bf16
            OpRecord qk_op = make_op("attn.bmm_q_wk", ph, 2.0 * T * Hr * m.qk_nope_head_dim * m.kv_lora_rank,
                                     Hr * m.qk_nope_head_dim * m.kv_lora_rank * wb, T * Hr * (m.qk_nope_head_dim + m.kv_lora_rank) * 2.0);
            time_op(c, qk_op, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
            L.pre.push_back(qk_op);
            const double ctx = window > 0 ? std::min(ps.ctx, double(window)) : ps.ctx;
            const double q_per_seq = T / std::max(1.0, ps.batch);  // > 1 with MTP verification
            kernels::Cost a = kernels::mla_decode(ps.batch, ctx, Hr, m.kv_lora_rank, m.qk_rope_head_dim, kvb);
            OpRecord core = make_op("attn.core", ph, a.flops * q_per_seq, 0, a.bytes);
            TableHit hit = lookup(c, [&](const char* f) {
                return c.t.mla_decode(f, int(Hr * q_per_seq + 0.5), m.kv_lora_rank, m.qk_rope_head_dim, ps.batch, ctx,
                                      c.kv == Dtype::fp8);
            });
            time_op(c, core, Dtype::bf16, hit, c.cal.attn_prefill_compute_eff, c.cal.attn_decode_bw_eff);
            L.pre.push_back(core);
            OpRecord ov = make_op("attn.bmm_o_wv", ph, 2.0 * T * Hr * m.kv_lora_rank * m.v_head_dim,
                                  Hr * m.kv_lora_rank * m.v_head_dim * wb, T * Hr * (m.kv_lora_rank + m.v_head_dim) * 2.0);
            time_op(c, ov, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
            L.pre.push_back(ov);
        } else {
            // non-absorbed prefill: kv_b expands the latent to per-head k_nope and v
            L.pre.push_back(gemm_op(c, "attn.kv_b_proj", ph, T, m.kv_lora_rank, Hr * (m.qk_nope_head_dim + m.v_head_dim), c.w_attn));
            const double attended = kernels::causal_attended(ps.ctx, window);
            kernels::Cost a = kernels::mla_prefill(T, attended, Hr, qk, m.v_head_dim);
            OpRecord core = make_op("attn.core", ph, a.flops, 0, a.bytes);
            TableHit hit = lookup(c, [&](const char* f) {
                return c.t.mla_prefill(f, int(Hr), m.qk_nope_head_dim, m.qk_rope_head_dim, ps.ctx, ps.batch, window, c.g.sm_count);
            });
            time_op(c, core, Dtype::bf16, hit, c.cal.attn_prefill_compute_eff, c.cal.hbm_bw_eff);
            L.pre.push_back(core);
        }
        L.pre.push_back(gemm_op(c, "attn.o_proj", ph, T, Hr * m.v_head_dim, h, c.w_attn));
        return;
    }
    const double d = m.head_dim;
    const double Hkv = std::max(1.0, double(m.num_kv_heads) / c.tp);  // KV heads replicated when tp exceeds them
    L.pre.push_back(gemm_op(c, "attn.qkv_proj", ph, T, h, (Hr + 2.0 * Hkv) * d, c.w_attn));
    const double kvb = dtype_bytes(c.kv);
    if (ph == Phase::decode) {
        const double ctx = window > 0 ? std::min(ps.ctx, double(window)) : ps.ctx;
        const double q_per_seq = T / std::max(1.0, ps.batch);
        kernels::Cost a = kernels::mha_decode(ps.batch, ctx, Hr, Hkv, d, kvb);
        OpRecord core = make_op("attn.core", ph, a.flops * q_per_seq, 0, a.bytes);
        TableHit hit = lookup(c, [&](const char* f) {
            return c.t.mha_decode(f, int(Hr), int(Hkv), int(d), ps.batch, ctx, c.kv == Dtype::fp8);
        });
        time_op(c, core, Dtype::bf16, hit, c.cal.attn_prefill_compute_eff, c.cal.attn_decode_bw_eff);
        L.pre.push_back(core);
    } else {
        const double attended = kernels::causal_attended(ps.ctx, window);
        kernels::Cost a = kernels::mha_prefill(T, attended, Hr, Hkv, d, kvb);
        OpRecord core = make_op("attn.core", ph, a.flops, 0, a.bytes);
        TableHit hit = lookup(c, [&](const char* f) {
            return c.t.mha_prefill(f, int(Hr), int(Hkv), int(d), ps.ctx, ps.batch, window, c.g.sm_count);
        });
        time_op(c, core, Dtype::bf16, hit, c.cal.attn_prefill_compute_eff, c.cal.hbm_bw_eff);
        L.pre.push_back(core);
    }
    L.pre.push_back(gemm_op(c, "attn.o_proj", ph, T, Hr * d, h, c.w_attn));
}

void dense_ffn_ops(const Ctx& c, Phase ph, double T, double inter, const char* up_name, const char* down_name,
                   Dtype w, std::vector<OpRecord>& out) {
    const double i_gpu = inter / c.tp;
    out.push_back(gemm_op(c, up_name, ph, T, c.m.hidden, 2.0 * i_gpu, w));
    out.push_back(gemm_op(c, down_name, ph, T, i_gpu, c.m.hidden, w));
}

// Routed experts on the busiest EP rank (seed 000 §4, with the lazy-loading floor of seeds 003/004 and the
// layouts of seed 001).
void expert_ops(const Ctx& c, Phase ph, double T, bool masked, LayerOps& L) {
    const ModelSpec& m = c.m;
    const double tokens_world = T * c.dp;  // distinct tokens entering the MoE across the EP group
    const double pairs = tokens_world * m.top_k / c.ep * c.s.routing.imbalance;
    const double local = double(m.num_experts + c.s.routing.redundant_experts) / c.ep;
    const double active = std::max(std::min(local, 1.0), kernels::expected_active_experts(local, m.top_k * local / m.num_experts, tokens_world));
    const double inter = double(m.moe_intermediate) / c.moe_tp;
    const Dtype comp = c.g.compute_dtype(c.w_exp);
    const double act_b = comp == Dtype::fp8 ? 1.0 : 2.0;

    // router (gate GEMM, replicated): T x h x E
    OpRecord router = make_op("moe.router", ph, 2.0 * T * m.hidden * m.num_experts, double(m.num_experts) * m.hidden * 2.0,
                              T * (m.hidden + m.num_experts) * 2.0);
    time_op(c, router, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
    L.pre.push_back(router);

    if (!masked) {
        // contiguous layout: permute tokens into expert order and back (read + write each way)
        L.post.push_back(memory_op(c, "moe.permute", ph, 2.0 * pairs * m.hidden * act_b));
    }
    kernels::Cost k = kernels::grouped_experts(pairs, active, m.hidden, inter, bytes_with_scales(c.w_exp), act_b);
    const double wbytes = active * 3.0 * m.hidden * inter * bytes_with_scales(c.w_exp);
    OpRecord op = make_op("moe.routed_experts", ph, k.flops, wbytes, k.bytes - wbytes);
    const double tokens_per_gpu = tokens_world / c.ep;
    TableHit hit = lookup(c, [&](const char* f) {
        return c.t.grouped_gemm(f, masked, m.num_experts, m.top_k, m.hidden, int(inter), c.ep, tokens_per_gpu);
    });
    // Analytical fallback: grouped-GEMM efficiency times the tile quantisation of each expert's rows to the
    // kernel's M tile (64 masked, 128 contiguous in DeepGEMM): seed 004's stepwise compute.
    const double tile = masked ? 64.0 : 128.0;
    const double per_expert = pairs / std::max(1.0, active);
    const double tile_eff = per_expert / (std::ceil(per_expert / tile) * tile);
    time_op(c, op, comp, hit, c.cal.grouped_compute_eff * tile_eff, c.cal.hbm_bw_eff);
    L.post.push_back(op);
    if (!masked) L.post.push_back(memory_op(c, "moe.unpermute", ph, 2.0 * pairs * m.hidden * 2.0));
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] communication
// ---------------------------------------------------------------------------------------------------------------

OpRecord comm_op(const char* name, Phase ph, double bytes, Engine eng, double us) {
    OpRecord op = make_op(name, ph, 0, 0, 0);
    op.comm_bytes = bytes;
    op.engine = eng;
    op.bound = Bound::comm;
    op.time_us = us;
    op.efficiency = 1;
    op.source = Source::analytical;
    return op;
}

// Ring all-reduce of T x h bf16 over n GPUs (2(n-1)/n of the data crosses each GPU's link).
OpRecord allreduce_op(const Ctx& c, const char* name, Phase ph, double T, int n) {
    const double bytes = 2.0 * (n - 1) / n * T * c.m.hidden * 2.0;
    const bool inter_node = n > c.gpn;
    const double link = (inter_node ? c.g.rdma_bandwidth_GBps : c.g.nvlink_bandwidth_GBps) * 1e9 * c.cal.allreduce_eff;
    const double us = bytes / link * 1e6 + c.cal.allreduce_latency_us * std::log2(double(n));
    OpRecord op = comm_op(name, ph, bytes, inter_node ? Engine::rdma : Engine::nvlink, us);
    op.efficiency = c.cal.allreduce_eff;
    return op;
}

// Dispatch (tokens to experts) and combine (outputs back) for one MoE layer, T tokens per attention rank.
void ep_comm(const Ctx& c, Phase ph, A2ABackend be, double T, LayerOps& L) {
    const ModelSpec& m = c.m;
    const double h = m.hidden;
    const double k = m.top_k;
    const double db = dtype_bytes(c.disp) + (c.disp == Dtype::fp8 ? 4.0 / 128.0 : 0.0);  // fp8 with 1x128 scales
    const double cb = dtype_bytes(c.comb);
    const double nvl = c.g.nvlink_bandwidth_GBps * 1e9, rdma = c.g.rdma_bandwidth_GBps * 1e9;
    const int group = c.tp * c.dp;  // GPUs whose tokens meet in the MoE
    switch (be) {
        case A2ABackend::none:
        case A2ABackend::auto_:
            if (group > 1) {  // experts tensor-parallel over the attention TP group: all-reduce after the MoE
                OpRecord ar = allreduce_op(c, "comm.moe_allreduce", ph, T, c.tp);
                L.allreduce_us += ar.time_us;
                L.comm.push_back(ar);
            }
            return;
        case A2ABackend::allgather: {
            // all-gather every rank's tokens before the MoE, reduce-scatter the outputs after
            const double tok = T / c.tp;  // tokens each GPU contributes
            const bool inter_node = group > c.gpn;
            const double link = (inter_node ? rdma : nvl) * c.cal.allgather_eff;
            const double ag = tok * (group - 1) * h * db, rs = tok * (group - 1) * h * cb;
            const Engine eng = inter_node ? Engine::rdma : Engine::nvlink;
            L.dispatch_us = ag / link * 1e6 + c.cal.allreduce_latency_us * std::log2(double(group));
            L.combine_us = rs / link * 1e6 + c.cal.allreduce_latency_us * std::log2(double(group));
            L.comm.push_back(comm_op("comm.allgather", ph, ag, eng, L.dispatch_us));
            L.comm.push_back(comm_op("comm.reduce_scatter", ph, rs, eng, L.combine_us));
            return;
        }
        case A2ABackend::deepep_low_latency:
        case A2ABackend::pplx: {
            // Every token-expert pair is its own message (no deduplication); destinations are uniform over the EP
            // ranks, gpn/ep of them inside the NVLink domain (DeepEP >= 2025-06 forwards those over NVLink).
            const double tok = T / c.tp;
            const double f_local = std::min(1.0, double(c.gpn) / c.ep);
            auto t_of = [&](double bytes) {
                const double t_nvl = bytes * f_local / (nvl * c.cal.nvlink_ll_eff);
                const double t_rdma = bytes * (1.0 - f_local) / (rdma * c.cal.rdma_ll_eff);
                return std::max(t_nvl, t_rdma) * 1e6 + c.cal.ll_latency_us;
            };
            const double bd = tok * k * h * db, bc = tok * k * h * cb;
            const Engine eng = f_local < 1.0 ? Engine::rdma : Engine::nvlink;
            L.dispatch_us = t_of(bd);
            L.combine_us = t_of(bc);
            L.comm.push_back(comm_op("comm.dispatch", ph, bd, eng, L.dispatch_us));
            L.comm.push_back(comm_op("comm.combine", ph, bc, eng, L.combine_us));
            return;
        }
        case A2ABackend::deepep_normal: {
            // A token crosses RDMA once per remote node it needs; inside each node NVLink delivers it to every GPU
            // that holds one of its experts (forwarded copies included); combine reduces inside the node before
            // sending back (seed 004, DeepEP normal kernels). Node-limited routing (n_group/topk_group) caps the
            // nodes a token reaches.
            const double tok = T / c.tp;
            const double nodes = std::ceil(double(c.ep) / c.gpn);
            const double distinct_nodes = kernels::distinct_units(nodes, m.n_group, m.topk_group, k);
            const double remote_nodes = distinct_nodes * (nodes - 1.0) / nodes;
            const double distinct_gpus = kernels::distinct_units(c.ep, m.n_group, m.topk_group, k);
            const double p_self = distinct_gpus / c.ep;
            const double nvl_copies = std::max(0.0, distinct_gpus - p_self);
            auto t_of = [&](double bytes_per_copy) {
                const double r = tok * remote_nodes * bytes_per_copy;
                const double n = tok * nvl_copies * bytes_per_copy;
                const double t_r = r / (rdma * c.cal.rdma_normal_eff), t_n = n / (nvl * c.cal.nvlink_normal_eff);
                struct R { double us, bytes; Engine eng; };
                // the record carries the bytes and engine of the bottleneck link
                return t_r >= t_n ? R{t_r * 1e6 + c.cal.normal_latency_us, r, Engine::rdma}
                                  : R{t_n * 1e6 + c.cal.normal_latency_us, n, Engine::nvlink};
            };
            const auto d = t_of(h * db), cmb = t_of(h * cb);
            L.dispatch_us = d.us;
            L.combine_us = cmb.us;
            L.comm.push_back(comm_op("comm.dispatch", ph, d.bytes, d.eng, d.us));
            L.comm.push_back(comm_op("comm.combine", ph, cmb.bytes, cmb.eng, cmb.us));
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] overlap policies and the step
// ---------------------------------------------------------------------------------------------------------------

}  // namespace

// Seed 000 §5.3, two micro-batches: dispatch of the first is exposed, each later stage is the slower of compute and
// communication, the last combine is exposed.
double two_batch_overlap_seed(double mb_compute, double mb_dispatch, double mb_combine) {
    return mb_dispatch + std::max(mb_compute, mb_dispatch) + std::max(mb_compute, mb_combine) + mb_combine;
}

// Decode two-batch overlap (SGLang TBO): four slots per layer, each micro-batch's communication hidden under the
// other's compute stage: [B.attn | A.dispatch] [A.experts | B.dispatch] [B.experts | A.combine] [A.attn' | B.combine].
double two_batch_overlap_slots(double c_pre, double c_post, double dispatch, double combine) {
    return std::max(c_pre, dispatch) + std::max(c_post, dispatch) + std::max(c_post, combine) + std::max(c_pre, combine);
}

namespace {

struct LayerTime {
    double exposed_us = 0;   // per layer, after overlap
    double compute_us = 0;   // per layer, both micro-batches
    double comm_us = 0;
    std::vector<OpRecord> ops;  // per-layer records (both micro-batches folded: times x micro-batches)
};

LayerOps build_layer(const Ctx& c, const PhaseShape& ps, const LayerDesc& ld, A2ABackend be, bool masked) {
    LayerOps L;
    attention_ops(c, ps, ld.window, L);
    L.pre.push_back(memory_op(c, "layer.misc", ps.phase, c.cal.misc_passes * ps.T * c.m.hidden * 2.0));
    if (c.tp > 1) {
        OpRecord ar = allreduce_op(c, "comm.attn_allreduce", ps.phase, ps.T, c.tp);
        L.allreduce_us += ar.time_us;
        L.comm.push_back(ar);
    }
    if (ld.moe) {
        expert_ops(c, ps.phase, ps.T, masked, L);
        if (c.m.shared_intermediate > 0)
            dense_ffn_ops(c, ps.phase, ps.T, c.m.shared_intermediate, "moe.shared_up", "moe.shared_down", c.w_shared, L.pre);
        ep_comm(c, ps.phase, be, ps.T, L);
    } else {
        dense_ffn_ops(c, ps.phase, ps.T, c.m.intermediate, "ffn.gate_up_proj", "ffn.down_proj", c.w_shared, L.post);
        if (c.tp > 1) {
            OpRecord ar = allreduce_op(c, "comm.ffn_allreduce", ps.phase, ps.T, c.tp);
            L.allreduce_us += ar.time_us;
            L.comm.push_back(ar);
        }
    }
    return L;
}

LayerTime layer_time(const Ctx& c, const PhaseShape& ps, const LayerDesc& ld, A2ABackend be, bool masked, bool tbo) {
    LayerTime out;
    const int n_mb = tbo ? 2 : 1;
    PhaseShape mb = ps;
    mb.T = ps.T / n_mb;
    mb.batch = ps.batch / n_mb;
    LayerOps L = build_layer(c, mb, ld, be, masked);
    double c_pre = sum_us(L.pre), c_post = sum_us(L.post);
    const bool has_ep_comm = L.dispatch_us > 0 || L.combine_us > 0;
    double slow = 1.0;
    if (tbo && has_ep_comm) {
        // DeepEP normal kernels occupy comm_sms SMs while they overlap compute; low-latency ones use none.
        if (be == A2ABackend::deepep_normal) slow = 1.0 / c.sm_share;
        c_pre *= slow;
        c_post *= slow;
        if (ps.phase == Phase::prefill)
            out.exposed_us = two_batch_overlap_seed(c_pre + c_post, L.dispatch_us, L.combine_us);
        else
            out.exposed_us = two_batch_overlap_slots(c_pre, c_post, L.dispatch_us, L.combine_us);
        out.exposed_us += n_mb * L.allreduce_us;
    } else {
        out.exposed_us = n_mb * (c_pre + c_post + L.dispatch_us + L.combine_us + L.allreduce_us);
    }
    out.compute_us = n_mb * (c_pre + c_post);
    out.comm_us = n_mb * (L.dispatch_us + L.combine_us + L.allreduce_us);
    // Records: per-layer totals over the micro-batches; exposed share of comm spread over the comm records.
    const double hidden_comm = std::max(0.0, out.compute_us + out.comm_us - out.exposed_us);
    const double comm_total = out.comm_us;
    for (auto* v : {&L.pre, &L.post}) {
        for (OpRecord& o : *v) {
            o.time_us *= n_mb * slow;
            o.flops *= n_mb;
            o.activation_bytes *= n_mb;
            o.weight_bytes *= n_mb;
            o.exposed_us = o.time_us;
            out.ops.push_back(o);
        }
    }
    for (OpRecord& o : L.comm) {
        o.time_us *= n_mb;
        o.comm_bytes *= n_mb;
        o.exposed_us = comm_total > 0 ? o.time_us * std::max(0.0, 1.0 - hidden_comm / comm_total) : 0;
        out.ops.push_back(o);
    }
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] memory
// ---------------------------------------------------------------------------------------------------------------

struct MemoryModel {
    double fixed = 0;          // weights, reserve, workspace floors, fixed comm buffers
    double per_seq = 0;        // bytes per decode sequence (KV at the context + per-sequence activations/buffers)
    double prefill_peak = 0;   // activation + workspace peak of the largest prefill chunk (independent of batch)
    double per_seq_decode_act = 0;  // decode activation bytes per sequence (competes with prefill_peak)
};

void memory(const Ctx& c, Estimate& e) {
    const ModelSpec& m = c.m;
    const Scenario& s = c.s;
    MemoryResult& r = e.memory;
    const double layers_share = 1.0 / c.pp;  // balanced stages
    const double h = m.hidden;
    // --- weights by part ---
    const double attn_sharded = [&] {
        if (m.attn == AttnKind::mla) {
            const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
            const double repl = m.q_lora_rank > 0 ? h * (m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim)
                                                  : h * (m.kv_lora_rank + m.qk_rope_head_dim);
            const double shard = (m.q_lora_rank > 0 ? double(m.q_lora_rank) : h) * m.num_heads * qk +
                                 double(m.kv_lora_rank) * m.num_heads * (m.qk_nope_head_dim + m.v_head_dim) +
                                 double(m.num_heads) * m.v_head_dim * h;
            return repl + shard / c.tp;
        }
        const double kv_rank = std::max(1.0, double(m.num_kv_heads) / c.tp);
        return h * (double(m.num_heads) / c.tp) * m.head_dim * 2.0 + 2.0 * h * kv_rank * m.head_dim;
    }();
    const double n_layers = m.num_layers * layers_share;
    const double n_moe = m.n_moe_layers * layers_share, n_dense = m.n_dense_layers * layers_share;
    r.weights_attention_bytes = n_layers * attn_sharded * bytes_with_scales(c.w_attn);
    const double local_experts = m.is_moe() ? double(m.num_experts + s.routing.redundant_experts) / c.ep : 0.0;
    r.weights_experts_bytes = n_moe * local_experts * m.expert_params() / c.moe_tp * bytes_with_scales(c.w_exp);
    r.weights_shared_bytes = n_moe * m.shared_params() / c.tp * bytes_with_scales(c.w_shared);
    r.weights_dense_ffn_bytes = n_dense * m.dense_ffn_params() / c.tp * bytes_with_scales(c.w_shared);
    const double embed = double(m.vocab) * h / c.tp * bytes_with_scales(c.w_embed);
    // With pp > 1 the first stage holds the embedding and the last the LM head; report the heavier stage.
    r.weights_embedding_bytes = c.pp > 1 ? embed : embed * (m.tie_embeddings ? 1.0 : 2.0);
    r.weights_other_bytes = n_moe * m.router_params() * 4.0 + n_layers * 2.0 * h * 4.0 + h * 4.0;  // router & norms fp32
    if (s.runtime.mtp_draft_tokens > 0 && m.mtp_layers > 0) {
        const double mtp_layer = attn_sharded * bytes_with_scales(c.w_attn) +
                                 (m.is_moe() ? local_experts * m.expert_params() / c.moe_tp * bytes_with_scales(c.w_exp) +
                                                   m.shared_params() / c.tp * bytes_with_scales(c.w_shared)
                                             : m.dense_ffn_params() / c.tp * bytes_with_scales(c.w_shared)) +
                                 2.0 * h * h * bytes_with_scales(c.w_attn);  // eh_proj
        r.weights_mtp_bytes = m.mtp_layers * mtp_layer;
    }
    r.weights_bytes = r.weights_attention_bytes + r.weights_experts_bytes + r.weights_shared_bytes +
                      r.weights_dense_ffn_bytes + r.weights_embedding_bytes + r.weights_other_bytes + r.weights_mtp_bytes;

    // --- KV cache ---
    const double kv_heads_gpu = std::max(1.0, double(m.num_kv_heads) / c.tp);
    const double kvb = dtype_bytes(c.kv);
    const double block = s.runtime.kv_block_tokens;
    auto kv_request = [&](double ctx) {
        const double rounded = std::ceil(ctx / block) * block;
        return m.kv_bytes_per_request(rounded, kv_heads_gpu, kvb, layers_share);
    };
    r.kv_bytes_per_token = m.compressed_kv() ? kv_request(1e6) / 1e6
                                             : m.kv_bytes_per_request(1.0, kv_heads_gpu, kvb, layers_share);
    const double ctx = s.context_len();
    const int n_draft = s.runtime.mtp_draft_tokens;
    const double per_seq_kv = kv_request(ctx + n_draft);

    // --- activations (seed 002 §4) ---
    const double Hr = double(m.num_heads) / c.tp;
    const double qdim = m.attn == AttnKind::mla ? double(m.qk_nope_head_dim + m.qk_rope_head_dim) : double(m.head_dim);
    const double n_mb = s.runtime.two_batch_overlap ? 2.0 : 1.0;
    const bool prefill = s.workload.phase != PhaseSel::decode;
    const bool decode = s.workload.phase != PhaseSel::prefill;
    const double C = prefill ? s.workload.prefill_tokens / n_mb : 0.0;  // two micro-batches halve the live chunk
    const double ffn_dense = m.n_dense_layers > 0 ? 2.0 * m.intermediate / c.tp : 0.0;
    const double moe_pairs_per_token = m.is_moe() ? double(c.dp) * m.top_k / c.ep * s.routing.imbalance : 0.0;
    const double moe_inter = m.is_moe() ? 2.0 * m.moe_intermediate / c.moe_tp * moe_pairs_per_token + 2.0 * m.shared_intermediate / c.tp : 0.0;
    const double ffn_per_token = std::max(ffn_dense, moe_inter) * 4.0;  // gate+up in fp32 (seed 002 §4)
    const double seq_per_chunk = std::max(1.0, C / std::max(1, s.workload.prompt_len));
    // residual stream: bf16 hidden + residual, or hc_mult fp32 streams with hyper-connections (seed 002 §4)
    const double residual = m.hc_mult > 1 ? h * m.hc_mult * 4.0 : h * 2.0 * 2.0;
    r.activation_prefill_bytes = C * (residual + Hr * qdim * 2.0 * 3.0 + ffn_per_token) +
                                 seq_per_chunk * double(m.vocab) / c.tp * 4.0;
    const double dec_tok = 1.0 + n_draft;
    const double act_per_seq = dec_tok * (residual + std::max(Hr * qdim * 2.0, h * 4.0 + ffn_per_token / 2.0)) +
                               n_draft * 2.0 * h * 2.0;  // MTP: embedding + hidden concatenated (seed 002 §7)
    // fp32 logits of every verified position, plus the draft heads' logits kept until verification (seed 002 §7)
    const double logits_per_seq = (dec_tok + n_draft) * double(m.vocab) / c.tp * 4.0;
    r.logits_bytes = (decode ? s.workload.batch * logits_per_seq : 0.0);

    // --- workspace ---
    const double local_for_ws = std::max(1.0, local_experts);
    const double gg_ws_per_token = m.is_moe() ? moe_pairs_per_token * c.cal.grouped_load_factor * m.moe_intermediate / c.moe_tp * 4.0 : 0.0;
    (void)local_for_ws;
    const double attn_ws_per_seq = Hr * (m.attn == AttnKind::mla ? m.kv_lora_rank : m.head_dim) * 4.0 * 16.0;  // split-KV partials
    const double ws_fixed = c.cal.cublas_workspace_MB * 1e6;
    const double ws_prefill = C * gg_ws_per_token;
    const double ws_per_seq = dec_tok * gg_ws_per_token + attn_ws_per_seq;

    // --- communication buffers (seed 002 §5) ---
    double comm_fixed = 0, comm_per_seq = 0;
    if (c.tp > 1 || c.dp > 1) comm_fixed += c.cal.nccl_buffer_MB * 1e6;
    const A2ABackend bp = e.prefill_backend, bd = e.decode_backend;
    const double db = dtype_bytes(c.disp) + (c.disp == Dtype::fp8 ? 4.0 / 128 : 0), cb = dtype_bytes(c.comb);
    if (m.is_moe() && (bp == A2ABackend::deepep_normal || bd == A2ABackend::deepep_normal)) {
        const double chunk = std::max<double>(s.workload.prefill_tokens / n_mb, s.workload.batch);
        comm_fixed += chunk * m.top_k * std::min(1.0, double(c.gpn) / c.ep + 1.0 / c.ep) * h * (db + cb) * 2.0;  // double-buffered
    }
    if (m.is_moe() && (bd == A2ABackend::deepep_low_latency || bd == A2ABackend::pplx)) {
        // receive buffers [local experts][ranks x max tokens per rank][hidden], dispatch + combine, double-buffered
        comm_per_seq += dec_tok * local_experts * h * (db + cb) * 2.0;
    }

    // --- totals as F + per_seq * B + max(prefill peak, decode per-seq * B) ---
    const double reserve = (s.runtime.reserve_GB >= 0 ? s.runtime.reserve_GB : c.cal.reserve_GB) * 1e9;
    const double fixed = r.weights_bytes + reserve + ws_fixed + comm_fixed;
    const double per_seq_peak = decode ? act_per_seq + logits_per_seq + ws_per_seq : 0.0;
    const double prefill_peak = r.activation_prefill_bytes + ws_prefill;
    // prefill-only: the KV of the chunk's prompts is held too
    const double prefill_kv = prefill && !decode ? seq_per_chunk * kv_request(s.workload.prompt_len) : 0.0;

    const double B = decode ? s.workload.batch : 0.0;
    r.kv_cache_bytes = decode ? B * per_seq_kv : prefill_kv;
    r.activation_decode_bytes = B * (act_per_seq + logits_per_seq);
    const bool prefill_dominates = prefill_peak >= B * per_seq_peak;
    r.activation_bytes = prefill_dominates ? r.activation_prefill_bytes : r.activation_decode_bytes;
    r.workspace_bytes = ws_fixed + (prefill_dominates ? ws_prefill : B * ws_per_seq);
    r.comm_buffer_bytes = comm_fixed + B * comm_per_seq;
    r.reserved_bytes = reserve;
    r.total_bytes = r.weights_bytes + r.kv_cache_bytes + r.activation_bytes + r.workspace_bytes + r.comm_buffer_bytes + r.reserved_bytes;
    r.capacity_bytes = c.g.hbm_capacity_GiB * 1073741824.0;
    r.usable_bytes = r.capacity_bytes * s.runtime.mem_fraction;
    r.fits = r.total_bytes <= r.usable_bytes;
    r.shortfall_bytes = r.fits ? 0.0 : r.total_bytes - r.usable_bytes;

    // --- largest batch at this context: F + a*B + max(P, q*B) <= U, solved exactly ---
    const double U = r.usable_bytes - fixed - prefill_kv;
    const double a = per_seq_kv + comm_per_seq, q = act_per_seq + logits_per_seq + ws_per_seq, P = prefill ? prefill_peak : 0.0;
    double best = 0;
    if (U > P && a > 0) {
        double b1 = (U - P) / a;                // while the prefill peak dominates
        if (q * b1 > P) b1 = U / (a + q);       // decode activations dominate
        best = std::floor(std::max(0.0, b1));
    }
    r.max_batch = std::min(best, 1e9);
    // --- largest context at this batch: the KV budget per sequence, inverted by bisection (KV is monotone) ---
    if (decode && B > 0) {
        const double budget = (r.usable_bytes - (r.total_bytes - r.kv_cache_bytes)) / B;
        if (budget <= kv_request(1.0)) {
            r.max_context = 0;
        } else if (!m.compressed_kv() && m.n_window_layers == 0) {
            // linear in the context: invert directly, then round down to whole blocks
            const double rate = m.kv_bytes_per_request(1.0, kv_heads_gpu, kvb, layers_share);
            r.max_context = std::min(1e9, std::floor(budget / rate / block) * block);
        } else {
            double lo = 1, hi = 1;
            while (hi < 1e9 && kv_request(hi) <= budget) hi *= 2;
            if (hi >= 1e9) {
                r.max_context = 1e9;  // windowed/compressed caches may never fill
            } else {
                for (int i = 0; i < 48 && hi - lo > 1; ++i) {
                    const double mid = std::floor((lo + hi) / 2);
                    (kv_request(mid) <= budget ? lo : hi) = mid;
                }
                r.max_context = std::floor(lo / block) * block;
            }
        }
    }
    for (double* v : {&r.weights_bytes, &r.kv_cache_bytes, &r.activation_bytes, &r.workspace_bytes, &r.comm_buffer_bytes,
                      &r.reserved_bytes, &r.weights_attention_bytes, &r.weights_experts_bytes, &r.weights_shared_bytes,
                      &r.weights_dense_ffn_bytes, &r.weights_embedding_bytes, &r.weights_other_bytes, &r.weights_mtp_bytes,
                      &r.activation_prefill_bytes, &r.activation_decode_bytes, &r.logits_bytes})
        *v = std::ceil(*v);  // whole bytes
    r.total_bytes = r.weights_bytes + r.kv_cache_bytes + r.activation_bytes + r.workspace_bytes + r.comm_buffer_bytes + r.reserved_bytes;
    r.capacity_bytes = std::floor(r.capacity_bytes);
    r.usable_bytes = std::floor(r.usable_bytes);
    r.fits = r.total_bytes <= r.usable_bytes;
    r.shortfall_bytes = r.fits ? 0.0 : r.total_bytes - r.usable_bytes;
    const double world = double(c.tp) * c.dp * c.pp;
    r.cluster_weights_bytes = r.weights_bytes * world;
    r.cluster_kv_cache_bytes = r.kv_cache_bytes * world;
    r.cluster_max_batch = r.max_batch * c.dp;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] the step
// ---------------------------------------------------------------------------------------------------------------

void add_share(PhaseResult& p, const OpRecord& o, double weight) {
    switch (o.source) {
        case Source::measured: p.share_measured += weight; break;
        case Source::interpolated: p.share_interpolated += weight; break;
        case Source::transferred: p.share_transferred += weight; break;
        case Source::analytical: p.share_analytical += weight; break;
    }
}

void run_phase(const Ctx& c, Estimate& e, const PhaseShape& ps, A2ABackend be, PhaseResult& out) {
    const Scenario& s = c.s;
    const ModelSpec& m = c.m;
    out.computed = true;
    const bool masked = s.runtime.expert_layout == ExpertLayout::masked ||
                        (s.runtime.expert_layout == ExpertLayout::auto_ &&
                         (be == A2ABackend::deepep_low_latency || be == A2ABackend::pplx));
    const bool tbo = s.runtime.two_batch_overlap && ps.T >= 2;
    // Distinct layer kinds (MoE or dense, window) with their counts.
    struct Group { LayerDesc d; int count; };
    std::vector<Group> groups;
    for (const LayerDesc& l : m.layers) {
        auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.d.moe == l.moe && g.d.window == l.window; });
        if (it == groups.end()) groups.push_back({l, 1});
        else it->count++;
    }
    double total_us = 0, compute_us = 0, comm_us = 0, exposed_comm_us = 0;
    std::vector<std::pair<OpRecord, double>> weighted;  // op, weight (us per step)
    for (size_t gi = 0; gi < groups.size(); ++gi) {
        const Group& g = groups[gi];
        LayerTime lt = layer_time(c, ps, g.d, be, masked, tbo);
        LayerGroup lg;
        lg.label = std::string(g.d.moe ? "MoE layers" : "dense layers") + (g.d.window > 0 ? " (window " + std::to_string(g.d.window) + ")" : "");
        lg.count = g.count;
        lg.time_us = lt.exposed_us;
        const int gidx = int(out.groups.size());
        out.groups.push_back(lg);
        total_us += g.count * lt.exposed_us;
        compute_us += g.count * lt.compute_us;
        comm_us += g.count * lt.comm_us;
        exposed_comm_us += g.count * std::max(0.0, lt.exposed_us - lt.compute_us);
        for (OpRecord& o : lt.ops) {
            o.group = gidx;
            o.count = g.count;
            e.ops.push_back(o);
        }
    }
    // Embedding lookup and LM head (decode: every token; prefill: the last token of each prompt).
    const double head_rows = ps.phase == Phase::decode ? ps.T : std::max(1.0, ps.T / std::max(1, s.workload.prompt_len));
    LayerGroup head;
    head.label = "embedding + LM head";
    head.count = 1;
    {
        OpRecord emb = memory_op(c, "embed.lookup", ps.phase, ps.T * m.hidden * 2.0 * 2.0);
        OpRecord lm = gemm_op(c, "lm_head", ps.phase, head_rows, m.hidden, double(m.vocab) / c.tp, c.w_embed);
        const int gidx = int(out.groups.size());
        for (OpRecord* o : {&emb, &lm}) {
            o->group = gidx;
            o->count = 1;
            o->exposed_us = o->time_us;
            head.time_us += o->time_us;
            e.ops.push_back(*o);
        }
        out.groups.push_back(head);
        total_us += head.time_us;
        compute_us += head.time_us;
    }
    // MTP drafts (decode): each draft token runs the MTP module (one decoder layer + eh_proj) and the LM head on the batch.
    if (ps.phase == Phase::decode && s.runtime.mtp_draft_tokens > 0) {
        PhaseShape d = ps;
        d.T = ps.batch;
        LayerDesc ld;
        ld.moe = m.is_moe();
        LayerTime lt = layer_time(c, d, ld, be, masked, false);
        OpRecord eh = gemm_op(c, "mtp.eh_proj", ps.phase, d.T, 2.0 * m.hidden, m.hidden, c.w_attn);
        OpRecord lm = gemm_op(c, "mtp.lm_head", ps.phase, d.T, m.hidden, double(m.vocab) / c.tp, c.w_embed);
        const double per_draft = lt.exposed_us + eh.time_us + lm.time_us;
        LayerGroup g;
        g.label = "MTP draft";
        g.count = s.runtime.mtp_draft_tokens;
        g.time_us = per_draft;
        const int gidx = int(out.groups.size());
        out.groups.push_back(g);
        for (OpRecord& o : lt.ops) { o.group = gidx; o.count = g.count; o.name = o.name; e.ops.push_back(o); }
        for (OpRecord* o : {&eh, &lm}) { o->group = gidx; o->count = g.count; o->exposed_us = o->time_us; e.ops.push_back(*o); }
        total_us += g.count * per_draft;
        compute_us += g.count * (lt.compute_us + eh.time_us + lm.time_us);
        comm_us += g.count * lt.comm_us;
    }
    // Pipeline stages: a forward crosses every stage; p2p activation sends between stages.
    if (c.pp > 1) {
        const double bytes = ps.T * m.hidden * 2.0;
        const double link = (c.tp * c.dp * c.pp > c.gpn ? c.g.rdma_bandwidth_GBps : c.g.nvlink_bandwidth_GBps) * 1e9;
        const double p2p_us = (c.pp - 1) * (bytes / link * 1e6 + c.cal.allreduce_latency_us);
        OpRecord p2p = comm_op("comm.pp_send", ps.phase, bytes * (c.pp - 1), Engine::nvlink, p2p_us);
        p2p.group = int(out.groups.size()) - 1;
        p2p.count = 1;
        p2p.exposed_us = p2p_us;
        e.ops.push_back(p2p);
        total_us += p2p_us;
        comm_us += p2p_us;
        exposed_comm_us += p2p_us;
    }
    const double overhead_ms = ps.phase == Phase::prefill
                                   ? (s.runtime.prefill_overhead_ms >= 0 ? s.runtime.prefill_overhead_ms : c.cal.prefill_overhead_ms)
                                   : (s.runtime.decode_overhead_ms >= 0 ? s.runtime.decode_overhead_ms : c.cal.decode_overhead_ms);
    out.overhead_ms = overhead_ms;
    out.step_ms = total_us / 1000.0 + overhead_ms;
    out.compute_ms = compute_us / 1000.0;
    out.comm_ms = comm_us / 1000.0;
    out.exposed_comm_ms = exposed_comm_us / 1000.0;
    // provenance shares over compute-op time
    double denom = 0;
    for (const OpRecord& o : e.ops)
        if (o.phase == ps.phase && o.bound != Bound::comm) denom += o.time_us * o.count;
    if (denom > 0)
        for (const OpRecord& o : e.ops)
            if (o.phase == ps.phase && o.bound != Bound::comm) add_share(out, o, o.time_us * o.count / denom);
    const double world_tp = c.tp;
    if (ps.phase == Phase::prefill) {
        const double stage_ms = out.step_ms / c.pp;
        const double chunks = std::ceil(double(s.workload.prompt_len) / s.workload.prefill_tokens);
        out.tokens_per_step = ps.T;
        out.pp_bubble_ms = (c.pp - 1) * stage_ms;
        out.ttft_ms = chunks * (c.pp > 1 ? stage_ms : out.step_ms) + out.pp_bubble_ms;
        out.tokens_per_s_per_gpu = ps.T / (out.step_ms / 1000.0) / world_tp;
        out.tokens_per_s_cluster = out.tokens_per_s_per_gpu * c.tp * c.dp * c.pp;
    } else {
        double accept = 1.0, a = 1.0;
        for (int j = 0; j < s.runtime.mtp_draft_tokens; ++j) {
            a *= s.runtime.mtp_acceptance_rate;
            accept += a;
        }
        out.tokens_per_step = ps.batch * accept;
        out.tpot_ms = out.step_ms / accept;
        out.tokens_per_s_per_user = 1000.0 / out.tpot_ms;
        out.tokens_per_s_per_gpu = ps.batch * accept / (out.step_ms / 1000.0) / world_tp;
        out.tokens_per_s_cluster = out.tokens_per_s_per_gpu * c.tp * c.dp * c.pp;
    }
}

bool all_finite(const Estimate& e) {
    auto ok = [](double v) { return std::isfinite(v); };
    for (const PhaseResult* p : {&e.prefill, &e.decode})
        if (!ok(p->step_ms) || !ok(p->ttft_ms) || !ok(p->tpot_ms) || !ok(p->tokens_per_s_per_gpu) || !ok(p->tokens_per_s_per_user))
            return false;
    const MemoryResult& m = e.memory;
    for (double v : {m.weights_bytes, m.kv_cache_bytes, m.activation_bytes, m.workspace_bytes, m.comm_buffer_bytes,
                     m.reserved_bytes, m.total_bytes, m.max_batch, m.max_context, m.kv_bytes_per_token})
        if (!ok(v) || v < 0) return false;
    for (const OpRecord& o : e.ops)
        if (!ok(o.time_us) || !ok(o.flops) || !ok(o.exposed_us)) return false;
    return true;
}

A2ABackend resolve_backend(const Scenario& s, Phase ph) {
    const A2ABackend b = s.runtime.a2a_backend;
    if (!s.model.is_moe()) return A2ABackend::none;
    if (b != A2ABackend::auto_) return b;
    if (s.parallel.ep > 1) return ph == Phase::prefill ? A2ABackend::deepep_normal : A2ABackend::deepep_low_latency;
    if (s.parallel.dp > 1) return A2ABackend::allgather;
    return A2ABackend::none;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] estimate()
// ---------------------------------------------------------------------------------------------------------------

Estimate estimate(const Scenario& s, const Tables& tables) {
    Estimate e;
    e.errors = validate_scenario(s);
    const ModelSpec& m = s.model;
    e.total_params = m.total_params;
    e.active_params = m.active_params;
    if (!e.errors.empty()) return e;
    e.prefill_backend = resolve_backend(s, Phase::prefill);
    e.decode_backend = resolve_backend(s, Phase::decode);
    for (A2ABackend b : {e.prefill_backend, e.decode_backend})
        if (b == A2ABackend::none && m.is_moe() && (s.parallel.ep > 1 || s.parallel.dp > 1)) {
            e.errors.push_back({"runtime.a2a_backend", "none cannot move tokens between GPUs; with ep > 1 or dp > 1 pick allgather, deepep_normal, deepep_low_latency or pplx"});
            return e;
        }
    // Token counts that would overflow double precision arithmetic are rejected by the field ranges; guard the
    // product of the largest ones anyway.
    const double tokens = double(s.workload.batch) * (1 + s.runtime.mtp_draft_tokens) + s.workload.prefill_tokens;
    if (tokens * s.parallel.dp * m.hidden > 1e18) {
        e.errors.push_back({"workload", "token counts too large to model"});
        return e;
    }

    const Dtype base = m.weight_dtype;
    Ctx c{s, tables, tables.calibration, m, s.gpu, e,
          stored(s.gpu, pick(s.precision.attention, pick(s.precision.weights, base))),
          stored(s.gpu, pick(s.precision.experts, s.precision.weights.is_auto ? m.expert_dtype : s.precision.weights.value)),
          stored(s.gpu, pick(s.precision.shared_experts, pick(s.precision.weights, base))),
          pick(s.precision.embedding, m.dtype),
          pick(s.precision.kv_cache, Dtype::bf16),
          Dtype::bf16, pick(s.precision.combine, Dtype::bf16),
          s.gpu.hbm_bandwidth_GBps * 1e9,
          s.parallel.tp, s.parallel.dp, s.parallel.ep, s.parallel.pp, s.moe_tp(), s.gpus_per_node()};
    // embedding stays 16-bit unless set explicitly (checkpoints keep it unquantised)
    if (c.w_embed == Dtype::fp32) c.w_embed = Dtype::bf16;
    const Dtype exp_compute = s.gpu.compute_dtype(c.w_exp);
    c.disp = pick(s.precision.dispatch, (exp_compute == Dtype::fp8 || is_fp4_like(exp_compute)) ? Dtype::fp8 : Dtype::bf16);
    c.sm_share = std::max(0.05, 1.0 - double(s.runtime.comm_sms) / s.gpu.sm_count);
    int nf = 0;
    auto add_family = [&](const std::string& f) {
        if (f.empty() || nf >= 4) return;
        for (int i = 0; i < nf; ++i)
            if (f == c.families[i]) return;
        if (!tables.has_family(f)) return;
        c.families[nf++] = f == "h800" ? "h800" : f == "h100" ? "h100" : f == "h20" ? "h20" : nullptr;
        if (!c.families[nf - 1]) --nf;
    };
    add_family(s.gpu.tables);
    c.own_tables = nf == 1;
    add_family(s.gpu.tables_fallback);
    add_family("h800");
    add_family("h100");
    e.weights_dtype = c.w_attn;
    e.experts_dtype = c.w_exp;
    e.kv_dtype = c.kv;
    if (s.gpu.tables.empty())
        e.warnings.push_back(s.gpu.name + " has no measured kernel tables: efficiencies are borrowed from " +
                             (c.families[0] ? c.families[0] : "none") + " through the roofline");
    if (is_fp4_like(pick(s.precision.experts, m.expert_dtype)) && c.w_exp == Dtype::fp8)
        e.warnings.push_back("FP4 experts are pre-expanded to FP8 on " + s.gpu.name + " (no FP4 tensor cores): expert memory doubles");

    const bool want_prefill = s.workload.phase != PhaseSel::decode;
    const bool want_decode = s.workload.phase != PhaseSel::prefill;
    e.ops.reserve(64);
    if (want_prefill) {
        PhaseShape ps{Phase::prefill, double(s.workload.prefill_tokens),
                      std::max(1.0, double(s.workload.prefill_tokens) / s.workload.prompt_len), double(s.workload.prompt_len)};
        run_phase(c, e, ps, e.prefill_backend, e.prefill);
    }
    if (want_decode) {
        PhaseShape ps{Phase::decode, double(s.workload.batch) * (1 + s.runtime.mtp_draft_tokens), double(s.workload.batch),
                      double(s.context_len())};
        run_phase(c, e, ps, e.decode_backend, e.decode);
    }
    memory(c, e);
    if (!e.memory.fits) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "does not fit: needs %.1f GB per GPU, %.1f GB usable (%.1f GB short)", e.memory.total_bytes / 1e9,
                      e.memory.usable_bytes / 1e9, e.memory.shortfall_bytes / 1e9);
        e.warnings.push_back(buf);
    }
    if (!all_finite(e)) {
        e.errors.push_back({"", "the model produced a non-finite number for this input (please report it)"});
        return e;
    }
    e.ok = true;
    return e;
}

}  // namespace moe
