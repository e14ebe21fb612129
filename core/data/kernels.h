// kernels.h — FLOP and byte counts of the kernels we cost, shared by the table loader (to turn a measured
// latency into a fraction of the roofline) and the estimator (to cost the same kernel on another GPU/shape).
// Keeping one formula for both is what makes "measured on this GPU at this shape" reproduce the measurement.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/base/log_choose.h"

namespace moe::kernels {

struct Cost {
    double flops = 0;
    double bytes = 0;
};

// Dense GEMM (M x K) * (K x N), inputs of `in_bytes` per element, bf16 output.
inline Cost gemm(double m, double k, double n, double in_bytes, double weight_bytes) {
    return {2.0 * m * k * n, m * k * in_bytes + k * n * weight_bytes + m * n * 2.0};
}

// Expected number of distinct experts (of `experts`) hit by `tokens` tokens each choosing `top_k` distinct experts
// uniformly: experts * (1 - (1 - k/E)^tokens) (seed 004 / seed 003 lazy expert loading).
inline double expected_active_experts(double experts, double top_k, double tokens) {
    if (experts <= 0 || tokens <= 0) return 0;
    const double p_miss = std::max(0.0, 1.0 - top_k / experts);
    return experts * (1.0 - std::pow(p_miss, tokens));
}

// Expected M tiles of `tile` rows one expert runs, E[ceil(X / tile)], when its rows X are what `tokens` tokens
// give that each pick it with probability `p` independently (uniform top-k routing: X ~ Binomial(tokens, p), the
// law expected_active_experts counts the experts with X >= 1 by). The rounding applies to each expert's whole
// rows, never to an average: one-row tiles cost nothing extra (E[X] exactly), and a mean of 32 rows in 32-row tiles
// is the chance-weighted mix of one, two (and more) tiles. Exact sum over the distribution while its spread is
// small (standard deviation < 16 rows: at most ~400 terms), else a normal law with continuity correction summed
// over the tile boundaries: E[ceil(X/t)] = sum_{j >= 0} P(X > j t).
inline double expected_tiles_random(double tokens, double p, double tile) {
    if (tokens <= 0 || p <= 0) return 0;
    p = std::min(p, 1.0);
    const double mu = tokens * p, var = mu * (1.0 - p);
    if (tile <= 1) return mu;
    if (var <= 0) return std::ceil(mu / tile);
    const double sd = std::sqrt(var);
    if (sd < 16.0) {
        // P(X = x) from the floor of the mean outwards (log space: (1 - p)^tokens may underflow)
        const double x0 = std::min(std::floor(mu), std::floor(tokens));
        const double log_p0 = log_choose(tokens, x0) + x0 * std::log(p) + (tokens - x0) * std::log1p(-p);
        const double odds = p / (1.0 - p), span = 12.0 * sd + 2.0;
        double mass = 0, tiles = 0, pmf = std::exp(log_p0);
        for (double x = x0; x <= tokens && x <= mu + span && pmf > 0; ++x) {  // upwards from x0
            mass += pmf;
            tiles += pmf * std::ceil(x / tile);
            pmf *= (tokens - x) / (x + 1.0) * odds;
        }
        pmf = std::exp(log_p0);
        for (double x = x0 - 1; x >= 0 && x >= mu - span; --x) {  // downwards
            pmf *= (x + 1.0) / ((tokens - x) * odds);
            mass += pmf;
            tiles += pmf * std::ceil(x / tile);
        }
        return mass > 0 ? tiles / mass : std::ceil(mu / tile);
    }
    // Normal law: P(X > j t) = P(X >= j t + 1) ~ Q((j t + 0.5 - mu) / sd); the j = 0 term, P(X >= 1), is exact.
    double tiles = -std::expm1(tokens * std::log1p(-p));
    const double j_lo = std::max(1.0, std::floor((mu - 10.0 * sd) / tile)), j_hi = std::ceil((mu + 10.0 * sd) / tile);
    tiles += j_lo - 1.0;  // boundaries ten deviations below the mean: passed for sure
    for (double j = j_lo; j <= j_hi; ++j) tiles += 0.5 * std::erfc((j * tile + 0.5 - mu) / (sd * std::sqrt(2.0)));
    return tiles;
}

// The same when each expert receives the mean `rows` split as evenly as whole rows allow (some floor(rows), the
// rest one more, averaging `rows`): seed 004's worked examples give such per-expert counts ("E0 has 17, E1 has 17").
inline double expected_tiles_even(double rows, double tile) {
    if (rows <= 0) return 0;
    if (tile <= 1) return rows;
    const double lo = std::floor(rows), f = rows - lo;
    return (1.0 - f) * std::ceil(lo / tile) + f * std::ceil((lo + 1.0) / tile);
}

// Expected distinct units (nodes or GPUs, `units` of them holding the experts in order) a token reaches when it
// picks `selected` of `groups` expert groups (node-limited routing, DeepSeek's n_group/topk_group) and then `k`
// experts spread over the selected groups, each selected group receiving at least one.
inline double distinct_units(double units, double groups, double selected, double k) {
    if (units <= 1) return 1.0;
    if (groups <= 1 || selected >= groups) return units * (1.0 - std::pow(1.0 - 1.0 / units, k));
    if (units <= groups) {
        // each unit holds groups/units groups: P(unit holds none of the selected) = C(G - G/U, g) / C(G, g)
        const double per = groups / units;
        double p_none = 1.0;
        for (int j = 0; j < int(selected); ++j) p_none *= std::max(0.0, (groups - per - j)) / (groups - j);
        return units * (1.0 - p_none);
    }
    // each group spans units/groups units: the k experts land among selected * units/groups candidates
    const double m = selected * units / groups;
    return m * (1.0 - std::pow(1.0 - 1.0 / m, k));
}

// Routed experts on one GPU: `pairs` token-expert pairs over `active_local` loaded experts, SwiGLU (gate+up, down),
// each expert's intermediate `inter` (already divided by moe_tp). Weight bytes include scale overheads.
inline Cost grouped_experts(double pairs, double active_local, double hidden, double inter, double weight_bytes_per_param,
                            double act_bytes) {
    const double flops = 6.0 * pairs * hidden * inter;
    const double weights = active_local * 3.0 * hidden * inter * weight_bytes_per_param;
    const double acts = pairs * (hidden * act_bytes + 2.0 * inter * 2.0 + inter * act_bytes + hidden * 2.0);
    return {flops, weights + acts};
}

// DeepGEMM (dense: one group; masked grouped: one persistent kernel over every group) runs every (group, m-block,
// n-block) tile. A group with m rows has ceil(m / BM) m-blocks, and the kernel runs ceil(tiles / SMs) waves. The
// block sizes are chosen once, for the caller's *expected* m per group. This follows the README-era heuristic (DeepGEMM jit_kernels/gemm.py,
// get_best_configs): BM = 64 if m <= 64 else 128, and BN from 16..128 in steps of 8. The pick is the fewest waves,
// then the fullest last wave, then the smaller BN.
struct DeepGemmTiles {
    double bm = 128, bn = 128;
};
// Waves of `m_blocks` m-blocks (summed over the groups) times ceil(n / bn) n-blocks on `sms` SMs.
inline double masked_waves(double m_blocks, double n, double bn, double sms) {
    if (!(m_blocks > 0) || !(n > 0) || !(bn > 0) || !(sms > 0)) return 0;
    return std::ceil(m_blocks * std::ceil(n / bn) / sms);
}
inline DeepGemmTiles deepgemm_tiles(double m, double n, double groups, double sms) {
    DeepGemmTiles best;
    best.bm = m <= 64 ? 64 : 128;
    const double mb = std::ceil(std::max(m, 0.0) / best.bm) * std::max(groups, 0.0);
    double best_w = -1, best_last = 0;
    // Whole block and SM counts (every real query) take the remainder without fmod: tiles and sms are whole numbers
    // below 2^53 (tiles <= 1e9 x 62500), so tiles / sms rounds to a double on the same side of every integer as the
    // exact quotient, its floor is the exact integer quotient and tiles - floor * sms the exact remainder: the same
    // value as fmod (or an integer %, which was a 64-bit division per candidate, 15 per lookup).
    const bool whole = sms >= 1 && sms <= 1e6 && sms == std::floor(sms) && mb >= 0 && mb <= 1e9 && mb == std::floor(mb) &&
                       std::max(n, 0.0) <= 1e6;
    for (int bn = 16; bn <= 128; bn += 8) {
        const double tiles = mb * std::ceil(std::max(n, 0.0) / bn);
        const double w = sms > 0 ? std::ceil(tiles / sms) : 0;
        double last = whole ? tiles - std::floor(tiles / sms) * sms : sms > 0 ? std::fmod(tiles, sms) : 0;
        if (last == 0) last = sms;  // a full last wave
        if (best_w < 0 || w < best_w || (w == best_w && last > best_last)) {
            best_w = w;
            best_last = last;
            best.bn = bn;
        }
    }
    return best;
}
// Waves when every one of `groups` groups holds m rows (a dense GEMM; DeepGEMM README's masked runs; a balanced
// serving step).
inline double deepgemm_waves(double m, double n, double groups, const DeepGemmTiles& t, double sms) {
    return masked_waves(std::ceil(std::max(m, 0.0) / t.bm) * std::max(groups, 0.0), n, t.bn, sms);
}

// Expected waves when group g holds m_g = int(e * U(0.7, 1.3)) rows, as InferSim's masked benchmark draws them
// (alibaba/InferSim kernel_benchmark/deepgemm_grouped_gemm_masked.py, generate_m_grouped_masked: masked_m[j] =
// int(expected_m_per_group * random.uniform(0.7, 1.3)); it times one such draw). The result is exact and uses no
// random numbers. A group's block count ceil(m_g / BM) takes only a few values, so a dynamic program over the groups
// gives the distribution of the total m-blocks. If lo <= hi, the draw is conditioned on its total rows sum(m_g)
// lying in [lo, hi] (the benchmark's reported TFLOPS give that total). The program then also tracks the row sum. It
// uses prefix sums, because a group's rows are uniform over a range, apart from the two end values. The function
// returns -1 when the window has (almost) no probability, or when the conditioned program would take more than
// `budget` cell updates or hold over 1e6 cells. The caller then falls back to the unconditional expectation
// (lo > hi). If even that cheaper program is too big, the function returns the waves of the expected block count.
inline double masked_waves_expected(double e, double groups, double n, const DeepGemmTiles& t, double sms, double lo = 1,
                                    double hi = 0, double budget = 2e5) {
    e = std::floor(e);
    groups = std::floor(groups);
    const double nb = t.bn > 0 ? std::ceil(n / t.bn) : 0;
    if (!(e >= 1) || !(groups >= 1) || !(nb >= 1) || !(sms >= 1) || !(t.bm >= 1) || e > 1e7 || groups > 1e7) return 0;
    const long bm = long(t.bm);
    const double a = 0.7 * e, b = 1.3 * e, w = b - a;
    const long mlo = long(std::floor(a)), mhi = std::max(mlo, long(std::ceil(b)) - 1);
    const long km = mhi - mlo + 1;
    auto p_of = [&](long j) { return std::max(0.0, (std::min(double(j + 1), b) - std::max(double(j), a)) / w); };
    auto cls = [&](long j) { return (j + bm - 1) / bm; };  // m-blocks of a group with j rows (0 rows: none)
    const long cmin = cls(mlo), cmax = cls(mhi), nc = cmax - cmin + 1;
    const long L = long(groups);
    auto waves = [&](double blocks) { return std::ceil(blocks * nb / sms); };

    const bool conditioned = lo <= hi;
    if (conditioned) {
        const double slo = std::max(std::ceil(lo - 1e-9), double(L) * double(mlo));
        const double shi = std::min(std::floor(hi + 1e-9), double(L) * double(mhi));
        if (slo > shi) return -1;
        const double S = double(L) * double(km - 1) + 1, Bd = double(L) * double(nc - 1) + 1;
        if (double(L) * S * Bd * double(nc + 2) > budget || S * Bd > 1e6) return -1;  // time, memory (8 MB a table)
        const size_t ns = size_t(S), nbk = size_t(Bd);
        const double base = 1.0 / w;  // probability of an interior row count
        // f[s * nbk + bb]: probability that the groups so far hold s + g*mlo rows and bb + g*cmin m-blocks.
        std::vector<double> f(ns * nbk, 0.0), g(ns * nbk, 0.0), pre(ns + 1, 0.0);
        f[0] = 1.0;
        size_t used = 1;  // row offsets reachable so far
        for (long grp = 0; grp < L; ++grp) {
            std::fill(g.begin(), g.end(), 0.0);
            const size_t next_used = used + size_t(km - 1);
            for (size_t bb = 0; bb < nbk; ++bb) {
                pre[0] = 0;
                double any = 0;
                for (size_t s = 0; s < used; ++s) {
                    pre[s + 1] = pre[s] + f[s * nbk + bb];
                    any += f[s * nbk + bb];
                }
                if (any <= 0) continue;
                for (long c = cmin; c <= cmax; ++c) {
                    const long jl = std::max(mlo, c == 0 ? 0L : (c - 1) * bm + 1), jh = std::min(mhi, c * bm);
                    if (jl > jh) continue;
                    const long ol = jl - mlo, oh = jh - mlo;
                    const size_t to = bb + size_t(c - cmin);
                    if (to >= nbk) continue;
                    for (size_t s2 = size_t(ol); s2 < next_used && s2 < ns; ++s2) {
                        // sum of f[x] for x in [s2 - oh, s2 - ol], clipped to [0, used)
                        const long xl = std::max(0L, long(s2) - oh), xh = std::min(long(used) - 1, long(s2) - ol);
                        if (xl > xh) continue;
                        g[s2 * nbk + to] += base * (pre[size_t(xh + 1)] - pre[size_t(xl)]);
                    }
                }
                // the two end row counts carry only part of an integer step of U
                const long ends[2] = {mlo, mhi};
                for (int q = 0; q < (mlo == mhi ? 1 : 2); ++q) {
                    const long j = ends[q];
                    const double d = p_of(j) - base;
                    const size_t off = size_t(j - mlo), to = bb + size_t(cls(j) - cmin);
                    if (d == 0 || to >= nbk) continue;
                    for (size_t s = 0; s < used && s + off < ns; ++s) g[(s + off) * nbk + to] += d * f[s * nbk + bb];
                }
            }
            f.swap(g);
            used = std::min(ns, next_used);
        }
        double num = 0, den = 0;
        const size_t s0 = size_t(slo - double(L) * double(mlo)), s1 = size_t(shi - double(L) * double(mlo));
        for (size_t s = s0; s <= s1 && s < ns; ++s)
            for (size_t bb = 0; bb < nbk; ++bb) {
                const double p = std::max(0.0, f[s * nbk + bb]);
                num += p * waves(double(bb) + double(L) * double(cmin));
                den += p;
            }
        if (!(den > 1e-9)) return -1;
        return num / den;
    }

    // Unconditional: the total m-blocks alone. A block class c holds the row counts [(c-1)*BM + 1, c*BM]; the
    // probabilities of consecutive row counts add up to the overlap of their unit intervals with [a, b).
    std::vector<double> q(size_t(nc), 0.0);
    double mean = 0;
    for (long c = cmin; c <= cmax; ++c) {
        const long jl = std::max(mlo, c == 0 ? 0L : (c - 1) * bm + 1), jh = std::min(mhi, c * bm);
        if (jl > jh) continue;
        const double p = std::max(0.0, std::min(double(jh + 1), b) - std::max(double(jl), a)) / w;
        q[size_t(c - cmin)] = p;
        mean += p * double(c);
    }
    const double Bd = double(L) * double(nc - 1) + 1;
    if (double(L) * Bd * double(nc) > budget) return waves(mean * double(L));
    std::vector<double> f(size_t(Bd), 0.0), g(size_t(Bd), 0.0);
    f[0] = 1.0;
    for (long grp = 0; grp < L; ++grp) {
        std::fill(g.begin(), g.end(), 0.0);
        const size_t reach = size_t(grp) * size_t(nc - 1) + 1;
        for (size_t bb = 0; bb < reach; ++bb)
            if (f[bb] > 0)
                for (size_t c = 0; c < size_t(nc); ++c) g[bb + c] += f[bb] * q[c];
        f.swap(g);
    }
    double num = 0, den = 0;
    for (size_t bb = 0; bb < f.size(); ++bb) {
        num += f[bb] * waves(double(bb) + double(L) * double(cmin));
        den += f[bb];
    }
    return den > 0 ? num / den : waves(mean * double(L));
}

// Decode attention over a KV cache: batch b, kv length L, heads h, kv heads hk, head dim d.
inline Cost mha_decode(double b, double L, double h, double hk, double d, double kv_bytes) {
    return {4.0 * b * h * d * L, b * L * 2.0 * hk * d * kv_bytes + b * h * d * 4.0};
}
// Causal prefill attention: `seqs` sequences, `q` new tokens each, attending on average to `attended` keys.
inline Cost mha_prefill(double tokens, double attended, double h, double hk, double d, double kv_bytes) {
    return {4.0 * tokens * h * d * attended, tokens * (h + 2.0 * hk) * d * 2.0 + tokens * h * d * 2.0 + 0.0 * kv_bytes};
}
// Absorbed MLA decode: per token 2*H*L*(kv_lora + rope) for QK and 2*H*L*kv_lora for PV; reads the latent cache.
inline Cost mla_decode(double b, double L, double h, double kv_lora, double rope, double kv_bytes) {
    return {b * (2.0 * h * (kv_lora + rope) * L + 2.0 * h * kv_lora * L), b * L * (kv_lora + rope) * kv_bytes};
}
// Non-absorbed MLA prefill (FlashAttention with qk = nope+rope, v = v_dim), `attended` keys per query on average.
inline Cost mla_prefill(double tokens, double attended, double h, double qk, double v) {
    return {tokens * attended * (2.0 * h * qk + 2.0 * h * v), tokens * h * (2.0 * qk + 2.0 * v) * 2.0};
}

// Average keys attended per query over a causal prompt of length p with window w (0 = full):
// (1/p) * sum_{x<p} min(x, w)  =  p/2 without a window, w - w^2/(2p) when p > w.
inline double causal_attended(double p, double w) {
    if (w <= 0 || p <= w) return p / 2.0;
    return w - w * w / (2.0 * p);
}

// Integral over t in [0, x] of min(t / r, cap) (cap 0 = none): the keys a query at position t sees when it attends to
// one entry per r tokens (r = 1: tokens; DeepSeek-V4: compressed entries), at most `cap` of them (a window, or the
// top-k of a sparse attention). x^2 / (2r) until t / r reaches the cap, then linear.
inline double capped_key_integral(double x, double r, double cap) {
    if (x <= 0 || r <= 0) return 0;
    if (cap <= 0 || x <= r * cap) return x * x / (2.0 * r);
    return cap * x - r * cap * cap / 2.0;
}
// Average of min(t / r, cap) over the query positions [lo, hi): what one of the prompt's computed tokens attends to
// when the first `lo` tokens come from a prefix cache (lo = 0, r = 1: causal_attended(hi, cap)).
inline double mean_keys(double lo, double hi, double r, double cap) {
    if (!(hi > lo)) return 0;
    return (capped_key_integral(hi, r, cap) - capped_key_integral(lo, r, cap)) / (hi - lo);
}

// FlashAttention's causal forward as tiles (FA2/FA3 schedule): each CTA owns a kTile-row query block of one head of
// one sequence and walks the kTile-wide KV blocks it attends to (the diagonal block half masked). Each CTA also pays
// a fixed cost of `fixed_iters` KV-block iterations (load Q, write O, pipeline fill and drain). CTAs spread over `sms`
// SMs; the kernel lasts at least its longest CTA. Returns the useful share of the SM time spent: 1 for long prompts,
// far less for short ones (the diagonal and the fixed cost dominate) and for few heads x sequences (idle SMs).
// `window` > 0 limits every query to the last `window` keys (sliding-window layers).
inline double flash_tile_efficiency(double seqs, double heads, double s, double window, double fixed_iters, double sms) {
    constexpr double kTile = 128;
    if (seqs <= 0 || heads <= 0 || s <= 0 || sms <= 0) return 1.0;
    const double nq = std::ceil(s / kTile);
    double visits, longest;  // KV blocks visited by the query blocks of one head of one sequence; by the last one
    if (window > 0 && window < s) {
        const double nw = 1 + std::ceil(std::max(window - 1, 0.0) / kTile);  // own block + those the window reaches
        visits = nq <= nw ? nq * (nq + 1) / 2 : nw * (nw + 1) / 2 + (nq - nw) * nw;
        longest = std::min(nq, nw);
    } else {
        visits = nq * (nq + 1) / 2;
        longest = nq;
    }
    const double slots = seqs * heads * (nq * fixed_iters + visits);           // block-iterations of SM time
    const double span = std::max(slots / sms, longest + fixed_iters);          // per SM, in the same units
    const double useful = seqs * heads * s * causal_attended(s, window) / (kTile * kTile);
    return std::clamp(useful / (span * sms), 1e-6, 1.0);
}

// Head-dim effect on an attention kernel's efficiency: per attention score the tensor cores do 4*d FLOPs while the
// softmax costs a fixed `softmax_exp` exponentials' worth of special-function time not hidden under the matmuls
// (FA3: H100 has 989 TFLOPS of matmul but 3.9 TFLOPS of exp). Moving a table measured at head dim d_table to a
// smaller d scales its efficiency by (1 + r(d_table)) / (1 + r(d)), r(d) = softmax_exp * (mma / sfu) / (4 d).
// Larger head dims are not credited with a gain: their kernels use smaller KV tiles (register pressure), which no
// public table quantifies.
inline double head_dim_factor(double d, double d_table, double mma_tflops, double sfu_tflops, double softmax_exp) {
    if (d <= 0 || d_table <= 0 || d >= d_table || sfu_tflops <= 0 || softmax_exp <= 0) return 1.0;
    const double ratio = softmax_exp * mma_tflops / sfu_tflops / 4.0;
    return (1.0 + ratio / d_table) / (1.0 + ratio / d);
}

// A dense GEMM as DeepGEMM tiles it (deepgemm_tiles; BLOCK_K 128). Each output tile walks ceil(k/128)
// k-iterations plus a fixed cost of `fixed_iters` iterations (TMA pipeline fill and drain, scale loads, the BF16
// output epilogue). Compute-bound, the kernel also loses its last partial wave; memory-bound, only the fill
// fraction matters (few CTAs are still streaming by the last wave). Returns the useful share: used to move a
// measured shape's efficiency to a shape the tables lack (K = 512 has 4 k-iterations per tile, K = 1536 twelve).
// `tiles(m, n, sms)` returns deepgemm_tiles(m, n, 1, sms) (the tables keep it per thread: gemm_tile_efficiency_by).
template <class Tiles>
inline double gemm_tile_efficiency_by(double m, double n, double k, double fixed_iters, double sms, bool compute_bound,
                                      Tiles&& tiles) {
    if (m <= 0 || n <= 0 || k <= 0 || sms <= 0) return 1.0;
    const double kit = std::ceil(k / 128.0);
    if (!compute_bound) return kit / (kit + fixed_iters);
    const DeepGemmTiles t = tiles(m, n, sms);
    const double useful = m * n * k / (t.bm * t.bn * 128.0);  // tile-iterations of useful work
    return std::clamp(useful / (sms * deepgemm_waves(m, n, 1, t, sms) * (kit + fixed_iters)), 1e-6, 1.0);
}
inline double gemm_tile_efficiency(double m, double n, double k, double fixed_iters, double sms, bool compute_bound) {
    return gemm_tile_efficiency_by(m, n, k, fixed_iters, sms, compute_bound,
                                   [](double m_, double n_, double sms_) { return deepgemm_tiles(m_, n_, 1, sms_); });
}

}  // namespace moe::kernels
