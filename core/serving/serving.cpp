// serving.cpp — the serving layer (DESIGN §8; formulas derived in docs/serving.md, "Serving").
//
// [SECTION] step evaluations: the few estimate() calls a deployment needs
// [SECTION] aggregated: closed-loop clients on one replica, continuous batching with chunked prefill
// [SECTION] disaggregated: prefill and decode pools, KV transfer, the slower pool sets the pace
// [SECTION] evaluate(): estimate() plus serving
#include "core/serving/serving.h"

#include "core/base/portable_math.h"
#include "core/serving/simulate.h"
#include "core/serving/surface.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace moe {

namespace {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] step evaluations
// ---------------------------------------------------------------------------------------------------------------

// Time of the attention cores of one phase in a step (ms): the part that does not grow with the token count alone.
double attention_ms(const Estimate& e, Phase ph) {
    double us = 0;
    for (const OpRecord& o : e.ops)
        if (o.phase == ph && std::string_view(o.name) == "attn.core") us += o.time_us * o.count;
    return us / 1000.0;
}

}  // namespace

// The scenario the serving layer hands to estimate(): kernel time only (engine overheads are added by the
// serving model), the workload of the serving fields.
Scenario serving_step_scenario(const Scenario& s, const ParallelConfig& p) {
    Scenario x = s;
    x.parallel = p;
    // auto is the engine's own default while serving: resolved here, before serving is switched off below, or the
    // step model would take the scenario for a step-level one and price DeepEP, which no engine turns on by itself
    if (x.runtime.a2a_backend == A2ABackend::auto_ && !auto_a2a_is_deepep(x) && x.model.is_moe())
        x.runtime.a2a_backend = resolve_a2a_backend(x, Phase::decode);  // (the same in both phases without DeepEP)
    x.serving.mode = ServingMode::off;
    x.runtime.prefill_overhead_ms = 0;
    x.runtime.decode_overhead_ms = 0;
    x.workload.prefill_tokens_computed = true;  // the chunk is the scheduler's budget of computed tokens
    // the mean request (serving.length_spread draws lengths below the nominal ones)
    const double isl = s.serving.mean_isl(), osl = s.serving.mean_osl();
    x.workload.prompt_len = std::max(1, int(std::lround(isl)));
    x.workload.output_len = std::max(1, int(std::lround(osl)));
    x.workload.context_len = std::max(1, int(std::lround(isl + 0.5 * osl)));
    return x;
}

namespace {

// Prompt tokens the mean request's prefill computes: workload.prefix_cache_hit of the prompt is read from the
// prefix cache; with sessions or a trace, what a cache without a size limit finds (ServingConfig::
// mean_found_unbounded: optimistic, so the screen keeps what caching could make good).
double computed_isl(const Scenario& s) {
    const double isl = s.serving.mean_isl();
    if (s.serving.sessions.on() || s.serving.trace.on())
        return std::max(1.0, isl - s.serving.mean_found_unbounded(s.serving.mode != ServingMode::disaggregated));
    return isl - prefix_cached_tokens(isl, s.workload.prefix_cache_hit);
}

// Clients in flight on the deployment: serving.concurrency (disaggregated too: the decode batch is the limit per
// rank, DESIGN 11.3).
double clients_in_flight(const ServingConfig& sv) { return double(sv.concurrency); }

int gpus_of(const ParallelConfig& p) { return p.tp * p.dp * p.pp; }

// The running batch's decode step and what the memory model says about it.
void take_decode(const Estimate& e, ServingSteps& st) {
    st.decode_ms = e.decode.step_ms;
    st.tokens_per_step = decode_tokens_per_step(e.decode);
    st.max_batch = e.memory.max_batch;
    st.weights_fit = e.memory.max_batch >= 1 || e.memory.fits;
}

bool take(const Estimate& e, ServingSteps& st, const char* what) {
    if (e.ok) return true;
    for (const Issue& i : e.errors) st.errors.push_back({i.path, std::string(what) + ": " + i.message});
    return false;
}

// A step through the memo (ServingStepMemo): the estimate's outcome, its step time and attention time of phase `ph`.
template <class Make>
const ServingStepMemo::Part& memo_step(ServingStepMemo::Part* memo, ServingStepMemo::Part& scratch, const Tables& t,
                                       Phase ph, Make&& make) {
    ServingStepMemo::Part& p = memo ? *memo : scratch;
    if (p.have) return p;
    const Estimate e = estimate(make(), t);
    p.have = true;
    p.ok = e.ok;
    p.errors = e.errors;
    p.step_ms = ph == Phase::prefill ? e.prefill.step_ms : e.decode.step_ms;
    p.attention_ms = attention_ms(e, ph);
    return p;
}
bool take(const ServingStepMemo::Part& p, ServingSteps& st, const char* what) {
    if (p.ok) return true;
    for (const Issue& i : p.errors) st.errors.push_back({i.path, std::string(what) + ": " + i.message});
    return false;
}

}  // namespace


