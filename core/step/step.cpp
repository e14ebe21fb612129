// step.cpp — overlap policies, one layer under them, and one forward step (prefill chunk or decode step).
// Part of the step model; core/estimate_detail.h lists the files and what each computes.
#include <charconv>
#include <cstring>

#include "core/step/estimate_detail.h"

namespace moe::detail {

}  // namespace moe::detail

namespace moe {

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

double micro_batch_pipeline(double c, double d, double m, int n) {
    if (n <= 1) return d + c + m;
    double comm_free = 0, compute_free = 0, prev_computed = 0;
    for (int i = 0; i < n; ++i) {
        comm_free += d;  // D_i waits only for the stream
        const double dispatched = comm_free;
        if (i > 0) comm_free = std::max(comm_free, prev_computed) + m;  // then M_{i-1}, once C_{i-1} is done
        compute_free = std::max(compute_free, dispatched) + c;        // C_i
        prev_computed = compute_free;
    }
    return std::max(comm_free, prev_computed) + m;  // M_n
}

}  // namespace moe

namespace moe::detail {

namespace {

// The attention side of the last layer built in this estimate (Ctx::attn_memo_valid): attention_ops depends on the
// estimate, the phase shape and the layer's window and compression alone, and writes the layer's first pre-records,
// its context-parallel communication records and their all-reduce time.
struct AttnMemo {
    PhaseShape ps{};
    LayerDesc d{};  // (its window, compression, sparsity and own shape)
    std::vector<OpRecord> pre, comm;
    double allreduce_us = 0;
};

bool same_shape(const PhaseShape& a, const PhaseShape& b) {
    return a.phase == b.phase && a.T == b.T && a.batch == b.batch && a.ctx == b.ctx && a.cached == b.cached;
}

}  // namespace

// Two layers whose attention side is the same (window, compression, sparsity, own heads and widths).
static bool same_attention(const LayerDesc& a, const LayerDesc& b) {
    return a.window == b.window && a.compress == b.compress && a.sparse == b.sparse && a.q_heads == b.q_heads &&
           a.kv_heads == b.kv_heads && a.head_dim == b.head_dim && a.v_head_dim == b.v_head_dim;
}
// ... and their side after the attention (MoE or dense and its width, an FFN at all, a mixer to all-reduce).
static bool same_ffn(const LayerDesc& a, const LayerDesc& b) {
    return a.moe == b.moe && a.ffn == b.ffn && (a.mixer == Mixer::none) == (b.mixer == Mixer::none) &&
           a.ffn_inter == b.ffn_inter && a.ffn_linear == b.ffn_linear;
}

namespace {

void attention_side(const Ctx& c, const PhaseShape& ps, const LayerDesc& ld, LayerOps& L) {
    thread_local AttnMemo memo;
    // (L is empty: build_layer starts with the attention side)
    if (c.attn_memo_valid && same_shape(memo.ps, ps) && same_attention(memo.d, ld)) {
        for (const OpRecord& o : memo.pre) L.pre.push_back(o);
        for (const OpRecord& o : memo.comm) L.comm.push_back(o);
        L.allreduce_us += memo.allreduce_us;
        return;
    }
    attention_ops(c, ps, ld, L);
    if (!c.keep_attn) return;
    memo.ps = ps;
    memo.d = ld;
    memo.pre.assign(L.pre.begin(), L.pre.end());
    memo.comm.assign(L.comm.begin(), L.comm.end());
    memo.allreduce_us = L.allreduce_us;
    c.attn_memo_valid = true;
}

}  // namespace

// Everything of a layer after its attention side: the residual pass, the attention all-reduce, the FFN or the
// routed and shared experts with their dispatch and combine. It depends on the estimate, the phase, the tokens, the
// layer's kind (MoE or dense), the all-to-all backend and the expert layout, never on the attention: a group that
// differs from the previous one only in its attention (gpt-oss's windowed and full layers, Qwen3.5's Gated DeltaNet
// and full ones) copies it (Ctx::ffn_memo_valid).
// A Nemotron-H layer is one block (a mixer or an FFN): one norm and one residual add, half a two-block layer's passes;
// it has no attention all-reduce without a mixer and no FFN without one.
static void ffn_side(const Ctx& c, const PhaseShape& ps, const LayerDesc& ld, A2ABackend be, bool masked, LayerOps& L) {
    // (a Nemotron NAS layer without its attention or its FFN is one block too)
    const bool one_block = c.m.single_block_layers || ld.mixer == Mixer::none || !ld.ffn;
    // Attention residuals (Kimi-K3): each layer's two mixes read attn_res_reads hidden-size vectors per token and
    // write their two outputs, in bf16.
    const double passes = (one_block ? 0.5 * c.cal.misc_passes : c.cal.misc_passes) +
                          (c.m.attn_res_block > 0 ? c.m.attn_res_reads + 2.0 : 0.0);
    L.pre.push_back(memory_op(c, "layer.misc", ps.phase, passes * ps.T * c.m.hidden * 2.0));
    if (c.m.hc_mult > 1) {
        // Hyper-connections (DeepSeek-V4), before the attention and before the FFN: the hc_mult FP32 residual streams
        // are normalised and mapped to (2 + hc) x hc mixing weights (a GEMM of hc x h by (2 + hc) x hc), read to
        // form the sublayer's input, then read and written again to add its output back: 3 passes over hc x h FP32.
        const double hc = c.m.hc_mult, width = hc * c.m.hidden, mix = (2.0 + hc) * hc;
        OpRecord op = make_op("layer.hyper_connections", ps.phase, 2.0 * 2.0 * ps.T * width * mix, 2.0 * width * mix * 4.0,
                              2.0 * 3.0 * ps.T * width * 4.0);
        time_op(c, op, Dtype::bf16, TableHit{}, c.cal.gemm_compute_eff, c.cal.hbm_bw_eff);
        L.pre.push_back(op);
    }
    if (c.tp > 1 && ld.mixer != Mixer::none) {
        OpRecord ar = allreduce_op(c, "comm.attn_allreduce", ps.phase, ps.T, c.tp);
        L.allreduce_us += ar.time_us;
        L.comm.push_back(ar);
    }
    if (!ld.ffn) return;
    if (ld.moe) {
        expert_ops(c, ps.phase, ps.T, masked, be, L);
        if (c.m.shared_intermediate > 0)
            dense_ffn_ops(c, ps.phase, ps.T, c.m.shared_intermediate, "moe.shared_up", "moe.shared_down", c.w_shared, L.shared);
        ep_comm(c, ps.phase, be, ps.T, L);
    } else {
        if (ld.ffn_linear)  // Nemotron NAS replace_with_linear: one hidden x hidden map, row-sharded
            L.post.push_back(gemm_op(c, "ffn.linear", ps.phase, ps.T, c.m.hidden / double(c.tp), c.m.hidden, c.w_shared));
        else
            dense_ffn_ops(c, ps.phase, ps.T, ld.ffn_inter > 0 ? ld.ffn_inter : c.m.intermediate, "ffn.gate_up_proj",
                          "ffn.down_proj", c.w_shared, L.post);
        if (c.tp > 1) {
            OpRecord ar = allreduce_op(c, "comm.ffn_allreduce", ps.phase, ps.T, c.tp);
            L.allreduce_us += ar.time_us;
            L.comm.push_back(ar);
        }
    }
}

namespace {
struct FfnMemo {
    Phase phase = Phase::decode;
    double T = 0;
    LayerDesc d{};  // (its FFN kind and width, and whether it has a mixer)
    bool masked = false;
    A2ABackend be = A2ABackend::none;
    std::vector<OpRecord> pre, post, shared, comm, stream;
    double dispatch_us = 0, combine_us = 0, allreduce_us = 0, stream_us = 0;
};
}  // namespace

// dst = src's records; an empty src just empties dst (no out-of-line assignment for the lists that stay empty:
// shared and stream, most of the time)
static void copy_ops(std::vector<OpRecord>& dst, const std::vector<OpRecord>& src) {
    if (src.empty()) dst.clear();
    else dst.assign(src.begin(), src.end());
}

void build_layer(const Ctx& c, const PhaseShape& ps, const LayerDesc& ld, A2ABackend be, bool masked, LayerOps& L) {
    if (ld.mixer == Mixer::gated_deltanet) linear_attention_ops(c, ps, L);
    else if (ld.mixer == Mixer::mamba2) mamba2_ops(c, ps, L);
    else if (ld.mixer == Mixer::attention) attention_side(c, ps, ld, L);
    else if (ld.mixer == Mixer::linear)  // Nemotron NAS replace_with_linear: one hidden x hidden map, row-sharded
        L.pre.push_back(gemm_op(c, "attn.linear", ps.phase, ps.T, c.m.hidden / double(c.tp), c.m.hidden, c.w_attn));
    // (post, shared and stream are still empty: the attention side writes pre, comm and the all-reduce time only)
    thread_local FfnMemo memo;
    const std::size_t pre0 = std::size_t(L.pre.end() - L.pre.begin()), comm0 = L.comm.size();
    const double ar0 = L.allreduce_us;
    if (c.ffn_memo_valid && memo.phase == ps.phase && memo.T == ps.T && same_ffn(memo.d, ld) && memo.masked == masked &&
        memo.be == be) {
        for (const OpRecord& o : memo.pre) L.pre.push_back(o);
        for (const OpRecord& o : memo.comm) L.comm.push_back(o);
        copy_ops(L.post, memo.post);
        copy_ops(L.shared, memo.shared);
        copy_ops(L.stream, memo.stream);
        L.dispatch_us += memo.dispatch_us;
        L.combine_us += memo.combine_us;
        L.allreduce_us += memo.allreduce_us;
        L.stream_us += memo.stream_us;
        return;
    }
    const double d0 = L.dispatch_us, c0 = L.combine_us, s0 = L.stream_us;
    ffn_side(c, ps, ld, be, masked, L);
    if (!c.keep_ffn) return;
    memo.phase = ps.phase;
    memo.T = ps.T;
    memo.d = ld;
    memo.masked = masked;
    memo.be = be;
    memo.pre.assign(L.pre.begin() + pre0, L.pre.end());
    memo.comm.assign(L.comm.begin() + std::ptrdiff_t(comm0), L.comm.end());
    copy_ops(memo.post, L.post);
    copy_ops(memo.shared, L.shared);
    copy_ops(memo.stream, L.stream);
    memo.dispatch_us = L.dispatch_us - d0;
    memo.combine_us = L.combine_us - c0;
    memo.allreduce_us = L.allreduce_us - ar0;
    memo.stream_us = L.stream_us - s0;
    c.ffn_memo_valid = true;
}

// A record of the phase whose time counts as compute (the provenance shares' records): neither comm nor offload.
static bool counts_as_compute(const OpRecord& o, Phase ph) {
    return o.phase == ph && o.bound != Bound::comm && o.bound != Bound::offload;
}

LayerTime layer_time(const Ctx& c, const PhaseShape& ps, const LayerDesc& ld, A2ABackend be, bool masked, OverlapKind ov,
                     int n_mb, std::vector<OpRecord>& ops, int group, double count, PhaseSums& sums) {
    LayerTime out;
    n_mb = std::max(1, n_mb);
    PhaseShape mb = ps;
    mb.T = ps.T / n_mb;
    mb.batch = ps.batch / n_mb;
    // One scratch LayerOps per thread, cleared for each layer: its vectors keep their capacity (layer_time never
    // runs inside itself).
    thread_local LayerOps L;
    L.clear();
    out.begin = ops.size();
    L.pre.v = &ops;  // the attention-side records are built in place, first among the layer's
    L.pre.first = out.begin;
    build_layer(c, mb, ld, be, masked, L);
    double c_pre = sum_us(L.pre), c_post = sum_us(L.post), c_shared = sum_us(L.shared);
    const bool has_ep_comm = L.dispatch_us > 0 || L.combine_us > 0;
    double slow = 1.0;
    if (ov == OverlapKind::tbo && has_ep_comm && n_mb >= 2) {
        // DeepEP normal kernels occupy comm_sms SMs while they overlap compute; low-latency ones use none.
        if (be == A2ABackend::deepep_normal) slow = 1.0 / c.sm_share;
        c_pre *= slow;
        c_post *= slow;
        c_shared *= slow;
        if (ps.phase == Phase::prefill)
            out.exposed_us = micro_batch_pipeline(c_pre + c_shared + c_post, L.dispatch_us, L.combine_us, n_mb);
        else  // each pair of micro-batches runs the four slots; the shared experts sit on the attention side
            out.exposed_us = 0.5 * n_mb * two_batch_overlap_slots(c_pre + c_shared, c_post, L.dispatch_us, L.combine_us);
        out.exposed_us += n_mb * L.allreduce_us;
    } else if (ov == OverlapKind::full && has_ep_comm) {
        // Seed 000 §5.3 mode 2: dispatch and combine never wait (DeepEP's free decode communication). That is the
        // low-latency kernels, which take no SMs; DeepEP normal kernels hidden the same way still take comm_sms SMs
        // from the compute they run under (estimate() warns that full is not the seed's mode there).
        if (be == A2ABackend::deepep_normal) slow = 1.0 / c.sm_share;
        c_pre *= slow;
        c_post *= slow;
        c_shared *= slow;
        out.exposed_us = n_mb * (c_pre + c_shared + c_post + L.allreduce_us);
    } else {
        // Serial; with shared_expert_overlap the shared experts run while the dispatch is in flight (seed 001's
        // prepare_no_receive), so only the longer of the two is exposed.
        const double shared_and_dispatch = c.s.runtime.shared_expert_overlap && has_ep_comm
                                               ? std::max(c_shared, L.dispatch_us)
                                               : c_shared + L.dispatch_us;
        out.exposed_us = n_mb * (c_pre + c_post + shared_and_dispatch + L.combine_us + L.allreduce_us);
    }
    out.compute_us = n_mb * (c_pre + c_shared + c_post);
    out.comm_us = n_mb * (L.dispatch_us + L.combine_us + L.allreduce_us);
    // Experts streamed from the host tier: serial, or with prefetch under the previous layer's compute (a layer of
    // the same group: the same compute), only the excess exposed.
    const double stream_us = n_mb * L.stream_us;
    out.stream_exposed_us = c.s.runtime.expert_offload.prefetch ? std::max(0.0, stream_us - out.compute_us) : stream_us;
    out.exposed_us += out.stream_exposed_us;
    // Records: per-layer totals over the micro-batches; exposed share of comm spread over the comm records.
    const double hidden_comm = std::max(0.0, out.compute_us + out.comm_us - out.exposed_us);
    const double comm_total = out.comm_us;
    // Each record also gets its group and count, and is added to the phase's sums in record order (kept in locals here:
    // the records' stores cannot alias them).
    double compute_sum = sums.compute_us, offload_sum = sums.offload_bytes;
    const Phase phase = ps.phase;
    auto tally = [&](OpRecord& o) {
        o.group = group;
        o.count = count;
        if (counts_as_compute(o, phase)) compute_sum += o.time_us * count;
    };
    const bool one_batch = n_mb == 1 && slow == 1.0;  // (x 1 changes nothing: skipped)
    auto fold = [&](OpRecord& o) {
        if (!one_batch) {
            o.time_us *= n_mb * slow;
            o.flops *= n_mb;
            o.activation_bytes *= n_mb;
            o.weight_bytes *= n_mb;
        }
        o.exposed_us = o.time_us;
        tally(o);
    };
    for (OpRecord& o : L.pre) fold(o);  // already in place
    for (auto* v : {&L.shared, &L.post}) {
        for (OpRecord& o : *v) {
            fold(o);
            ops.push_back(o);
        }
    }
    for (OpRecord& o : L.comm) {
        if (n_mb != 1) {
            o.time_us *= n_mb;
            o.comm_bytes *= n_mb;
        }
        o.exposed_us = comm_total > 0 ? o.time_us * std::max(0.0, 1.0 - hidden_comm / comm_total) : 0;
        tally(o);
        ops.push_back(o);
    }
    for (OpRecord& o : L.stream) {
        o.time_us *= n_mb;
        o.comm_bytes *= n_mb;
        o.exposed_us = stream_us > 0 ? o.time_us * out.stream_exposed_us / stream_us : 0;
        tally(o);
        if (o.bound == Bound::offload) offload_sum += count * o.comm_bytes;
        ops.push_back(o);
    }
    sums.compute_us = compute_sum;
    sums.offload_bytes = offload_sum;
    out.end = ops.size();
    return out;
}

// The provenance sums' index of a source (run_phase).
static int source_slot(Source s) {
    switch (s) {
        case Source::measured: return 0;
        case Source::interpolated: return 1;
        case Source::transferred: return 2;
        case Source::analytical: return 3;
    }
    return 3;
}

void run_phase(const Ctx& c, Estimate& e, const PhaseShape& ps, A2ABackend be, PhaseResult& out) {
    const Scenario& s = c.s;
    const ModelSpec& m = c.m;
    out.computed = true;
    // This phase's records start here (estimate_into runs each phase once, prefill first): the provenance sums below
    // skip the other phase's records, which their phase test excluded anyway.
    const std::size_t phase_begin = e.ops.size();
    const bool masked = s.runtime.expert_layout == ExpertLayout::masked ||
                        (s.runtime.expert_layout == ExpertLayout::auto_ &&
                         (be == A2ABackend::deepep_low_latency || be == A2ABackend::pplx));
    // micro-batches need a token each; tbo needs two of them
    const int n_mb = int(std::max(1.0, std::min(double(s.micro_batches()), ps.T)));
    const OverlapKind ov = s.overlap() == OverlapKind::tbo && n_mb < 2 ? OverlapKind::none : s.overlap();
    // Distinct layer kinds (MoE or dense, window, mixer, compression) with their counts: the model's own list, set
    // with its layers (ModelSpec::layer_kinds); grouped here only for a spec whose list does not cover its layers.
    using Group = ModelSpec::LayerKind;
    out.groups.reserve(4);
    thread_local std::vector<Group> own;  // scratch, per thread (run_phase never runs inside itself)
    const std::vector<Group>* kinds = &m.layer_kinds;
    {
        std::size_t n = 0;
        for (const Group& g : m.layer_kinds) n += std::size_t(g.count);
        if (n != m.layers.size()) {
            if (!c.layer_groups_done) own = layer_kinds_of(m.layers);
            c.layer_groups_done = true;
            kinds = &own;
        }
    }
    const std::vector<Group>& groups = *kinds;
    double total_us = 0, compute_us = 0, comm_us = 0, exposed_comm_us = 0, offload_us = 0;
    PhaseSums sums;
    // layer_time's sum, for the records written here
    auto add_compute = [&](const OpRecord& o) {
        if (counts_as_compute(o, ps.phase)) sums.compute_us += o.time_us * o.count;
    };
    for (size_t gi = 0; gi < groups.size(); ++gi) {
        const Group& g = groups[gi];
        // keep this group's attention or FFN side only if a later group can copy it (build_layer)
        c.keep_attn = c.keep_ffn = false;
        for (size_t gj = gi + 1; gj < groups.size(); ++gj) {
            const LayerDesc& d = groups[gj].d;
            if (d.mixer == Mixer::attention && g.d.mixer == Mixer::attention && same_attention(d, g.d)) c.keep_attn = true;
            if (same_ffn(d, g.d)) c.keep_ffn = true;
        }
        const int gidx = int(out.groups.size());
        const LayerTime lt = layer_time(c, ps, g.d, be, masked, ov, n_mb, e.ops, gidx, g.count, sums);
        {
            // the label's parts written into a buffer, then into the group's inline label
            char buf[96];
            std::size_t n = 0;
            auto put = [&](std::string_view t) {
                std::memcpy(buf + n, t.data(), t.size());
                n += t.size();
            };
            auto put_int = [&](int v) { n = std::size_t(std::to_chars(buf + n, buf + sizeof buf, v).ptr - buf); };
            if (m.single_block_layers)  // Nemotron-H: one block per layer
                put(g.d.mixer == Mixer::mamba2 ? "Mamba-2 layers" : g.d.mixer == Mixer::attention ? "attention layers"
                    : g.d.moe ? "MoE layers" : "MLP layers");
            else put(g.d.moe ? "MoE layers" : "dense layers");
            if (g.d.window > 0) put(" (window "), put_int(g.d.window), put(")");
            if (g.d.mixer == Mixer::gated_deltanet) put(m.kda ? " (Kimi Delta Attention)" : " (Gated DeltaNet)");
            if (m.per_layer_blocks) {  // Nemotron NAS: what the block has
                if (g.d.mixer == Mixer::none) put(" (no attention)");
                else if (g.d.mixer == Mixer::linear) put(" (linear attention map)");
                if (!g.d.ffn) put(" (no FFN)");
                else if (g.d.ffn_linear) put(" (linear FFN map)");
                else put(" (FFN "), put_int(g.d.ffn_inter), put(")");
            } else if (g.d.own_attention() && g.d.kv_heads > 0) {
                put(" ("), put_int(g.d.kv_heads), put(" KV heads)");
            }
            if (g.d.sparse && m.block_sparse()) put(" (block-sparse)");
            if (g.d.compress == 4) put(" (CSA)");
            else if (g.d.compress > 0) put(" (HCA 1/"), put_int(g.d.compress), put(")");
            LayerGroup& lg = out.groups.emplace_back();
            lg.label.assign(std::string_view(buf, n));
            lg.count = g.count;
            lg.time_us = lt.exposed_us;
        }
        total_us += g.count * lt.exposed_us;
        compute_us += g.count * lt.compute_us;
        offload_us += g.count * lt.stream_exposed_us;
        comm_us += g.count * lt.comm_us;
        exposed_comm_us += g.count * std::max(0.0, lt.exposed_us - lt.stream_exposed_us - lt.compute_us);
    }
    // (the drafts' and the later records' streamed bytes are not counted in offload_bytes)
    out.offload_bytes = sums.offload_bytes;
    // Embedding lookup and LM head (decode: every token; prefill: the last token of each prompt).
    const double head_rows = ps.phase == Phase::decode ? ps.T : std::max(1.0, ps.T / s.prefill_computed_tokens());
    LayerGroup& head = out.groups.emplace_back();
    head.label = "embedding + LM head";
    head.count = 1;
    {
        OpRecord emb = memory_op(c, "embed.lookup", ps.phase, ps.T * m.hidden * 2.0 * 2.0);
        OpRecord lm = gemm_op(c, "lm_head", ps.phase, head_rows, m.hidden, double(m.vocab) / c.tp, c.w_embed);
        const int gidx = int(out.groups.size()) - 1;  // head's
        for (OpRecord* o : {&emb, &lm}) {
            o->group = gidx;
            o->count = 1;
            o->exposed_us = o->time_us;
            head.time_us += o->time_us;
            add_compute(*o);
            e.ops.push_back(*o);
        }
        total_us += head.time_us;
        compute_us += head.time_us;
    }
    // Drafts (decode): each draft token runs the draft module on the batch, then the LM head. mtp: the model's MTP
    // module (one decoder layer of the model's kind + eh_proj); eagle: an EAGLE-3 head (one dense decoder layer of the
    // target's width with 2h-wide q/k/v inputs, a 3h x h fusion, its own 32,000-token LM head; ModelSpec::
    // eagle3_head_params); ngram: prompt lookup on the host, no GPU work.
    const SpeculativeConfig& sp = s.runtime.speculative;
    if (ps.phase == Phase::decode && sp.draft_tokens > 0 && sp.method != SpecMethod::ngram) {
        const bool eagle = sp.method == SpecMethod::eagle;
        PhaseShape d = ps;
        d.T = ps.batch;
        LayerDesc ld = eagle ? LayerDesc{} : m.mtp_layer;
        ld.moe = !eagle && m.is_moe();
        const int gidx = int(out.groups.size());
        // the draft module in its own formats (draft_formats), its records built afresh
        Ctx dc = c;
        const DraftFormats df = draft_formats(c, eagle);
        dc.w_attn = df.attn, dc.w_exp = df.exp, dc.w_shared = df.ffn;
        dc.attn_memo_valid = dc.ffn_memo_valid = false;
        dc.keep_attn = dc.keep_ffn = false;
        // EAGLE-3's decoder layer reads the token's embedding and the fused hidden state side by side: its q, k and v
        // projections take 2h inputs (o_proj and the MLP keep h)
        if (eagle) dc.qkv_in = 2.0 * m.hidden;
        const LayerTime lt = layer_time(dc, d, ld, be, masked, OverlapKind::none, 1, e.ops, gidx, sp.draft_tokens, sums);
        c.analytical_experts = c.analytical_experts || dc.analytical_experts;
        c.gemm_env_checked = c.gemm_env_checked || dc.gemm_env_checked;
        // mtp: eh_proj (2h x h) and the target's LM head, every draft. eagle (EAGLE-3): its fc fuses three of the
        // target's hidden states (3h x h) once per step, for the first draft (SGLang llama_eagle3.py applies it when
        // the input is wider than the embedding; later drafts feed the head's own hidden state), and its own LM head
        // over the draft vocabulary (32,000 in the public Llama-3.1 heads), vocab-parallel, in the draft's BF16.
        OpRecord eh = eagle ? gemm_op(c, "eagle.fc", ps.phase, d.T, 3.0 * m.hidden, m.hidden, kEagleFcDtype)
                            : gemm_op(c, "mtp.eh_proj", ps.phase, d.T, 2.0 * m.hidden, m.hidden, mtp_proj_dtype(c));
        OpRecord lm = eagle ? gemm_op(c, "eagle.lm_head", ps.phase, d.T, m.hidden, m.eagle3_draft_vocab() / c.tp, kEagleFcDtype)
                            : gemm_op(c, "mtp.lm_head", ps.phase, d.T, m.hidden, double(m.vocab) / c.tp, c.w_embed);
        const double eh_per_draft = eagle ? eh.time_us / sp.draft_tokens : eh.time_us;
        const double per_draft = lt.exposed_us + eh_per_draft + lm.time_us;
        LayerGroup g;
        g.label = eagle ? "EAGLE draft" : "MTP draft";
        g.count = sp.draft_tokens;
        g.time_us = per_draft;
        out.groups.push_back(std::move(g));
        for (OpRecord* o : {&eh, &lm}) {
            o->group = gidx;
            o->count = (eagle && o == &eh) ? 1 : g.count;
            o->exposed_us = o->time_us;
            add_compute(*o);
            e.ops.push_back(*o);
        }
        total_us += g.count * per_draft;
        compute_us += g.count * (lt.compute_us + eh_per_draft + lm.time_us);
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
        add_compute(p2p);
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
    out.offload_ms = offload_us / 1000.0;
    // provenance shares over compute-op time (its sum taken as the records were written), and the records'
    // finiteness in the same pass (Ctx::records_nonfinite)
    const double denom = sums.compute_us;
    const std::size_t n_ops = e.ops.size();
    // each source's shares added in record order into its own sum (indexed, not a switch per record: the sources
    // alternate unpredictably), the same sums as adding to out's fields one by one
    const bool shares = denom > 0;
    double z = 0, share[4] = {0, 0, 0, 0};
    for (std::size_t i = phase_begin; i < n_ops; ++i) {
        const OpRecord& o = e.ops[i];
        z += (o.time_us - o.time_us) + (o.flops - o.flops) + (o.exposed_us - o.exposed_us);
        if (shares && counts_as_compute(o, ps.phase)) share[source_slot(o.source)] += o.time_us * o.count / denom;
    }
    if (shares) {
        out.share_measured += share[source_slot(Source::measured)];
        out.share_interpolated += share[source_slot(Source::interpolated)];
        out.share_transferred += share[source_slot(Source::transferred)];
        out.share_analytical += share[source_slot(Source::analytical)];
    }
    c.records_nonfinite += z;
    const double world_tp = c.tp;
    if (ps.phase == Phase::prefill) {
        const double stage_ms = out.step_ms / c.pp;
        const double chunks = std::ceil(s.prefill_computed_tokens() / s.workload.prefill_tokens);
        out.tokens_per_step = ps.T;
        out.pp_bubble_ms = (c.pp - 1) * stage_ms;
        out.ttft_ms = chunks * (c.pp > 1 ? stage_ms : out.step_ms) + out.pp_bubble_ms;
        // prompt tokens served, the cached ones included: each computed token stands for prompt / computed
        const double served = ps.T * s.workload.prompt_len / s.prefill_computed_tokens();
        out.tokens_per_s_per_gpu = served / (out.step_ms / 1000.0) / world_tp;
        out.tokens_per_s_cluster = out.tokens_per_s_per_gpu * c.tp * c.dp * c.pp;
    } else {
        const double accept = s.runtime.speculative.tokens_per_step();
        out.tokens_per_step = ps.batch * accept;
        out.tpot_ms = out.step_ms / accept;
        out.tokens_per_s_per_user = 1000.0 / out.tpot_ms;
        out.tokens_per_s_per_gpu = ps.batch * accept / (out.step_ms / 1000.0) / world_tp;
        out.tokens_per_s_cluster = out.tokens_per_s_per_gpu * c.tp * c.dp * c.pp;
    }
}

}  // namespace moe::detail
