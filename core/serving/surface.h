// surface.h — the step-time surface of one deployment: the kernel time of every step shape the serving simulation
// (simulate.h) visits, from estimate() at a few grid points and interpolated between them (docs/serving.md, "Serving").
//
//   decode_ms(b, ctx)   a decode step of b requests per attention-DP rank whose mean context is ctx tokens:
//                       piecewise linear in b over a grid (every batch to 8, then by 2 to 16, by 4 to 32, then 48,
//                       64, 96, ... up to the batch the rank can hold), linear in ctx between the shortest and the
//                       longest context of a request
//   forward_ms(T)       a prefill-shaped forward of T tokens of the workload's prompts (chunked prefill, several
//                       prompts, or a vLLM/TRT-LLM mixed step's prefill part), with its attention part apart
//   forward_ms(T, own)  the same forward whose attention follows its requests' own lengths (seed 000 §8.1): `own`
//                       is the sum over its requests' chunks of chunk_attn_ms(prefix, chunk), one prompt's attention
//                       a(l) over a geometric grid of lengths; the forward's attention is scaled by `own` over
//                       what the same tokens cost at the mean prompt
//   mixed_ms(b, ctx, P) a mixed step: b decode tokens and P prefill tokens in one forward (and with `own`, as above)
//
// Kernel time only: the engines' host time and overheads are added by the simulation, so a fit can change the
// engine constants without building the surface again. The test test_serving_sim.cpp holds the interpolation to
// within 1% of a direct estimate() between grid points.
#pragma once
#include <string>
#include <vector>

#include "core/serving/engine.h"
#include "core/step/estimate.h"