// ---- disaggregated pools, each on its own (the planner caches them: a pool's steps do not depend on the other's)

bool serving_prefill_pool(const Scenario& s, const Tables& t, ServingSteps& st) {
    const PoolConfig& pp = s.serving.prefill;
    const double isl = computed_isl(s);  // prompt tokens computed (prefix-cache hits are read)
    st.prefill_dp = pp.parallel.dp;
    st.prefill_gpus_per_worker = gpus_of(pp.parallel);
    // Prefill worker: one forward of `batch` prompts per DP rank.
    Scenario x = serving_step_scenario(s, pp.parallel);
    x.workload.phase = PhaseSel::prefill;
    const double tokens = std::min(1e7, double(pp.batch) * isl);
    x.workload.prefill_tokens = int(tokens);
    x.workload.batch = 1;
    const Estimate a = estimate(x, t);
    if (!take(a, st, "serving.prefill")) return false;
    // a prompt longer than the forward's budget runs in several chunks
    st.prefill_tokens = tokens;
    st.prefill_ms = a.prefill.step_ms * std::max(1.0, std::ceil(double(pp.batch) * isl / tokens));
    st.chunk_tokens = tokens;
    st.prefill_fits = a.memory.fits;
    if (!a.memory.fits) st.warnings.push_back("serving.prefill: a prefill worker does not fit its forward in memory");
    return true;
}

bool serving_decode_pool(const Scenario& s, const Tables& t, ServingSteps& st) {
    const PoolConfig& dp = s.serving.decode;
    st.dp = dp.parallel.dp;
    st.decode_gpus_per_worker = gpus_of(dp.parallel);
    st.batch = dp.batch;
    Scenario y = serving_step_scenario(s, dp.parallel);
    y.workload.phase = PhaseSel::decode;
    y.workload.batch = dp.batch;
    const Estimate d = estimate(y, t);
    if (!take(d, st, "serving.decode")) return false;
    take_decode(d, st);
    Scenario y1 = y;
    y1.workload.batch = 1;
    const Estimate d1 = estimate(y1, t);
    if (!take(d1, st, "serving.decode")) return false;
    st.decode1_ms = d1.decode.step_ms;
    // KV of one request, whole model (every TP shard), in the cache's format.
    const ModelSpec& m = s.model;
    st.kv_bytes_per_request = m.kv_bytes_per_request(s.serving.mean_isl(), m.num_kv_heads, mla_kv_bytes(m, d.kv_dtype, s.precision.mla_kv), 1.0);
    st.kv_blocks_per_request = kv_blocks_per_request(s, s.serving.mean_isl());
    return true;
}

double kv_blocks_per_request(const Scenario& s, double isl) {
    const ModelSpec& m = s.model;
    // MLA: the latent, and a DSA model's indexer keys beside it; else keys and values
    const double planes = m.attn == AttnKind::mla ? (m.dsa() ? 2.0 : 1.0) : 2.0;
    // (each pipeline stage's ranks post their own layers' blocks, in parallel with the other stages')
    return std::ceil(std::max(1.0, isl) / std::max(1, s.kv_block_tokens())) * std::ceil(double(m.n_attention_layers()) / kv_stages(s)) * planes;
}

int kv_stages(const Scenario& s) { return std::max(1, std::min(s.serving.prefill.parallel.pp, s.serving.decode.parallel.pp)); }

int kv_lanes(const Scenario& s) {
    const ParallelConfig& p = s.serving.prefill.parallel;
    const ParallelConfig& d = s.serving.decode.parallel;
    // distinct KV shards per stage: the KV heads split over TP, no further (ranks past the KV heads hold copies)
    const int heads = s.model.attn == AttnKind::mla ? 1 : std::max(1, s.model.num_kv_heads);
    return kv_stages(s) * std::max(1, std::min({p.tp, d.tp, heads}));
}

double kv_link_GBps(const Scenario& s, int prefill_gpus_per_worker, int decode_gpus_per_worker) {
    // the lanes a request's KV moves over in parallel (kv_lanes); inside one NVLink domain over NVLink
    const int gpn = s.parallel.gpus_per_node > 0 ? s.parallel.gpus_per_node : s.gpu.gpus_per_node;
    const bool same_domain = prefill_gpus_per_worker + decode_gpus_per_worker <= gpn;
    return kv_lanes(s) * (same_domain ? s.gpu.nvlink_bandwidth_GBps : s.gpu.rdma_bandwidth_GBps);
}

