// comm.cpp — communication: TP all-reduce, all-gather / reduce-scatter, DeepEP normal and low-latency, pplx (DESIGN §5).
// Part of the step model; core/estimate_detail.h lists the files and what each computes.
#include "core/step/estimate_detail.h"

namespace moe::detail {

// MoRI-EP IntraNode on 8 x MI355X, ROCm/mori docs/EP8.en.md (bench_data/README.md, "MoRI-EP"). Per xGMI link (76.8 GB/s
// one way), one peer's share of a dispatch (P(a token needs the peer) = 1 - C(224,8)/C(256,8) = 0.66183): BF16
// 524,288 x 0.66183 x 14,336 B in 102,501.6 us = 48.53 GB/s = 0.632 of the link; FP8 (7,168 B, no scales) in 52,745.7 us = 0.614;
// combine (BF16, zero-copy) in 91,308.9 us = 0.709. Fixed costs: the 1-token rows, 32.4 / 28.6 / 19.4 us.
constexpr double kMoriDispatchBf16Eff = 0.632, kMoriDispatchBf16LatencyUs = 32.4;
constexpr double kMoriDispatchFp8Eff = 0.614, kMoriDispatchFp8LatencyUs = 28.6;
constexpr double kMoriCombineEff = 0.709, kMoriCombineLatencyUs = 19.4;

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

namespace {

// A collective from the measured tables (bench_data/comm/<family>/collectives.csv), tried in the order of `impls`.
// The tables describe the interconnect as much as the GPU, so only the GPU's own family's are used, and only inside
// one NVLink domain (n <= gpus_per_node): a GPU that borrows another family's kernel tables keeps the formulas. A
// preset edited to another NVLink bandwidth than the table GPU's looks the table up at bytes x (table link / this
// link): the bandwidth-bound part scales, the small-message latency stays (source `transferred`).
//
// Where the own family has no series at that GPU count (GB200's trays hold 4 GPUs, so AIC measured 2 and 4) or the
// GPU has no family of its own (B300, GB300), a family it borrows kernels from with the same NVLink generation (the
// same per-GPU NVLink bandwidth through NVSwitch: B200's HGX board for GB200, B300 and GB300) stands in, its series
// `transferred`: a small all-reduce there takes 5-8 us where the ring formula's latency term says 30.
CommHit table_collective(const Ctx& c, const char* op, std::initializer_list<const char*> impls, int n, double bytes) {
    CommHit h;
    if (!c.families[0] || n < 2 || n > c.gpn || !(c.g.nvlink_bandwidth_GBps > 0)) return h;
    for (int i = 0; i < 4 && c.families[i] && !h.found; ++i) {
        const FamilyRef* ref = family_ref(c.families[i]);
        if (!ref) continue;
        const bool own = i == 0 && c.own_tables;
        if (!own && std::fabs(ref->nvlink_GBps - c.g.nvlink_bandwidth_GBps) > 1e-6 * c.g.nvlink_bandwidth_GBps) continue;
        const double scale = ref->nvlink_GBps / c.g.nvlink_bandwidth_GBps;
        for (const char* impl : impls) {
            h = c.t.collective(c.families[i], op, impl, n, bytes * scale);
            if (h.found) break;
        }
        if (h.found && (!own || std::fabs(scale - 1.0) > 1e-3)) h.source = Source::transferred;
    }
    return h;
}

// A record timed by a table hit; efficiency = the record's bytes over the link at the measured time.
void from_table(OpRecord& op, const CommHit& h, double link_Bps) {
    op.time_us = h.latency_us;
    op.source = h.source;
    op.table = h.table;
    op.efficiency = std::min(1.0, op.comm_bytes / link_Bps / (h.latency_us * 1e-6));
}

}  // namespace

// The measured all-reduce series to use, best first, for the scenario's engine (runtime.engine). SGLang and vLLM run
// decode inside CUDA graphs (their custom all-reduce, graph-captured) and prefill eagerly (the same kernel with its
// buffer registered per call: the *_eager series); TensorRT-LLM's own all-reduce runs the same way in both phases.
// `ideal` takes the engine the calculator assumed before engines existed (SGLang). NCCL where a series is missing.
static CommHit engine_allreduce(const Ctx& c, Phase ph, int n, double message) {
    const bool pf = ph == Phase::prefill;
    switch (c.s.runtime.engine) {
        case EngineKind::vllm:
            return pf ? table_collective(c, "all_reduce", {"vllm_eager", "vllm", "nccl"}, n, message)
                      : table_collective(c, "all_reduce", {"vllm", "nccl"}, n, message);
        case EngineKind::trtllm: return table_collective(c, "all_reduce", {"trtllm", "nccl"}, n, message);
        case EngineKind::sglang:
        case EngineKind::ideal: break;
    }
    return pf ? table_collective(c, "all_reduce", {"sglang_eager", "sglang", "nccl"}, n, message)
              : table_collective(c, "all_reduce", {"sglang", "nccl"}, n, message);
}

// TP all-reduce of T x h bf16 over n GPUs. Measured: the engine's own all-reduce (engine_allreduce), NCCL where that
// series is missing.
// Fallback (analytical): ring, 2(n-1)/n of the data crosses each GPU's link, plus a latency per log2 n step.
static OpRecord allreduce_op_uncached(const Ctx& c, const char* name, Phase ph, double T, int n);

OpRecord allreduce_op(const Ctx& c, const char* name, Phase ph, double T, int n) {
    auto& last = c.last_allreduce;
    if (last.valid && last.ph == ph && last.T == T && last.n == n) {
        OpRecord op = last.op;
        op.name = name;
        return op;
    }
    last.op = allreduce_op_uncached(c, name, ph, T, n);
    last.valid = true;
    last.ph = ph;
    last.T = T;
    last.n = n;
    return last.op;
}

static OpRecord allreduce_op_uncached(const Ctx& c, const char* name, Phase ph, double T, int n) {
    if (c.g.topology == Topology::mesh) return mesh_allreduce_op(c, name, ph, T, n);
    const double bytes = 2.0 * (n - 1) / n * T * c.m.hidden * 2.0;
    const bool inter_node = n > c.gpn;
    const double link_Bps = (inter_node ? c.g.rdma_bandwidth_GBps : c.g.nvlink_bandwidth_GBps) * 1e9;
    const double link = link_Bps * c.cal.allreduce_eff;
    const double us = bytes / link * 1e6 + c.cal.allreduce_latency_us * std::log2(double(n));
    OpRecord op = comm_op(name, ph, bytes, inter_node ? Engine::rdma : Engine::nvlink, us);
    op.efficiency = c.cal.allreduce_eff;
    const double message = T * c.m.hidden * 2.0;  // the buffer being reduced
    const CommHit h = engine_allreduce(c, ph, n, message);
    if (h.found) from_table(op, h, link_Bps);
    return op;
}

// Each of n ranks contributes `bytes_per_rank` and receives the others' ((n - 1) x bytes_per_rank): NCCL's measured
// all-gather of the gathered output inside one NVLink domain, else the link at allgather_eff plus a latency per
// log2 n step (the all-gather of the exposed ring formula).
OpRecord attn_allgather_op(const Ctx& c, const char* name, Phase ph, double bytes_per_rank, int n) {
    const double bytes = (n - 1) * bytes_per_rank;
    const bool inter_node = n > c.gpn;
    const double link_Bps = (inter_node ? c.g.rdma_bandwidth_GBps : c.g.nvlink_bandwidth_GBps) * 1e9;
    const double us = bytes / (link_Bps * c.cal.allgather_eff) * 1e6 + c.cal.allreduce_latency_us * std::log2(double(n));
    OpRecord op = comm_op(name, ph, bytes, inter_node ? Engine::rdma : Engine::nvlink, us);
    op.efficiency = c.cal.allgather_eff;
    const CommHit h = table_collective(c, "all_gather", {"nccl"}, n, n * bytes_per_rank);
    if (h.found) from_table(op, h, link_Bps);
    return op;
}

// Dispatch (tokens to experts) and combine (outputs back) for one MoE layer, T tokens per attention rank.
void ep_comm(const Ctx& c, Phase ph, A2ABackend be, double T, LayerOps& L) {
    const ModelSpec& m = c.m;
    // The width each token crosses the all-to-all in: hidden, or LatentMoE's moe_latent_size (the latent projection runs
    // before the dispatch and after the combine, on the token's own rank: vLLM MoERunner.forward applies
    // routed_input_transform before the dispatching custom op and routed_output_transform after it; TensorRT-LLM's
    // NemotronHMOE calls fc1_latent_proj before self.experts, whose all-to-all then moves the latent). The all-reduce of
    // the TP-sharded experts' output below stays at hidden: TensorRT-LLM reduces after fc2 and the shared expert.
    const double h = m.expert_width();
    const double k = m.top_k;
    const double db = dtype_bytes(c.disp) + (c.disp == Dtype::fp8 ? 4.0 / 128.0 : 0.0);  // fp8 with 1x128 scales
    const double cb = dtype_bytes(c.comb);
    const int group = c.tp * c.dp;  // GPUs whose tokens meet in the MoE
    // On an AMD Infinity Fabric mesh a GPU reaches each peer over its own link: a group of n GPUs of one node has n - 1
    // of them (an EP4 dispatch on MI355X 3 x 76.8 GB/s, not the 537.6 of all 7); on a switch the GPU's whole bandwidth.
    const double nvl = c.g.xgmi_mesh() ? c.g.xgmi_link_GBps() * 1e9 * std::max(1, std::min(std::max(c.ep, group), c.gpn) - 1)
                                       : c.g.nvlink_bandwidth_GBps * 1e9;
    const double rdma = c.g.rdma_bandwidth_GBps * 1e9;
    if (c.g.topology == Topology::mesh && be != A2ABackend::none && be != A2ABackend::auto_ && c.ep > 1) {
        mesh_ep_comm(c, ph, T, L);  // seed 004's dispatch and combine, whatever the NVIDIA backend named
        return;
    }
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
            // Attention tensor-parallel over the whole group (dp 1): its all-reduce has left every rank holding all
            // T tokens already, so there is nothing to gather; each rank runs its own experts over them and the
            // partial outputs are summed by an all-reduce (vLLM's and SGLang's EP MoE without attention DP, and
            // TensorRT-LLM's, reduce the MoE output over the TP group; only attention-DP ranks gather tokens).
            if (c.dp == 1) {
                if (group > 1) {
                    OpRecord ar = allreduce_op(c, "comm.moe_allreduce", ph, T, c.tp);
                    L.allreduce_us += ar.time_us;
                    L.comm.push_back(ar);
                }
                return;
            }
            // attention DP: all-gather every rank's tokens before the MoE, reduce-scatter the outputs after
            const double tok = T / c.tp;  // tokens each GPU contributes
            const bool inter_node = group > c.gpn;
            const double link = (inter_node ? rdma : nvl) * c.cal.allgather_eff;
            const double ag = tok * (group - 1) * h * db, rs = tok * (group - 1) * h * cb;
            const Engine eng = inter_node ? Engine::rdma : Engine::nvlink;
            L.dispatch_us = ag / link * 1e6 + c.cal.allreduce_latency_us * std::log2(double(group));
            L.combine_us = rs / link * 1e6 + c.cal.allreduce_latency_us * std::log2(double(group));
            OpRecord ag_op = comm_op("comm.allgather", ph, ag, eng, L.dispatch_us);
            OpRecord rs_op = comm_op("comm.reduce_scatter", ph, rs, eng, L.combine_us);
            // Measured NCCL: the gathered output, and the full input of the reduce-scatter, are group x tok rows.
            const double link_Bps = inter_node ? rdma : nvl;
            const CommHit hag = table_collective(c, "all_gather", {"nccl"}, group, tok * group * h * db);
            const CommHit hrs = table_collective(c, "reduce_scatter", {"nccl"}, group, tok * group * h * cb);
            if (hag.found) from_table(ag_op, hag, link_Bps), L.dispatch_us = hag.latency_us;
            if (hrs.found) from_table(rs_op, hrs, link_Bps), L.combine_us = hrs.latency_us;
            L.comm.push_back(ag_op);
            L.comm.push_back(rs_op);
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
            // The step waits for the busiest receiver: routing.imbalance x the mean pairs (dispatch) and their
            // results going back through the same rank's links (combine).
            const double imb = c.s.routing.imbalance;
            const double bd = tok * k * h * db * imb, bc = tok * k * h * cb * imb;
            const Engine eng = f_local < 1.0 ? Engine::rdma : Engine::nvlink;
            L.dispatch_us = t_of(bd);
            L.combine_us = t_of(bc);
            L.comm.push_back(comm_op("comm.dispatch", ph, bd, eng, L.dispatch_us));
            L.comm.push_back(comm_op("comm.combine", ph, bc, eng, L.combine_us));
            return;
        }
        case A2ABackend::mori: {
            // MoRI-EP's IntraNode kernels (ROCm/mori): a token is written once to each rank that holds one of its
            // experts (the benchmark's received rows are tokens x distinct ranks) and the combine reads the results
            // back the same way. Every peer has its own xGMI link, so the busiest link carries one peer's share:
            // tokens x P(the peer holds one of the token's experts) x bytes, at a fraction of the link.
            const double tok = T / c.tp;
            const double nodes = std::ceil(double(c.ep) / c.gpn);
            const double distinct_gpus = kernels::distinct_units(c.ep, m.n_group, m.topk_group, k);
            const double p_rank = distinct_gpus / c.ep;
            const double link = c.g.xgmi_link_GBps() * 1e9;
            const double imb = c.s.routing.imbalance;
            // Across nodes (ep > gpus_per_node: MoRI's InterNode kernels, no published figures used): one RDMA copy
            // per remote node the token needs, at DeepEP normal's RDMA efficiency.
            const double remote_nodes = nodes > 1 ? kernels::distinct_units(nodes, m.n_group, m.topk_group, k) * (nodes - 1.0) / nodes : 0.0;
            struct Fit {
                double eff, latency_us;
            };
            auto t_of = [&](double bytes_per_copy, Fit f) {
                const double per_peer = tok * p_rank * bytes_per_copy * imb;
                const double r = tok * remote_nodes * bytes_per_copy * imb;
                const double t_x = per_peer / (link * f.eff), t_r = r > 0 ? r / (rdma * c.cal.rdma_normal_eff) : 0.0;
                struct R { double us, bytes; Engine eng; };
                return t_r > t_x ? R{t_r * 1e6 + f.latency_us, r, Engine::rdma} : R{t_x * 1e6 + f.latency_us, per_peer, Engine::nvlink};
            };
            // From MoRI's published EP8 table on 8 x MI355X (ROCm/mori docs/EP8.en.md; hidden 7168, 256 experts, top-8:
            // 5.29 distinct ranks per token), bench_data/README.md "MoRI-EP": the link fraction from the largest message
            // (524,288 tokens per rank), the fixed cost from the 1-token row.
            const Fit disp = c.disp == Dtype::fp8 ? Fit{kMoriDispatchFp8Eff, kMoriDispatchFp8LatencyUs}
                                                  : Fit{kMoriDispatchBf16Eff, kMoriDispatchBf16LatencyUs};
            const Fit comb{kMoriCombineEff, kMoriCombineLatencyUs};
            const auto d = t_of(h * db, disp), cmb = t_of(h * cb, comb);
            L.dispatch_us = d.us;
            L.combine_us = cmb.us;
            L.comm.push_back(comm_op("comm.dispatch", ph, d.bytes, d.eng, d.us));
            L.comm.push_back(comm_op("comm.combine", ph, cmb.bytes, cmb.eng, cmb.us));
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
            const double imb = c.s.routing.imbalance;  // the busiest rank receives (and returns) imbalance x the mean
            auto t_of = [&](double bytes_per_copy) {
                const double r = tok * remote_nodes * bytes_per_copy * imb;
                const double n = tok * nvl_copies * bytes_per_copy * imb;
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

}  // namespace moe::detail