namespace moe {

// A piecewise-linear function over an increasing grid; linear extrapolation past either end.
struct Curve {
    std::vector<double> x, y;
    double at(double v) const;
};

// One pool's steps (aggregated: the replica; disaggregated: the prefill pool or the decode pool).
struct PoolSurface {
    // decode steps at two contexts: ctx_lo (a request's first decode step) and ctx_hi (its last)
    Curve decode_lo, decode_hi;
    double ctx_lo = 0, ctx_hi = 0;
    // prefill-shaped forwards of T tokens: the whole forward and its attention (attn.core and attn.indexer, the
    // records whose work follows a prompt's length, as moe::prefill_step_mixed takes them)
    Curve forward, forward_attn;
    // Attention DP over an MoE model (a prefill worker of lockstep_dp > 1 ranks in lockstep): the part of forward(T)
    // that follows the EP group's tokens (the routed experts with their permutes and finalize: the moe.* records
    // but the router, shared experts and latent projections), T per rank with every rank busy. Empty otherwise.
    Curve forward_moe;
    int lockstep_dp = 1;
    // One prompt's attention (the same records) computed whole at length l, per token: a(l) / l over a geometric
    // grid of lengths up to the longest prompt + output. Stored per token so that a full-attention layer's a(l),
    // quadratic, interpolates exactly (a(l) / l is linear in l); sliding windows, MLA, sparse indexers and the rest
    // keep whatever shape estimate() gives them. Empty: every forward at the mean prompt.
    Curve prompt_attn_per_token;
    // The mean prompt's (the forward curves') attention per computed token: (a(L) - a(cached)) / (L - cached)
    double attn_per_token_mean = 0;
    double decode_ms(double b, double ctx) const;
    double forward_ms(double T) const { return forward.at(T); }
    // one prompt's attention at length l, a(l) (ms), and a chunk of c tokens after a prefix of p: a(p + c) - a(p)
    double prompt_attn_ms(double l) const { return l > 0 ? l * prompt_attn_per_token.at(l) : 0.0; }
    double chunk_attn_ms(double p, double c) const { return prompt_attn_ms(p + c) - prompt_attn_ms(p); }
    // T tokens whose chunks' own attention sums to own_ms: the forward's attention at T tokens of the mean prompt,
    // scaled by own_ms over the mean prompt's attention on T tokens (exactly 1 when the chunks are whole mean
    // prompts, so the forward then costs forward_ms(T))
    double forward_ms(double T, double own_ms) const { return forward.at(T) + forward_attn.at(T) * (attn_scale(T, own_ms) - 1.0); }
    double attn_scale(double T, double own_ms) const;
    // A lockstep forward of `n` ranks holding T[i] tokens whose own attention is own_ms[i] (0 tokens: an idle rank):
    // the slowest rank's part outside the routed experts, plus the routed experts at the ranks' tokens together
    // (forward_moe at their mean: the rank's attention and its dispatch / combine stay at its own tokens;
    // test_serving_sim.cpp holds it to estimate() with 1-4 busy ranks, workload.prefill_busy_ranks). Without forward_moe (ranks that do not step together): the slowest rank's forward.
    double lockstep_ms(const double* T, const double* own_ms, int n) const;
    // b decode tokens and P prefill tokens in one forward (vLLM, TRT-LLM): the decode step plus what the prefill
    // tokens add to its token-proportional work (the non-attention part of a forward of P + b tokens over one of
    // b) plus their own attention (with own_ms >= 0: scaled as in forward_ms(T, own_ms)).
    double mixed_ms(double b, double ctx, double P, double own_ms = -1) const;
};

// Tokens a decode step gives each request: the step model's step over its TPOT (with speculative drafts the verify
// keeps 1 + the accepted ones; 1 without). The simulation's surface and the closed form's steps both take it.
inline double decode_tokens_per_step(const PhaseResult& decode) {
    return decode.tpot_ms > 0 && decode.step_ms > decode.tpot_ms ? decode.step_ms / decode.tpot_ms : 1.0;
}

struct StepSurface {
    bool ok = false;
    Issues errors;
    std::vector<std::string> warnings;
    PoolSurface agg;                 // aggregated: the replica's steps (per attention-DP rank)
    PoolSurface prefill, decode;     // disaggregated: each pool's
    double chunk_tokens = 0;         // aggregated: a forward's token budget per rank (workload.prefill_tokens)
    // Memory: KV token slots one DP rank holds next to the weights (the memory model's max batch at the mean context
    // x that context in whole blocks), and whether the weights fit at all.
    double kv_tokens_per_rank = 0;
    double kv_block_tokens = 1;      // the paged-KV block (runtime.kv_block_tokens, by default the engine's)
    bool weights_fit = false;
    // Output tokens a request gets per decode step: 1, or with MTP 1 + the expected accepted drafts (the step
    // model's decode step over its TPOT).
    double tokens_per_step = 1;
    double kv_bytes_per_token = 0;    // KV bytes one token keeps on one GPU (the memory model's), for the KV tiers
    // disaggregated
    double kv_bytes_per_request = 0;  // the mean request's KV, whole model, in the cache's format
    double kv_link_GBps = 0;          // between a prefill and a decode worker
    double kv_blocks_per_request = 0;  // paged blocks x attention layers x planes one decode rank pulls (mean prompt)
    bool prefill_fits = true;
    double prefill_forward_tokens = 0;  // a prefill worker's forward budget per rank (prefill.batch x isl)
    // the prefix cache of a prefill rank (sessions / trace): KV tokens its HBM holds beyond a forward's, and the KV
    // bytes one token keeps on one of its GPUs
    double prefill_cache_tokens_per_rank = 0, prefill_kv_bytes_per_token = 0;
    int dp = 1, gpus = 1, prefill_dp = 1;
    int prefill_gpus_per_worker = 1, decode_gpus_per_worker = 1;
    int estimates = 0;  // estimate() calls it took
};

// The surface of s (serving.mode aggregated or disaggregated). Errors of the step model come back in errors.
StepSurface step_surface(const Scenario& s, const Tables& t);

}  // namespace moe