void serving_link(const Scenario& s, ServingSteps& st) {
    const ServingConfig& sv = s.serving;
    st.gpus = sv.prefill.workers * st.prefill_gpus_per_worker + sv.decode.workers * st.decode_gpus_per_worker;
    st.kv_link_GBps = kv_link_GBps(s, st.prefill_gpus_per_worker, st.decode_gpus_per_worker);
}

ServingSteps serving_steps(const Scenario& s, const Tables& t, const EngineConstants& k, ServingStepMemo* memo) {
    ServingSteps st;
    const ServingConfig& sv = s.serving;
    const double isl = computed_isl(s);  // prompt tokens computed (prefix-cache hits are read)
    if (sv.mode == ServingMode::aggregated) {
        const ParallelConfig& p = s.parallel;
        st.dp = p.dp;
        st.gpus = gpus_of(p);
        st.batch = double(sv.concurrency) / p.dp;
        const int b = std::max(1, int(std::lround(st.batch)));
        const double C = s.workload.prefill_tokens;
        st.chunk_tokens = C;
        const bool mixed = k.mixed_batches;
        // Step 1: the running batch's decode step and a full forward of prefill tokens, with the memory model.
        Scenario x = serving_step_scenario(s, p);
        x.workload.phase = PhaseSel::both;
        x.workload.batch = b;
        // mixed: the budget left after the decode tokens (vLLM and TRT-LLM schedule decode first)
        st.mixed_tokens = std::max(256.0, C - b);
        st.prefill_tokens = C;
        x.workload.prefill_tokens = int(mixed ? st.mixed_tokens + b : C);
        const Estimate a = estimate(x, t);
        if (!take(a, st, "serving step")) return st;
        take_decode(a, st);
        // Step 2: mixed: the decode batch's tokens as a prefill-shaped forward (the non-attention baseline the
        // chunk adds to); separate: one request's prompt alone (its first chunk).
        // (Separate forwards: the concurrency does not change it, the memo may hold it.)
        ServingStepMemo::Part scratch;
        const ServingStepMemo::Part& e2 = memo_step(memo && !mixed ? &memo->single : nullptr, scratch, t, Phase::prefill, [&] {
            Scenario y = x;
            y.workload.phase = PhaseSel::prefill;
            y.workload.prefill_tokens = mixed ? b : int(std::min(isl, C));
            return y;
        });
        if (!take(e2, st, "serving step")) return st;
        const double chunks = std::ceil(isl / (mixed ? st.mixed_tokens : C));
        if (mixed) {
            const double P = st.mixed_tokens, T = P + b;
            const double attn_T = attention_ms(a, Phase::prefill);
            const double non_attn_T = a.prefill.step_ms - attn_T;
            const double non_attn_b = e2.step_ms - e2.attention_ms;
            st.mixed_extra_ms = std::max(0.0, non_attn_T - non_attn_b) + attn_T * P / T;
            // one request's prompt rides on `chunks` steps; the added work is linear in its tokens
            st.mixed_single_extra_ms = st.mixed_extra_ms * isl / P;
            st.prefill_ms = a.prefill.step_ms;
        } else {
            st.prefill_ms = a.prefill.step_ms;
            st.prefill_single_ms = e2.step_ms * chunks;
        }
        // Step 3: decode at batch 1 (how the step shrinks when fewer requests are decoding; the memo may hold it).
        ServingStepMemo::Part scratch3;
        const ServingStepMemo::Part& e3 = memo_step(memo ? &memo->decode1 : nullptr, scratch3, t, Phase::decode, [&] {
            Scenario z = x;
            z.workload.phase = PhaseSel::decode;
            z.workload.batch = 1;
            return z;
        });
        if (!take(e3, st, "serving step")) return st;
        st.decode1_ms = e3.step_ms;
        st.ok = true;
        return st;
    }
    if (sv.mode == ServingMode::disaggregated) {
        if (!serving_prefill_pool(s, t, st) || !serving_decode_pool(s, t, st)) return st;
        serving_link(s, st);
        st.ok = true;
        return st;
    }
    st.errors.push_back({"serving.mode", "is off: nothing to serve"});
    return st;
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] aggregated
// ---------------------------------------------------------------------------------------------------------------

// The per-step overheads (the scenario's runtime fields when set, else the engine's) and the per-request overhead
// (docs/serving.md, "Serving").
struct Overheads {
    double decode_ms, prefill_ms, request_ms;
};
Overheads overheads(const Scenario& s, const EngineConstants& k) {
    return {s.runtime.decode_overhead_ms >= 0 ? s.runtime.decode_overhead_ms : decode_step_overhead_ms(k, s.model.num_layers),
            s.runtime.prefill_overhead_ms >= 0 ? s.runtime.prefill_overhead_ms : prefill_step_overhead_ms(k, s.model.num_layers),
            k.request_overhead_ms + k.request_overhead_per_ktoken_ms * s.serving.mean_isl() / 1000.0 +
                k.request_overhead_per_client_ms * clients_in_flight(s.serving)};
}

