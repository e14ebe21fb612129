// surface.cpp — the step-time surface (surface.h): estimate() at grid points of batch, context and forward size.
#include "core/serving/surface.h"

#include <algorithm>
#include <cmath>

#include "core/serving/serving.h"

namespace moe {

double Curve::at(double v) const {
    const size_t n = x.size();
    if (n == 0) return 0.0;
    if (n == 1) return y[0];
    size_t i = size_t(std::upper_bound(x.begin(), x.end(), v) - x.begin());
    i = std::clamp<size_t>(i, 1, n - 1);  // the segment [i-1, i] (the end segments extrapolate)
    if (!(x[i] > x[i - 1])) return y[i];  // (a grid never repeats a point; a caller's curve might)
    const double f = (v - x[i - 1]) / (x[i] - x[i - 1]);
    return std::max(0.0, y[i - 1] + f * (y[i] - y[i - 1]));
}

double PoolSurface::decode_ms(double b, double ctx) const {
    const double lo = decode_lo.at(b);
    if (!(ctx_hi > ctx_lo)) return lo;
    const double f = (ctx - ctx_lo) / (ctx_hi - ctx_lo);
    return std::max(0.0, lo + f * (decode_hi.at(b) - lo));
}

double PoolSurface::attn_scale(double T, double own_ms) const {
    if (!(own_ms >= 0) || !(T > 0) || !(attn_per_token_mean > 0)) return 1.0;
    return own_ms / (T * attn_per_token_mean);
}

double PoolSurface::lockstep_ms(const double* T, const double* own_ms, int n) const {
    if (n <= 1 || forward_moe.x.empty()) {
        double worst = 0;  // (independent ranks: the caller passes one)
        for (int i = 0; i < n; ++i)
            if (T[i] > 0) worst = std::max(worst, forward_ms(T[i], own_ms[i]));
        return worst;
    }
    double own = 0, sum = 0;
    for (int i = 0; i < n; ++i) {
        if (!(T[i] > 0)) continue;
        own = std::max(own, forward_ms(T[i], own_ms[i]) - forward_moe.at(T[i]));
        sum += T[i];
    }
    return std::max(0.0, own + forward_moe.at(sum / lockstep_dp));
}

double PoolSurface::mixed_ms(double b, double ctx, double P, double own_ms) const {
    if (P <= 0) return decode_ms(b, ctx);
    if (b <= 0) return forward_ms(P, own_ms);
    const double na_T = forward.at(P + b) - forward_attn.at(P + b), na_b = forward.at(b) - forward_attn.at(b);
    return decode_ms(b, ctx) + std::max(0.0, na_T - na_b) + forward_attn.at(P) * attn_scale(P, own_ms);
}

namespace {

// 1 to 8, then by 2 to 16 and by 4 to 32, then 48, 64, 96, ... (the powers of two and 1.5 x each) below `hi`, then
// `hi` itself. Denser at small batches: the distinct experts a batch reaches bend the decode step most there (a
// measured MoE table's first grid points, 1 and 4 tokens, fall inside it once the routing moves them: ops_ffn.cpp,
// routed_weight_load_us). `eighths`: from 256 on also 0.875 x each power of two (the decode batches: a measured
// table's grid point between two nodes bends the step there; Qwen3-235B's decode step at 480 per rank under DeepEP
// LL with two-batch overlap lay 1.08% under the line from 384 to 512, 0.72% under the one from 448).
std::vector<double> grid(double hi, bool eighths = false) {
    hi = std::max(1.0, std::ceil(hi));
    std::vector<double> g{1};
    for (double v = 2; v <= 32 && g.back() < hi; v += v < 8 ? 1 : v < 16 ? 2 : 4) g.push_back(std::min(v, hi));
    for (double p = 64; g.back() < hi; p *= 2)
        for (double v : {0.75 * p, eighths && p >= 256 ? 0.875 * p : 0.75 * p, p})
            if (std::min(v, hi) > g.back()) g.push_back(std::min(v, hi));
    return g;
}

int gpus_of(const ParallelConfig& p) { return p.tp * p.dp * p.pp; }

// A prefill forward's attention whose work follows its prompts' lengths (ms, all layers): the attention cores and
// the sparse-attention indexers (the records core/step/mixed.cpp takes per request).
double prefill_attn_ms(const Estimate& e) {
    double us = 0;
    for (const OpRecord& o : e.ops) {
        const std::string_view n(o.name);
        if (o.phase == Phase::prefill && (n == "attn.core" || n == "attn.indexer")) us += o.time_us * o.count;
    }
    return us / 1000.0;
}

// The part of a prefill forward that follows the EP group's tokens (ms, all layers): the routed experts and the
// records around them (permutes, finalize, padding), not the router, the shared experts or the latent projections,
// which run on the rank's own tokens (PoolSurface::forward_moe).
double prefill_moe_ms(const Estimate& e) {
    double us = 0;
    for (const OpRecord& o : e.ops) {
        const std::string_view n(o.name);
        if (o.phase != Phase::prefill || n.substr(0, 4) != "moe.") continue;
        if (n == "moe.router" || n.substr(0, 11) == "moe.shared_" || n.substr(0, 11) == "moe.latent_") continue;
        us += o.exposed_us * o.count;
    }
    return us / 1000.0;
}

// The longest prompt + output a request of s can have (its lengths are drawn at or below the nominal ones; a
// session's last turn holds the system prompt and every turn before it; a trace's longest request).
double longest_request(const ServingConfig& sv) {
    if (sv.trace.on()) {
        double m = 1;
        for (const TraceRequest& q : sv.trace.data->reqs) m = std::max(m, double(q.isl) + q.osl);
        return m;
    }
    if (sv.sessions.on())
        return double(sv.sessions.system_prompt_len) + double(sv.sessions.user_len + sv.osl) * std::max(1, sv.sessions.turns);
    return double(sv.isl) + sv.osl;
}

struct Builder {
    const Tables& t;
    StepSurface& out;
    bool fail(const Estimate& e, const char* what) {
        for (const Issue& i : e.errors) out.errors.push_back({i.path, std::string(what) + ": " + i.message});
        return false;
    }
    // decode steps of the pool over the batch grid at both contexts; the memory model at the largest batch
    bool decode(const Scenario& base, double bmax, double isl, double osl, PoolSurface& ps, const Estimate** mem_out,
                Estimate& mem) {
        Scenario x = base;
        x.workload.phase = PhaseSel::decode;
        ps.ctx_lo = std::max(1.0, isl);
        ps.ctx_hi = std::max(ps.ctx_lo + 1.0, isl + osl);
        for (double b : grid(bmax, true)) {
            x.workload.batch = int(b);
            for (int c = 0; c < 2; ++c) {
                x.workload.context_len = int(std::lround(c ? ps.ctx_hi : ps.ctx_lo));
                const Estimate e = estimate(x, t);
                ++out.estimates;
                if (!e.ok) return fail(e, "serving.decode step");
                (c ? ps.decode_hi : ps.decode_lo).x.push_back(b);
                (c ? ps.decode_hi : ps.decode_lo).y.push_back(e.decode.step_ms);
            }
        }
        // the memory model at the mean context (isl + osl / 2) and the largest batch
        x.workload.batch = int(std::max(1.0, bmax));
        x.workload.context_len = int(std::lround(std::max(1.0, isl + 0.5 * osl)));
        mem = estimate(x, t);
        ++out.estimates;
        if (!mem.ok) return fail(mem, "serving.decode step");
        *mem_out = &mem;
        return true;
    }
    // prefill-shaped forwards of T tokens over the grid up to tmax
    // With lockstep (a disaggregated prefill worker's attention-DP ranks over an MoE model), also the MoE part of
    // each forward (PoolSurface::forward_moe).
    bool forward(const Scenario& base, double tmax, PoolSurface& ps, const char* what, bool lockstep = false) {
        Scenario x = base;
        x.workload.phase = PhaseSel::prefill;
        x.workload.batch = 1;
        lockstep = lockstep && base.parallel.dp > 1 && base.model.is_moe();
        ps.lockstep_dp = lockstep ? base.parallel.dp : 1;
        for (double T : grid(tmax)) {
            if (T > 1 && T < 16) continue;  // the first points are linear in the tokens: 1 and 16 carry them
            x.workload.prefill_tokens = int(T);
            const Estimate e = estimate(x, t);
            ++out.estimates;
            if (!e.ok) return fail(e, what);
            ps.forward.x.push_back(T);
            ps.forward.y.push_back(e.prefill.step_ms);
            ps.forward_attn.x.push_back(T);
            ps.forward_attn.y.push_back(prefill_attn_ms(e));
            if (!lockstep) continue;
            ps.forward_moe.x.push_back(T);
            ps.forward_moe.y.push_back(prefill_moe_ms(e));
        }
        return true;
    }
    // A prompt's attention per token at lengths 2^k and 1.5 x 2^k from 16 tokens (or lmax / 2,048) up to lmax (the
    // kernel tables' points are powers of two; the prefill table interpolates between them in log length), and
    // at the lengths where the model's attention changes shape (a sliding window, a sparse layer's keys, DSA's
    // switch to the sparse kernel past index_topk): a forward of `tokens` (the pool's forward budget) of prompts of
    // that length computed whole (or of one such prompt's average chunk, when longer), so the kernels keep a full
    // forward's parallelism (tile waves) and only the lengths differ, as moe::prefill_step_mixed does. Then the mean
    // prompt's per computed token, at the forwards' prompt length and cached prefix (base's workload).
    bool lengths(const Scenario& base, double lmax, double tokens, PoolSurface& ps, const char* what) {
        Scenario x = base;
        x.workload.phase = PhaseSel::prefill;
        x.workload.batch = 1;
        x.workload.prefix_cache_hit = 0;
        x.workload.prefill_tokens = int(std::clamp(tokens, 16.0, 1e7));
        lmax = std::min(1e7, std::ceil(std::max(16.0, lmax)));
        std::vector<double> ls;
        for (double l : grid(lmax))
            if (l >= std::max(16.0, lmax / 2048)) ls.push_back(l);
        const ModelSpec& m = base.model;
        std::vector<double> knees;
        for (const auto& [w, n] : m.window_groups) knees.push_back(w);
        if (m.compress_window > 0) knees.push_back(m.compress_window);
        if (m.block_sparse()) knees.push_back(m.sparse_keys());
        if (m.index_topk > 0) knees.insert(knees.end(), {double(m.index_topk), m.index_topk + 1.0});
        for (double k : knees)
            if (k > 16 && k < lmax) ls.push_back(k);
        std::sort(ls.begin(), ls.end());
        ls.erase(std::unique(ls.begin(), ls.end()), ls.end());
        for (double l : ls) {
            x.workload.prompt_len = int(l);
            const Estimate e = estimate(x, t);
            ++out.estimates;
            if (!e.ok) return fail(e, what);
            ps.prompt_attn_per_token.x.push_back(l);
            ps.prompt_attn_per_token.y.push_back(prefill_attn_ms(e) / x.workload.prefill_tokens);
        }
        const double L = base.workload.prompt_len, cached = base.prefill_cached_tokens();
        ps.attn_per_token_mean = L > cached ? ps.chunk_attn_ms(cached, L - cached) / (L - cached) : 0.0;
        return true;
    }
};

}  // namespace

StepSurface step_surface(const Scenario& s, const Tables& t) {
    StepSurface out;
    Builder b{t, out};
    const ServingConfig& sv = s.serving;
    const double isl = sv.mean_isl(), osl = sv.mean_osl();
    const double isl_c = isl - prefix_cached_tokens(isl, s.workload.prefix_cache_hit);
    Estimate mem;
    const Estimate* m = nullptr;
    if (sv.mode == ServingMode::aggregated) {
        const ParallelConfig& p = s.parallel;
        out.dp = p.dp;
        out.gpus = gpus_of(p);
        out.chunk_tokens = s.workload.prefill_tokens;
        const Scenario x = serving_step_scenario(s, p);
        const double bmax = std::max(1.0, std::ceil(double(sv.concurrency) / p.dp));
        if (!b.decode(x, bmax, isl, osl, out.agg, &m, mem)) return out;
        // forwards up to the budget (a mixed step's prefill tokens and decode tokens share it)
        if (!b.forward(x, std::max<double>(out.chunk_tokens, 16), out.agg, "serving.prefill step")) return out;
        if (!b.lengths(x, longest_request(sv), out.chunk_tokens, out.agg, "serving.prefill step")) return out;
    } else if (sv.mode == ServingMode::disaggregated) {
        const PoolConfig& pp = sv.prefill;
        const PoolConfig& dp = sv.decode;
        out.prefill_dp = pp.parallel.dp;
        out.dp = dp.parallel.dp;
        out.prefill_gpus_per_worker = gpus_of(pp.parallel);
        out.decode_gpus_per_worker = gpus_of(dp.parallel);
        out.gpus = pp.workers * out.prefill_gpus_per_worker + dp.workers * out.decode_gpus_per_worker;
        // prefill worker: forwards of up to `batch` prompts per DP rank
        const Scenario xp = serving_step_scenario(s, pp.parallel);
        out.prefill_forward_tokens = std::min(1e7, double(pp.batch) * isl_c);
        if (!b.forward(xp, std::max(16.0, out.prefill_forward_tokens), out.prefill, "serving.prefill", true)) return out;
        if (!b.lengths(xp, longest_request(sv), out.prefill_forward_tokens, out.prefill, "serving.prefill")) return out;
        {
            Scenario y = xp;
            y.workload.phase = PhaseSel::prefill;
            y.workload.prefill_tokens = int(std::max(1.0, out.prefill_forward_tokens));
            const Estimate e = estimate(y, t);
            ++out.estimates;
            if (!e.ok) { b.fail(e, "serving.prefill"); return out; }
            out.prefill_fits = e.memory.fits;
            out.prefill_kv_bytes_per_token = e.memory.kv_bytes_per_token;
            if (e.memory.kv_bytes_per_token > 0)
                out.prefill_cache_tokens_per_rank = std::max(0.0, (e.memory.usable_bytes - e.memory.total_bytes) / e.memory.kv_bytes_per_token);
            if (!e.memory.fits) out.warnings.push_back("serving.prefill: a prefill worker does not fit its forward in memory");
        }
        const Scenario xd = serving_step_scenario(s, dp.parallel);
        if (!b.decode(xd, std::max(1, dp.batch), isl, osl, out.decode, &m, mem)) return out;
        const ModelSpec& md = s.model;
        out.kv_bytes_per_request = md.kv_bytes_per_request(isl, md.num_kv_heads, mla_kv_bytes(md, mem.kv_dtype, s.precision.mla_kv), 1.0);
        out.kv_blocks_per_request = kv_blocks_per_request(s, isl);
        out.kv_link_GBps = kv_link_GBps(s, out.prefill_gpus_per_worker, out.decode_gpus_per_worker);
    } else {
        out.errors.push_back({"serving.mode", "is off: nothing to serve"});
        return out;
    }
    out.weights_fit = m->memory.max_batch >= 1 || m->memory.fits;
    // KV slots: the memory model's max batch at the mean context, each request's KV in whole pages (as the memory
    // model rounds it); the simulation charges each request its own page waste (simulate.cpp)
    out.kv_block_tokens = std::max(1, s.kv_block_tokens());
    const double ctx = std::max(1.0, std::round(isl + 0.5 * osl));
    out.kv_tokens_per_rank = m->memory.max_batch * std::ceil(ctx / out.kv_block_tokens) * out.kv_block_tokens;
    out.kv_bytes_per_token = m->memory.kv_bytes_per_token;
    out.tokens_per_step = decode_tokens_per_step(m->decode);
    out.ok = true;
    return out;
}

}  // namespace moe
