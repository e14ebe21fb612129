// estimate.cpp — estimate(): the scenario resolved into a Ctx, then the step model (DESIGN §3, §5).
// The model itself lives in the files core/estimate_detail.h lists.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "core/step/estimate_detail.h"
#include "core/step/power.h"

namespace moe {

const char* engine_name(Engine e) {
    switch (e) {
        case Engine::tensor: return "tensor";
        case Engine::hbm: return "hbm";
        case Engine::nvlink: return "nvlink";
        case Engine::rdma: return "rdma";
        case Engine::host: return "host";
        case Engine::mesh: return "mesh";
    }
    return "?";
}

namespace detail {
namespace {

// (the records were checked as run_phase wrote them: records_nonfinite is 0 exactly while all are finite)
bool all_finite(const Estimate& e, double records_nonfinite) {
    auto ok = [](double v) { return std::isfinite(v); };
    for (const PhaseResult* p : {&e.prefill, &e.decode})
        if (!ok(p->step_ms) || !ok(p->ttft_ms) || !ok(p->tpot_ms) || !ok(p->tokens_per_s_per_gpu) || !ok(p->tokens_per_s_per_user))
            return false;
    const MemoryResult& m = e.memory;
    for (double v : {m.weights_bytes, m.kv_cache_bytes, m.activation_bytes, m.workspace_bytes, m.comm_buffer_bytes,
                     m.reserved_bytes, m.total_bytes, m.max_batch, m.max_context, m.kv_bytes_per_token})
        if (!ok(v) || v < 0) return false;
    // x - x is 0 for a finite x and NaN for an infinite or NaN one: the sum stays 0 exactly while every record is
    // finite (no branch per record; the build has no -ffast-math, which could fold x - x)
    return records_nonfinite == 0;
}
// The parts' text in one string, allocated once (a warning every estimate of its scenario writes).
std::string concat(std::initializer_list<std::string_view> parts) {
    std::size_t n = 0;
    for (std::string_view p : parts) n += p.size();
    std::string out(n, '\0');
    char* at = out.data();
    for (std::string_view p : parts) {
        std::memcpy(at, p.data(), p.size());
        at += p.size();
    }
    return out;
}

}  // namespace

std::size_t format_fixed1(double v, char* out) {
    if (!(v >= 0) || std::signbit(v) || !(v < 1e15)) return 0;
    double whole = std::floor(v);
    const double frac = v - whole;  // exact (v and floor(v) are within a factor of two, or floor(v) is 0)
    if (frac != 0 && frac < 1e-250) return 0;  // keep the product's error below clear of underflow
    // frac x 10 = p + err exactly (fma gives the product's rounding error); the tenths digit is its integer part
    // and the rest decides the rounding, compared with one half exactly.
    const double p = frac * 10.0, err = std::fma(frac, 10.0, -p);
    double digit = std::floor(p);
    if (p == digit && err < 0) digit -= 1;  // the product rounded up onto a whole number
    // (p - digit) - 0.5 is exact (a multiple of p's ulp no larger than 1/2), and when it is not 0 it outweighs err
    // (at most half an ulp of p)
    const double a = (p - digit) - 0.5;
    const bool up = a != 0 ? a > 0 : err != 0 ? err > 0 : false;
    if (a == 0 && err == 0) return 0;  // an exact tie: printf's rounding rule
    if (up && ++digit == 10) {
        digit = 0;
        whole += 1;
    }
    char tmp[20];
    int n = 0;
    std::uint64_t w = std::uint64_t(whole);
    do {
        tmp[n++] = char('0' + w % 10);
        w /= 10;
    } while (w);
    std::size_t len = 0;
    while (n) out[len++] = tmp[--n];
    out[len++] = '.';
    out[len++] = char('0' + int(digit));
    return len;
}

}  // namespace detail

using namespace detail;

A2ABackend resolve_a2a_backend(const Scenario& s, Phase ph) {
    const A2ABackend b = s.runtime.a2a_backend;
    if (!s.model.is_moe()) return A2ABackend::none;
    if (b != A2ABackend::auto_) return b;
    // Under a serving engine, auto is the engine's own default: none of them turns DeepEP on by itself (SGLang's
    // --moe-a2a-backend defaults to none, vLLM's --all2all-backend to allgather_reducescatter, TensorRT-LLM's
    // attention DP all-gathers and reduce-scatters around its MoE): the EP group's tokens are all-gathered and every
    // rank runs the fused MoE over them. Step-level scenarios keep DeepEP, the wide-EP deployments of the seeds.
    if (s.parallel.ep > 1 && !auto_a2a_is_deepep(s)) return A2ABackend::allgather;
    // AMD GPUs run MoRI-EP where NVIDIA GPUs run DeepEP (SGLang's --moe-a2a-backend mori on MI300X / MI355X).
    if (s.parallel.ep > 1 && s.gpu.xgmi_mesh()) return A2ABackend::mori;
    if (s.parallel.ep > 1) return ph == Phase::prefill ? A2ABackend::deepep_normal : A2ABackend::deepep_low_latency;
    if (s.parallel.dp > 1) return A2ABackend::allgather;
    return A2ABackend::none;
}


// `e` back to a default Estimate, its vectors emptied but keeping their capacity (estimate_into's reuse).
static void reset_estimate(Estimate& e) {
    Issues errors = std::move(e.errors);
    std::vector<std::string> warnings = std::move(e.warnings);
    std::vector<OpRecord> ops = std::move(e.ops);
    std::vector<LayerGroup> prefill_groups = std::move(e.prefill.groups), decode_groups = std::move(e.decode.groups);
    e = Estimate{};
    errors.clear();
    warnings.clear();
    ops.clear();
    prefill_groups.clear();
    decode_groups.clear();
    e.errors = std::move(errors);
    e.warnings = std::move(warnings);
    e.ops = std::move(ops);
    e.prefill.groups = std::move(prefill_groups);
    e.decode.groups = std::move(decode_groups);
}

static void estimate_fresh(const Scenario& s, const Tables& tables, Estimate& e, bool want_warnings);

Estimate estimate(const Scenario& s, const Tables& tables) {
    Estimate e;  // a default Estimate already: nothing to reset
    estimate_fresh(s, tables, e, true);
    return e;
}

void estimate_into(const Scenario& s, const Tables& tables, Estimate& e, bool want_warnings) {
    reset_estimate(e);
    estimate_fresh(s, tables, e, want_warnings);
}

// estimate_into() of an Estimate that is a default one (its vectors may hold capacity).
static void estimate_fresh(const Scenario& s, const Tables& tables, Estimate& e, bool want_warnings) {
    {
        Issues errors = validate_scenario(s);
        if (!errors.empty()) e.errors.swap(errors);
    }
    const ModelSpec& m = s.model;
    e.total_params = m.total_params;
    e.active_params = m.active_params;
    if (!e.errors.empty()) return;
    if (s.workload.mixed_lengths()) {  // requests of mixed lengths (seed 000 §8.1): mixed.cpp
        estimate_mixed_lengths(s, tables, e, want_warnings);
        return;
    }
    e.prefill_backend = resolve_a2a_backend(s, Phase::prefill);
    e.decode_backend = resolve_a2a_backend(s, Phase::decode);
    for (A2ABackend b : {e.prefill_backend, e.decode_backend})
        if (b == A2ABackend::none && m.is_moe() && (s.parallel.ep > 1 || s.parallel.dp > 1)) {
            e.errors.push_back({"runtime.a2a_backend", "none cannot move tokens between GPUs; with ep > 1 or dp > 1 pick allgather, deepep_normal, deepep_low_latency or pplx"});
            return;
        }
    // Token counts that would overflow double precision arithmetic are rejected by the field ranges; guard the
    // product of the largest ones anyway.
    const double tokens = double(s.workload.batch) * (1 + s.runtime.speculative.draft_tokens) + s.workload.prefill_tokens;
    if (tokens * s.parallel.dp * m.hidden > 1e18) {
        e.errors.push_back({"workload", "token counts too large to model"});
        return;
    }

    const Dtype base = m.weight_dtype;
    Ctx c{s, tables, tables.calibration, m, s.gpu, e,
          stored(s.gpu, pick(s.precision.attention, pick(s.precision.weights, base)), s.precision.fp4_on_hopper),
          stored(s.gpu, pick(s.precision.experts, s.precision.weights.is_auto ? m.expert_dtype : s.precision.weights.value),
                 s.precision.fp4_on_hopper),
          stored(s.gpu, pick(s.precision.shared_experts, s.precision.weights.is_auto ? m.ffn_dtype : s.precision.weights.value),
                 s.precision.fp4_on_hopper),
          pick(s.precision.embedding, m.dtype),
          pick(s.precision.kv_cache, Dtype::bf16),
          Dtype::bf16, pick(s.precision.combine, Dtype::bf16),
          s.gpu.hbm_bandwidth_GBps * 1e9,
          s.parallel.tp, s.parallel.dp, s.parallel.ep, s.parallel.pp, s.moe_tp(), s.gpus_per_node()};
    c.set_peaks();
    c.gemm_engine = s.runtime.engine == EngineKind::vllm     ? GemmEngine::vllm
                    : s.runtime.engine == EngineKind::trtllm ? GemmEngine::trtllm
                                                             : GemmEngine::sglang;
    c.fp8_block = s.precision.fp8_scaling == Fp8Scaling::block ||
                  (s.precision.fp8_scaling == Fp8Scaling::auto_ && m.fp8_block_scaled);
    // embedding stays 16-bit unless set explicitly (checkpoints keep it unquantised)
    if (c.w_embed == Dtype::fp32) c.w_embed = Dtype::bf16;
    c.kv_elem_bytes = mla_kv_bytes(m, c.kv, s.precision.mla_kv);
    const Dtype exp_compute = compute_of(s.gpu, c.w_exp, s.precision.fp4_compute);
    c.disp = pick(s.precision.dispatch, (exp_compute == Dtype::fp8 || is_fp4_like(exp_compute)) ? Dtype::fp8 : Dtype::bf16);
    c.sm_share = std::max(0.05, 1.0 - double(s.runtime.comm_sms) / s.gpu.sm_count);
    c.cp = s.parallel.cp;
    if (s.workload.prefill_busy_ranks > 0 && s.workload.prefill_busy_ranks < s.parallel.dp)
        c.prefill_busy_share = double(s.workload.prefill_busy_ranks) / s.parallel.dp;
    // The families to look tables up in depend on the table set, the GPU's two family names and its topology alone:
    // the last answer is kept per thread (a sweep or plan asks with the same GPU at every point).
    struct FamilyPick {
        std::uint64_t gen = 0;  // never 0 for a table set: nothing kept yet
        std::string tables, fallback;
        bool cuda_like = false;
        const char* families[4] = {nullptr, nullptr, nullptr, nullptr};
        std::string_view views[4] = {};
        bool own_tables = false;
    };
    thread_local FamilyPick last;
    const bool cuda_like = s.gpu.topology == Topology::switch_ || s.gpu.topology == Topology::rack;
    if (last.gen == tables.generation() && last.cuda_like == cuda_like && last.tables == s.gpu.tables &&
        last.fallback == s.gpu.tables_fallback) {
        for (int i = 0; i < 4; ++i) {
            c.families[i] = last.families[i];
            c.family_views[i] = last.views[i];
        }
        c.own_tables = last.own_tables;
    } else {
        int nf = 0;
        auto add_family = [&](const std::string& f) {
            if (f.empty() || nf >= 4) return;
            for (int i = 0; i < nf; ++i)
                if (std::string_view(f) == c.family_views[i]) return;
            const FamilyRef* ref = family_ref(f);  // the stored name outlives the scenario string
            if (!ref) return;
            const std::string_view name(ref->family, f.size());  // the same text as f
            if (!tables.has_family(name)) return;
            c.family_views[nf] = name;
            c.families[nf++] = ref->family;
        };
        add_family(s.gpu.tables);
        c.own_tables = nf == 1;
        add_family(s.gpu.tables_fallback);
        // A GPU that names no table family at all (tables and tables_fallback both empty: tables turned off) is
        // costed by the analytical fallback alone, and so are mesh and unified-memory chips (Tenstorrent, Apple)
        // without a family of their own: they run other kernels than the CUDA ones measured in bench_data.
        // Otherwise the H800 and H100 tables are the last resort.
        if ((!s.gpu.tables.empty() || !s.gpu.tables_fallback.empty()) && (cuda_like || nf > 0)) {
            add_family("h800");
            add_family("h100");
        }
        last.gen = tables.generation();
        last.tables = s.gpu.tables;
        last.fallback = s.gpu.tables_fallback;
        last.cuda_like = cuda_like;
        for (int i = 0; i < 4; ++i) {
            last.families[i] = c.families[i];
            last.views[i] = c.family_views[i];
        }
        last.own_tables = c.own_tables;
    }
    e.weights_dtype = c.w_attn;
    e.experts_dtype = c.w_exp;
    e.kv_dtype = c.kv;
    // A warning's text, its parts joined in one allocation (a scenario's warnings are written by every estimate of it)
    auto warn = [&](std::initializer_list<std::string_view> parts) {
        if (e.warnings.empty()) e.warnings.reserve(4);  // a few at most: one allocation rather than a doubling
        e.warnings.push_back(concat(parts));
    };
    if (want_warnings && s.gpu.tables.empty()) {
        if (c.families[0])
            warn({s.gpu.name, " has no measured kernel tables: efficiencies are borrowed from ", c.families[0], " through the roofline"});
        else
            warn({s.gpu.name, " has no measured kernel tables: every kernel takes the analytical fallback"});
    }
    const Dtype exp_asked = pick(s.precision.experts, s.precision.weights.is_auto ? m.expert_dtype : s.precision.weights.value);
    if (want_warnings && (exp_asked == Dtype::mxfp4 || exp_asked == Dtype::nvfp4) && !native_fp4(s.gpu, exp_asked)) {
        if (c.w_exp != exp_asked)
            warn({"FP4 experts are pre-expanded to ", dtype_name(c.w_exp), " on ", s.gpu.name,
                  " (no FP4 tensor cores, precision.fp4_on_hopper = expand): expert memory doubles"});
        else
            warn({dtype_name(c.w_exp), " experts stay packed on ", s.gpu.name,
                  " (no FP4 tensor cores) and are dequantised inside the GEMM to BF16 (W4A16)"});
    }

    const bool want_prefill = s.workload.phase != PhaseSel::decode;
    const bool want_decode = s.workload.phase != PhaseSel::prefill;
    e.ops.reserve(64);
    if (want_prefill) {
        // A prefix-cache hit leaves prompt_len - cached tokens per prompt to compute (at least the last one). The
        // forward holds the prompts its prefill_tokens take in (one, in chunks, when the prompt is longer) and
        // computes only their missed tokens: a hit never makes it longer. (Packing the freed budget with more
        // prompts, as an engine's scheduler does, raised the DeepSeek-V3 EP32 prefill preset's TTFT from 2,218 ms
        // at no hit to 2,380 ms at 50% and 2,461 ms at 75%; the serving layer, whose queue supplies those prompts,
        // still asks for it: WorkloadConfig::prefill_tokens_computed.)
        const double cached = s.prefill_cached_tokens(), computed = s.workload.prompt_len - cached;
        const double chunk = double(s.workload.prefill_tokens);
        const bool packed = s.workload.prefill_tokens_computed;
        const double prompts = packed ? std::max(1.0, chunk / computed) : std::max(1.0, chunk / s.workload.prompt_len);
        PhaseShape ps{Phase::prefill, packed ? chunk : std::min(chunk, prompts * computed), prompts,
                      double(s.workload.prompt_len), cached};
        run_phase(c, e, ps, e.prefill_backend, e.prefill);
    }
    if (want_decode) {
        PhaseShape ps{Phase::decode, double(s.workload.batch) * (1 + s.runtime.speculative.draft_tokens), double(s.workload.batch),
                      double(s.context_len())};
        run_phase(c, e, ps, e.decode_backend, e.decode);
    }
    // Overlap policies asked for where they do not apply (issue 30): seed 000's mode 2 ("communication fully hidden")
    // is DeepEP low-latency decode, whose kernels take no SMs; and two-batch overlap puts the shared experts in
    // the attention slot, so shared_expert_overlap (seed 001's prepare_no_receive) changes nothing under it.
    if (want_warnings && s.overlap() != OverlapKind::none) {
        // The EP communication the step hides (layer_time's dispatch_us / combine_us): the all-to-all's dispatch and
        // combine, or the all-gather backend's all-gather and reduce-scatter (comm.cpp, attention DP).
        auto ep_comm_of = [&](Phase ph) -> const char* {
            for (const OpRecord& o : e.ops) {
                if (o.phase != ph) continue;
                const std::string_view n(o.name);
                if (n == "comm.dispatch" || n == "comm.combine") return "dispatch and combine";
                if (n == "comm.allgather" || n == "comm.reduce_scatter") return "all-gather and reduce-scatter";
            }
            return nullptr;
        };
        for (Phase ph : {Phase::prefill, Phase::decode}) {
            if (ph == Phase::prefill ? !want_prefill : !want_decode) continue;
            const A2ABackend be = ph == Phase::prefill ? e.prefill_backend : e.decode_backend;
            const char* what = ep_comm_of(ph);
            if (!what) continue;
            const char* phase = ph == Phase::prefill ? "prefill" : "decode";
            if (s.overlap() == OverlapKind::full && (ph == Phase::prefill || be != A2ABackend::deepep_low_latency))
                warn({"runtime.overlap = full hides the ", phase, " ", what, " (", a2a_backend_name(be),
                      "): seed 000's fully hidden mode is DeepEP low-latency decode only",
                      be == A2ABackend::deepep_normal ? "; DeepEP normal kernels' runtime.comm_sms SMs are taken from the compute they hide under"
                                                      : "",
                      "; tbo is the overlap these kernels reach"});
            if (s.overlap() == OverlapKind::tbo && s.runtime.shared_expert_overlap && m.shared_intermediate > 0)
                warn({"runtime.shared_expert_overlap has no effect on ", phase,
                      " under two-batch overlap: the shared experts already run in the attention slot"});
        }
    }
    // Say when the routed experts are priced by the analytical fallback (their `source` says it per operator).
    // (expert_ops writes every "moe.routed_experts" record and notes an analytical one: c.analytical_experts)
    if (want_warnings && c.analytical_experts && m.ffn_matrices != 3) {
        warn({"routed experts: ungated (up and down around relu2, Nemotron-H) experts on ", s.gpu.name,
              ": no measured MoE table holds such a kernel (the tables are SwiGLU experts); analytical fallback"});
    } else if (want_warnings && c.analytical_experts && s.runtime.moe_kernel == MoeKernelSel::flashinfer_cutlass) {
        warn({"routed experts: runtime.moe_kernel = flashinfer_cutlass has no measured row for ",
              dtype_name(compute_of(s.gpu, c.w_exp, s.precision.fp4_compute)), " experts of this shape and layout on ",
              s.gpu.name, " (AIC's vLLM 0.24 rows: block-scaled FP8 on H100 / H200, moe_tp 1 x ep 2..64, no DeepEP / "
              "pplx all-to-all); analytical fallback with CUTLASS's tiles"});
    } else if (want_warnings && c.analytical_experts) {
        const bool w4a16 = dequantised(s.gpu, c.w_exp);
        warn({"routed experts: no measured grouped-GEMM table applies to ", w4a16 ? "W4A16 (" : "",
              dtype_name(w4a16 ? c.w_exp : compute_of(s.gpu, c.w_exp, s.precision.fp4_compute)), w4a16 ? " dequantised)" : "", " experts on ",
              s.gpu.name, " (the tables are tensor-core grouped GEMMs on Hopper); analytical fallback"});
    }
    memory(c, e);
    if (want_warnings && s.runtime.expert_offload.tier == OffloadTier::host && s.gpu.host_memory_bytes > 0 &&
        e.memory.offloaded_experts_bytes > s.gpu.host_memory_bytes) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "offloaded experts need %.1f GB of host memory per GPU, the hardware has %.1f GB",
                      e.memory.offloaded_experts_bytes / 1e9, s.gpu.host_memory_bytes / 1e9);
        warn({buf});
    }
    if (want_warnings && !e.memory.fits) {
        // (sweeps ask for no warnings: this text is built only where it is shown)
        const double needs = e.memory.total_bytes / 1e9, usable = e.memory.usable_bytes / 1e9,
                     short_by = e.memory.shortfall_bytes / 1e9;
        // the same text as the snprintf below, its three numbers written by format_fixed1 where it can
        char n0[24], n1[24], n2[24];
        const std::size_t l0 = format_fixed1(needs, n0), l1 = format_fixed1(usable, n1), l2 = format_fixed1(short_by, n2);
        if (l0 && l1 && l2) {
            warn({"does not fit: needs ", {n0, l0}, " GB per GPU, ", {n1, l1}, " GB usable (", {n2, l2}, " GB short)"});
        } else {
            char buf[160];
            std::snprintf(buf, sizeof buf, "does not fit: needs %.1f GB per GPU, %.1f GB usable (%.1f GB short)", needs, usable,
                          short_by);
            warn({buf});
        }
        // issue 26: how many GPUs of this kind the weights need at the least: the model's weights in their stored
        // formats spread over N GPUs with nothing replicated (a lower bound: any real layout needs as many or more),
        // each GPU keeping what this scenario's KV cache, activations and buffers take.
        const double routed = double(m.n_moe_layers) * m.num_experts * m.expert_params();
        const double model_bytes = routed * bytes_with_scales(c.w_exp) + std::max(0.0, e.total_params - routed) * bytes_with_scales(c.w_attn);
        const double room = e.memory.usable_bytes - (e.memory.total_bytes - e.memory.weights_bytes);
        if (room > 0 && model_bytes > 0 && std::isfinite(model_bytes / room)) {
            const double n = std::ceil(model_bytes / room);
            if (n > s.world() && n < 1e7) {
                char buf[200];
                std::snprintf(buf, sizeof buf,
                              "does not fit: the weights (%.0f GB) need at least %.0f %s GPUs (%.0f now), each keeping %.1f GB "
                              "for the rest",
                              model_bytes / 1e9, n, s.gpu.name.c_str(), double(s.world()), (e.memory.total_bytes - e.memory.weights_bytes) / 1e9);
                warn({buf});
            }
        }
    }
    if (!all_finite(e, c.records_nonfinite)) {
        e.errors.push_back({"", "the model produced a non-finite number for this input (please report it)"});
        return;
    }
    // Cost (issue 28): a GPU-hour's price over the tokens one GPU makes in an hour.
    e.gpu_hour_usd = s.cost.gpu_hour_usd > 0 ? s.cost.gpu_hour_usd : s.gpu.gpu_hour_usd;
    for (PhaseResult* p : {&e.prefill, &e.decode})
        if (p->computed && e.gpu_hour_usd > 0 && p->tokens_per_s_per_gpu > 0)
            p->usd_per_mtok = usd_per_mtok(e.gpu_hour_usd, p->tokens_per_s_per_gpu);
    // Power and energy (issue 28): from what each phase's records keep busy.
    e.board_power_w = board_power_w(s.gpu);
    apply_step_power(s.gpu, e.ops, Phase::prefill, e.prefill);
    apply_step_power(s.gpu, e.ops, Phase::decode, e.decode);
    e.ok = true;
}

}  // namespace moe