// The weight q of synchronised rounds in the run's mean: the first of k rounds always; each later one by the
// engine's wave_persistence (fixed lengths), times the share g = W / (W + D) of a round that still arrives together
// when the requests' lengths differ: the previous round's finishes are spread over D = spread x osl x the decode
// step, its prompts take W to prefill (docs/serving.md, "Serving").
double first_round_weight(const Scenario& s, const EngineConstants& k, double round_prefill_ms, double decode_step_ms) {
    const double rounds = std::max(1, s.serving.requests_per_client);
    const double spread_ms = s.serving.length_spread * s.serving.osl * decode_step_ms;
    const double g = round_prefill_ms > 0 ? round_prefill_ms / (round_prefill_ms + spread_ms) : 1.0;
    return (1.0 + (rounds - 1.0) * k.wave_persistence * g) / rounds;
}

}  // namespace

double prefill_forward_ms(const Scenario& s, const ServingSteps& st, const EngineConstants& k) {
    return st.prefill_ms + overheads(s, k).prefill_ms;
}

namespace {

// Decode step at a running batch b between 1 and the full batch (linear in b between the two evaluated points:
// the weight read is shared, the per-sequence work grows with b).
double decode_at(const ServingSteps& st, double b) {
    if (st.batch <= 1) return st.decode_ms;
    const double f = std::clamp((b - 1.0) / (st.batch - 1.0), 0.0, 1.0);
    return st.decode1_ms + f * (st.decode_ms - st.decode1_ms);
}

// The most requests memory lets run at once. The memory model's max_batch holds requests at their mean context
// (isl + osl/2); an engine that reserves each request's whole output at admission (kv_reserve_output) fits fewer.
double running_cap(const ServingSteps& st, const EngineConstants& k, double isl, double osl) {
    return k.kv_reserve_output ? st.max_batch * (isl + 0.5 * osl) / (isl + osl) : st.max_batch;
}

// Mean over the requests j = 1..B of ceil(j * a): the forwards (or chunks) until request j's prompt is through,
// when B prompts of a forwards' worth each arrive together.
double mean_ceil_steps(double B, double a) {
    if (B <= 4096) {
        const int n = std::max(1, int(std::lround(B)));
        double sum = 0;
        for (int j = 1; j <= n; ++j) sum += std::ceil(j * a - 1e-9);
        return sum / n;
    }
    return a * (B + 1.0) / 2.0 + 0.5;
}

// Steady-state wait for the prefill capacity (mean value analysis of a closed loop): N clients, each spends Z
// outside the prefill queue (decoding, overheads) and S of prefill work per request, served in arrival order with
// deterministic service (the request in service has S/2 left on average). Returns the mean wait before a request's
// own prefill starts. Exact recursion up to 4096 clients; beyond, the saturated asymptote.
double prefill_wait(double N, double S, double Z) {
    if (N <= 1 || S <= 0) return 0.0;
    const int n_max = int(std::min(4096.0, std::floor(N)));
    double Q = 0, U = 0, R = S;
    for (int n = 1; n <= n_max; ++n) {
        R = S + std::max(0.0, Q - U) * S + 0.5 * U * S;
        const double X = n / (Z + R);
        Q = X * R;
        U = std::min(1.0, X * S);
    }
    if (N > n_max) R = std::max(R, N * S - Z);
    return std::max(0.0, R - S);
}

// Aggregated serving of B requests per DP rank (docs/serving.md, "Serving"). Two regimes bound what a benchmark sees:
//  - synchronised rounds: the clients' requests arrive together (the first round always; later rounds too when the
//    engine re-aligns them, as prefill-first scheduling does), wait for each other's prompts, then decode together;
//  - steady state: requests arrive spread out, each prompt is prefilled on arrival and its work lands on the
//    others' decode steps.
// The run's mean weighs the first by q = (1 + (k - 1) * wave_persistence) / k, k requests per client.
ServingResult aggregated(const Scenario& s, const ServingSteps& st, const EngineConstants& k) {
    ServingResult r;
    r.computed = true;
    const double isl = s.serving.mean_isl(), osl = s.serving.mean_osl();
    const double isl_c = computed_isl(s);  // the prompt tokens prefill computes (memory still holds all isl)
    const Overheads ov = overheads(s, k);
    const double od = ov.decode_ms, op = ov.prefill_ms;
    const double dks = 1.0, pks = 1.0;  // kernel time as the tables give it
    const double n_dec = std::max(0.0, osl - 1.0);   // tokens per request after the first
    const double tps = std::max(1.0, st.tokens_per_step);
    const double n_st = n_dec / tps;                   // the decode steps that give them (speculative: fewer)
    // Memory caps the running batch (running_cap); the rest wait for a slot.
    const double B = st.batch;
    const double Br = std::max(1.0, std::min(B, std::floor(running_cap(st, k, isl, osl))));
    r.fits = st.weights_fit && st.max_batch >= 1;
    r.running_batch = Br;
    const double Sd = decode_step_ms(k, decode_at(st, Br) * dks + od, Br);  // a decode step with its overhead
    const double Sd_half = decode_step_ms(k, decode_at(st, 0.5 * (Br + 1)) * dks + od, 0.5 * (Br + 1));
    double sync_ttft, sync_tpot_pf, steady_ttft, steady_queue = 0, steady_tpot_pf;
    double round_ms;  // a synchronised round's prefill: until the last of its prompts is through
    bool prefill_bound = false;  // steady state: the prompts alone keep the prefill capacity busy
    if (k.mixed_batches) {
        const double P = st.mixed_tokens;
        const double X = st.mixed_extra_ms * pks + op;     // a step's extra for a full chunk
        const double chunks = std::ceil(isl_c / P);
        const double x1 = st.mixed_single_extra_ms * pks + chunks * op;  // one prompt's extra
        // synchronised: all prompts through full chunks; request j's first token after ceil(j * isl / P) steps
        const double a = isl_c / P;
        const double f_mean = mean_ceil_steps(Br, a), n_f = std::ceil(Br * a - 1e-9);
        // a round's prompts fill whole chunks; a round smaller than one chunk adds only its own tokens
        const double Xs = st.mixed_extra_ms * pks * std::min(1.0, Br * isl_c / P) + op;
        sync_ttft = f_mean * (Sd_half + Xs);
        round_ms = n_f * (Sd_half + Xs);
        // after its first token, a request decodes on the remaining mixed steps, then on pure decode steps
        sync_tpot_pf = n_st > 0 ? std::min(n_f - f_mean, n_st) * Xs / n_st : 0.0;
        // steady state
        steady_ttft = chunks * Sd + x1 + 0.5 * Sd;
        const double other_chunks = (Br - 1.0) * a;
        if (other_chunks <= n_st) {
            steady_tpot_pf = n_st > 0 ? (Br - 1.0) * x1 / n_st : 0.0;
        } else {  // prefill-bound: every step carries a full chunk, prompts queue
            steady_tpot_pf = X;
            prefill_bound = true;
            steady_queue = std::max(0.0, Br * a * (Sd + X) - n_st * (Sd + X) - steady_ttft);
        }
    } else {
        // Separate prefill forwards of up to chunk_tokens that pause decoding (SGLang).
        const double C = st.chunk_tokens;
        const double Sp1 = st.prefill_single_ms * pks + std::ceil(isl_c / C) * op;  // one prompt
        const double SpC = st.prefill_ms * pks + op;                              // a full forward
        // forward of T tokens between one prompt and a full chunk: linear in the tokens
        auto forward = [&](double T) {
            const double t1 = std::min(isl_c, C);
            if (T <= t1 || C <= t1) return Sp1 / std::ceil(isl_c / C) * std::max(1.0, T / t1);
            return Sp1 / std::ceil(isl_c / C) + (T - t1) / (C - t1) * (SpC - Sp1 / std::ceil(isl_c / C));
        };
        const double total = Br * isl_c;                     // prompt tokens of a round
        const double W = total <= C ? forward(total) : total / C * SpC;
        const double a = isl_c / C;
        sync_ttft = total <= C ? W : mean_ceil_steps(Br, a) * SpC;
        round_ms = W;
        // decoding starts when every prompt of the round is through (prefill first)
        sync_tpot_pf = n_st > 0 ? std::max(0.0, W - sync_ttft) / n_st : 0.0;
        steady_ttft = Sp1 + 0.5 * Sd;
        const double other = (Br - 1.0) * Sp1;
        if (other <= n_st * Sd) {
            steady_tpot_pf = n_st > 0 ? other / n_st : 0.0;
        } else {  // prefill-bound: prompts batch into full forwards, decoding gets what is left
            steady_tpot_pf = n_st > 0 ? (Br - 1.0) / Br * W / n_st : 0.0;
            prefill_bound = true;
            steady_queue = std::max(0.0, W - steady_ttft);
        }
    }
    // Steady state: a prompt also waits for the prompts that arrived before it (the clients' prefill work queues
    // for the same capacity). S_pf: one prompt's prefill time; Z: the rest of a request's life.
    {
        const double S_pf = steady_ttft - 0.5 * Sd;
        const double Z = ov.request_ms + n_st * (Sd + steady_tpot_pf) + 0.5 * Sd;
        steady_queue = std::max(steady_queue, prefill_wait(Br, S_pf, Z));
    }
    const double q = first_round_weight(s, k, round_ms, Sd / tps);
    const double ttft_sync_part = q * sync_ttft, ttft_steady_part = (1 - q) * (steady_ttft + steady_queue);
    const double tpot_pf = q * sync_tpot_pf + (1 - q) * steady_tpot_pf;
    // (per token: a step's time over the tokens it gives)
    r.tpot_decode_ms = Sd / tps;
    r.tpot_prefill_ms = tpot_pf / tps;
    r.tpot_ms = n_dec > 0 ? (Sd + tpot_pf) / tps : 0.0;
    const double ttft_kernels = ttft_sync_part + ttft_steady_part;
    // Requests beyond the running batch wait for a slot: B/Br - 1 request lifetimes.
    // (the scheduler's poll and an overlap schedule's launched forward, while other requests decode: simulate.cpp)
    const double wait_steps = clients_in_flight(s.serving) > 1 ? scheduler_wait_steps(s, k) : 0.0;
    const double req_ovh = ov.request_ms + wait_steps * Sd;
    const double life = req_ovh + ttft_kernels + n_dec * r.tpot_ms;
    double slot_wait = B > Br ? (B / Br - 1.0) * life : 0.0;
    // An engine that admits requests with KV for their prompt only (vLLM, SGLang) lets in as many as memory holds
    // prompts for, B_adm = Br * (isl + osl/2) / isl, and preempts when the growing contexts run out of room: the
    // admitted requests' share of the wait falls between their tokens (TPOT), the rest still wait before their first.
    if (slot_wait > 0 && !k.kv_reserve_output && n_dec > 0) {
        const double B_adm = Br * (isl + 0.5 * osl) / isl;
        const double f_ttft = std::clamp((B - B_adm) / (B - Br), 0.0, 1.0);
        r.tpot_preempt_ms = (1 - f_ttft) * slot_wait / n_dec;
        r.tpot_ms += r.tpot_preempt_ms;
        slot_wait *= f_ttft;
    }
    r.ttft_overhead_ms = req_ovh;
    r.ttft_prefill_ms = steady_ttft;
    r.ttft_queue_ms = (1 - q) * steady_queue + slot_wait;
    r.ttft_first_wave_ms = std::max(0.0, ttft_kernels - (1 - q) * steady_queue - steady_ttft);
    r.ttft_ms = req_ovh + ttft_kernels + slot_wait;
    r.e2e_latency_ms = r.ttft_ms + n_dec * r.tpot_ms;
    // Closed loop (Little's law): B clients per rank, each one request per e2e latency.
    r.requests_per_s = r.e2e_latency_ms > 0 ? B * st.dp / (r.e2e_latency_ms / 1000.0) : 0.0;
    r.gpus = st.gpus;
    r.output_tokens_per_s_per_gpu = r.requests_per_s * osl / st.gpus;
    r.tokens_per_s_per_user = r.tpot_ms > 0 ? 1000.0 / r.tpot_ms : 0.0;
    r.prefill_utilisation = r.e2e_latency_ms > 0 ? std::min(1.0, (ttft_kernels + n_st * tpot_pf) / r.e2e_latency_ms) : 0.0;
    r.bound = B > Br ? "memory" : (prefill_bound ? "prefill" : "decode");
    return r;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] disaggregated
// ---------------------------------------------------------------------------------------------------------------

ServingResult disaggregated(const Scenario& s, const ServingSteps& st, const EngineConstants& k) {
    ServingResult r;
    r.computed = true;
    const ServingConfig& sv = s.serving;
    const double osl = sv.mean_osl();
    const Overheads ov = overheads(s, k);
    const double od = ov.decode_ms;
    const double dks = 1.0;  // kernel time as the tables give it
    const double n_dec = std::max(0.0, osl - 1.0);  // tokens per request after the first
    const double n_st = n_dec / std::max(1.0, st.tokens_per_step);  // the decode steps that give them
    const double wave_share = 1.0 / std::max(1, sv.requests_per_client);
    // Prefill pool: requests per ms.
    const double Sp = prefill_forward_ms(s, st, k);
    const double per_forward = double(sv.prefill.batch) * st.prefill_dp;
    const double rate_p = sv.prefill.workers * per_forward / Sp;
    // KV transfer of one request.
    r.kv_transfer_ms = kv_transfer_ms(k, st.kv_bytes_per_request, st.kv_link_GBps, st.kv_blocks_per_request);
    // Decode pool: N closed-loop clients, the memory model caps each rank's running batch.
    const double ranks = double(sv.decode.workers) * st.dp;
    const double N = clients_in_flight(sv);
    const double isl = sv.mean_isl();
    const double cap = std::max(1.0, std::floor(running_cap(st, k, isl, osl)));
    r.fits = st.weights_fit && st.max_batch >= 1;
    double b = std::min<double>(sv.decode.batch, cap);
    // (disagg_serial_requests: the decode server's request path follows the prefill's answer)
    const double req_ovh = ov.request_ms + (k.disagg_serial_requests ? ov.request_ms - k.request_overhead_per_client_ms * clients_in_flight(sv) : 0.0);
    const double ttft_base = req_ovh + Sp + r.kv_transfer_ms;
    // Fixed point: the decode batch that the prefill pool can feed. Decode-bound when the prefill pool keeps up.
    double tpot = decode_step_ms(k, decode_at(st, b) * dks + od, b);
    double lambda = 0;  // requests per ms
    for (int it = 0; it < 30; ++it) {
        tpot = decode_step_ms(k, decode_at(st, b) * dks + od, b);
        const double rate_d = n_st > 0 ? ranks * b / (n_st * tpot) : rate_p;
        lambda = std::min(rate_p, rate_d);
        // Little's law over the whole loop: N = lambda * (ttft + n_st * tpot), tpot a decode step here
        const double b_new = std::min(b, n_st > 0 ? lambda * n_st * tpot / ranks : b);
        if (std::fabs(b_new - b) < 1e-6 * b) break;
        b = std::max(1.0, 0.5 * (b + b_new));
    }
    r.running_batch = b;
    const double rho = std::min(0.999, lambda / rate_p);
    r.prefill_utilisation = rho;
    // Waiting for the prefill pool: what the closed loop leaves beyond one prefill (the clients not decoding),
    // at least the forward in flight when utilised.
    const double cycle = lambda > 0 ? N / lambda : 0.0;
    const double wait = std::max(0.5 * rho * Sp, cycle - n_st * tpot - ttft_base);
    r.ttft_overhead_ms = req_ovh;
    r.ttft_prefill_ms = Sp;
    r.ttft_queue_ms = wait;
    // First wave: N prompts at once through the prefill pool.
    const double wave = N / rate_p / 2.0;
    r.ttft_first_wave_ms = wave_share * std::max(0.0, wave - wait);
    // The decode worker streams the tokens: the first reaches the client with the second, at the end of the first
    // decode step (simulate.cpp, disaggregated); the request's end does not move.
    const double first_step = n_dec > 0 ? tpot : 0.0;
    r.ttft_ms = ttft_base + wait + r.ttft_first_wave_ms + first_step;
    r.tpot_decode_ms = tpot / std::max(1.0, st.tokens_per_step);
    r.e2e_latency_ms = r.ttft_ms - first_step + n_st * tpot;
    r.tpot_ms = n_dec > 0 ? (r.e2e_latency_ms - r.ttft_ms) / n_dec : 0.0;
    r.requests_per_s = lambda * 1000.0;
    r.gpus = st.gpus;
    r.output_tokens_per_s_per_gpu = r.requests_per_s * osl / st.gpus;
    r.tokens_per_s_per_user = r.tpot_ms > 0 ? 1000.0 / r.tpot_ms : 0.0;
    r.prefill_fits = st.prefill_fits;
    r.bound = sv.decode.batch > cap ? "memory" : (lambda < rate_p * 0.999 ? "decode" : "prefill");
    return r;
}

}  // namespace


ServingResult serving_model(const Scenario& s, const ServingSteps& st, const EngineConstants& k) {
    if (!st.ok) return {};
    return s.serving.mode == ServingMode::disaggregated ? disaggregated(s, st, k) : aggregated(s, st, k);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] evaluate()
// ---------------------------------------------------------------------------------------------------------------

Estimate evaluate(const Scenario& s, const Tables& t, const EngineSet& engines, ServingStepMemo* memo) {
    Estimate e;
    evaluate_into(s, t, engines, memo, e);
    return e;
}

void evaluate_into(const Scenario& s, const Tables& t, const EngineSet& engines, ServingStepMemo* memo, Estimate& e,
                   bool want_warnings, bool energy, ServingMethod method) {
    estimate_into(s, t, e, want_warnings);
    if (!e.ok || s.serving.mode == ServingMode::off) return;
    const EngineConstants k = engine_constants(engines, s);
    auto fail = [&](const Issues& errors) {
        e.ok = false;
        e.errors.insert(e.errors.end(), errors.begin(), errors.end());
    };
    if (method == ServingMethod::closed_form) {
        ServingSteps st = serving_steps(s, t, k, memo);
        if (!st.ok) return fail(st.errors);
        if (want_warnings) e.warnings.insert(e.warnings.end(), st.warnings.begin(), st.warnings.end());
        e.serving = serving_model(s, st, k);
    } else {
        // (a trace is held to its own limit, kMaxTraceRequests, when it is parsed)
        if (const double n = simulated_requests(s); n > kMaxSimulatedRequests && !s.serving.trace.on()) {
            char msg[300];
            std::snprintf(msg, sizeof msg,
                          "%.0f requests per DP rank to simulate (clients x requests per client) exceed the limit of %.0f: "
                          "lower serving.requests_per_client or the clients (serving.concurrency, or the decode pool's batch)",
                          n, kMaxSimulatedRequests);
            return fail({{"serving.requests_per_client", msg}});
        }
        const StepSurface sf = step_surface(s, t);
        if (!sf.ok) return fail(sf.errors);
        if (want_warnings) e.warnings.insert(e.warnings.end(), sf.warnings.begin(), sf.warnings.end());
        e.serving = simulate(s, sf, k);
        if (!e.serving.computed) return fail({{"serving", "the simulation finished no request (please report it)"}});
    }
    // one verdict (issue 26): a disaggregated deployment fits when its decode pool holds a request and a prefill worker
    // holds its forward (the warning above names the pool that does not)
    const bool decode_fits = e.serving.fits;
    if (s.serving.mode == ServingMode::disaggregated) e.serving.fits = decode_fits && e.serving.prefill_fits;
    const ServingResult& r = e.serving;
    for (double v : {r.ttft_ms, r.tpot_ms, r.e2e_latency_ms, r.output_tokens_per_s_per_gpu, r.tokens_per_s_per_user, r.requests_per_s})
        if (!std::isfinite(v)) {
            e.ok = false;
            e.errors.push_back({"serving", "the serving model produced a non-finite number for this input (please report it)"});
            return;
        }
    if (e.gpu_hour_usd > 0 && r.output_tokens_per_s_per_gpu > 0) {
        // every prompt token is served, whether computed or read from the prefix cache
        const double isl = s.serving.mean_isl(), osl = s.serving.mean_osl();
        e.serving.usd_per_mtok_output = usd_per_mtok(e.gpu_hour_usd, r.output_tokens_per_s_per_gpu);
        e.serving.usd_per_mtok_total = usd_per_mtok(e.gpu_hour_usd, r.output_tokens_per_s_per_gpu * (isl + osl) / osl);
    }
    serving_band(k, e.serving);
    if (energy) serving_energy(s, t, e);  // power and J/token under load (serving_power.cpp)
    if (want_warnings && !decode_fits) e.warnings.push_back("serving: the deployment does not fit one request's KV cache next to the weights");
    if (want_warnings && s.serving.scheduler_recv_interval > 1 && s.runtime.engine != EngineKind::sglang)
        e.warnings.push_back("serving.scheduler_recv_interval: SGLang's --scheduler-recv-interval; " +
                             std::string(engine_kind_name(s.runtime.engine)) + " takes new requests at every step, so it is not applied");
}

Estimate evaluate(const Scenario& s, const Tables& t) { return evaluate(s, t, active_engines()); }

void evaluate_into(const Scenario& s, const Tables& t, Estimate& out, bool warnings) {
    evaluate_into(s, t, active_engines(), nullptr, out, warnings);
}

void serving_band(const EngineConstants& k, ServingResult& r) {
    r.has_band = k.has_band();
    if (!r.has_band) return;
    // the band always holds the model's own number: a quantile on the wrong side of 0 (every held-out run above the
    // prediction, say) widens the band to the mean rather than moving the band off it
    // (portable_exp: the page and the CLI print the same band to the last digit)
    auto lo = [](double v, double q) { return v * portable_exp(std::min(0.0, q)); };
    auto hi = [](double v, double q) { return v * portable_exp(std::max(0.0, q)); };
    r.ttft_ms_p10 = lo(r.ttft_ms, k.ttft_log_error_p10);
    r.ttft_ms_p90 = hi(r.ttft_ms, k.ttft_log_error_p90);
    r.tpot_ms_p10 = lo(r.tpot_ms, k.tpot_log_error_p10);
    r.tpot_ms_p90 = hi(r.tpot_ms, k.tpot_log_error_p90);
    r.output_tokens_per_s_per_gpu_p10 = lo(r.output_tokens_per_s_per_gpu, k.throughput_log_error_p10);
    r.output_tokens_per_s_per_gpu_p90 = hi(r.output_tokens_per_s_per_gpu, k.throughput_log_error_p90);
}

}  // namespace moe
