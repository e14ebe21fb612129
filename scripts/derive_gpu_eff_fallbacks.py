#!/usr/bin/python3
"""derive_gpu_eff_fallbacks.py — each GPU's own grouped-GEMM and attention fallback compute fractions, from its tables.

scripts/derive_gpu_eff.py does the dense GEMM fallback; this does the two other fallbacks with one calibration value
for every GPU (presets/calibration.json), for the GPUs with a measured table of their own:

  grouped_gemm_efficiency  (in place of grouped_compute_eff) the routed experts off the tables (core/step/ops_ffn.cpp):
                           max(6 pairs h i / (FP8 peak x eff x fill), bytes / (HBM x hbm_bw_eff)), fill = the pairs
                           over the M tiles the experts' rows take (128-row tiles, contiguous; each expert's rows
                           binomial, routing.expert_rows random). Derived from InferSim's contiguous grouped-GEMM tables
                           (bench_data/grouped_gemm/prefill/{h800,h20}: DeepGEMM m_grouped_fp8_gemm_nt_contiguous, the
                           two GEMM kernels only, profiler-timed): per series (experts, top-k, hidden, inter, EP), the
                           best FLOP/s / fill over the points with >= 4096 tokens per GPU whose fallback is compute-bound,
                           over the FP8 peak; the median over series.
  attn_efficiency          (in place of attn_prefill_compute_eff) a softmax-attention core off the tables
                           (core/step/ops_attention.cpp): max(FLOPs / (BF16 peak x eff), bytes / ...); prefill is
                           compute-bound. Derived from the GPU's prefill attention tables (bench_data/mha/prefill/<gpu>,
                           bench_data/mla/prefill/<gpu>: one causal sequence per call): per shape (file), the best
                           FLOP/s over seq_len >= 4096, over the BF16 peak; the median over shapes.

Held out: the series (grouped) or shapes (attention) sorted and split alternately into halves A and B; the value is
derived on one half and the fallback tested on every point of the other, each half in turn, against the calibration's
value. A GPU's preset carries its value only where it beats the calibration's both ways (tests/unit/
test_gpu_eff_fallbacks.cpp checks the same numbers through the model's own table reading, and the grouped value
also on the masked (decode) tables, never derived on). Measured time: the table's latency, never below the roofline
(the loaders' util <= 1). The AIConfigurator MoE tables (bench_data/moe) time whole layers (top-k, permutation,
activation, combine; Triton's or TensorRT-LLM's fused kernels, or DeepEP's DeepGEMM run eager with its host launch)
and give no grouped-GEMM fraction: printed as a lower bound only.

    /usr/bin/python3 scripts/derive_gpu_eff_fallbacks.py [--json]      (pandas; a few seconds)
"""
import argparse
import glob
import json
import math
import os

import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAL = json.load(open(os.path.join(ROOT, "presets/calibration.json")))
FLOOR_S = CAL["kernel_floor_us"]["value"] * 1e-6
GROUPED_GLOBAL = CAL["grouped_compute_eff"]["value"]
ATTN_GLOBAL = CAL["attn_prefill_compute_eff"]["value"]
HBM_EFF = CAL["hbm_bw_eff"]["value"]
LARGE_TOKENS = 4096      # tokens per GPU (grouped) / sequence length (attention) of the plateau
CONTIGUOUS_TILE = 128    # DeepGEMM's contiguous M tile (core/step/ops_ffn.cpp)
FP8_BLOCK_WEIGHT_B = 1 + 4 / 128**2  # FP8 weights with one fp32 scale per 128 x 128 block (core/base/types.h)

# preset id -> its family in bench_data
GROUPED_GPUS = {"h800": "h800", "h20": "h20"}
ATTN_GPUS = {"h20": "h20", "h100-sxm": "h100", "h200": "h200", "b200": "b200", "h800": "h800"}


def preset(gpu):
    return json.load(open(os.path.join(ROOT, "presets/hardware", gpu + ".json")))


def log_choose(n, k):
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def expected_tiles_random(tokens, p, tile):
    """E[ceil(X / tile)], X ~ Binomial(tokens, p): the M tiles one expert runs (core/data/kernels.h, same method)."""
    p = min(p, 1.0)
    mu = tokens * p
    sd = math.sqrt(mu * (1 - p))
    if sd < 16:  # exact sum from the floor of the mean outwards
        x0 = min(math.floor(mu), math.floor(tokens))
        lp0 = log_choose(tokens, x0) + x0 * math.log(p) + (tokens - x0) * math.log1p(-p)
        odds, span = p / (1 - p), 12 * sd + 2
        mass = tiles = 0.0
        pmf, x = math.exp(lp0), x0
        while x <= tokens and x <= mu + span and pmf > 0:
            mass, tiles = mass + pmf, tiles + pmf * math.ceil(x / tile)
            pmf *= (tokens - x) / (x + 1) * odds
            x += 1
        pmf, x = math.exp(lp0), x0 - 1
        while x >= 0 and x >= mu - span:
            pmf *= (x + 1) / ((tokens - x) * odds)
            mass, tiles = mass + pmf, tiles + pmf * math.ceil(x / tile)
            x -= 1
        return tiles / mass
    # normal law with continuity correction over the tile boundaries
    tiles = -math.expm1(tokens * math.log1p(-p))
    j_lo, j_hi = max(1.0, math.floor((mu - 10 * sd) / tile)), math.ceil((mu + 10 * sd) / tile)
    tiles += j_lo - 1
    j = j_lo
    while j <= j_hi:
        tiles += 0.5 * math.erfc((j * tile + 0.5 - mu) / (sd * math.sqrt(2)))
        j += 1
    return tiles


def grouped_table(gpu):
    """The contiguous grouped-GEMM table of `gpu`, one row per point: measured time, the fallback's FLOPs, bytes, fill."""
    hw = preset(gpu)
    peak, bw = hw["dense_tflops_fp8"] * 1e12, hw["hbm_bandwidth_GBps"] * 1e9
    df = pd.read_csv(os.path.join(ROOT, "bench_data/grouped_gemm/prefill", GROUPED_GPUS[gpu], "data.csv"))
    rows = []
    for r in df.itertuples():
        E, ep, local, k, h, i = r.num_experts, r.num_gpus, r.num_local_experts, r.topk, r.hidden_size, r.intermediate_size
        t = r.seq_len_per_gpu
        group_tokens, pairs = t * ep, t * k
        active = local * (1 - (1 - k / E) ** group_tokens)  # experts that receive a token (the loader's count too)
        flops = 6.0 * pairs * h * i
        acts = pairs * (3.0 * h + 5.0 * i)  # FP8 in, BF16 gate/up out, FP8 activation in, BF16 out (kernels.h)
        table_bytes = active * 3.0 * h * i + acts  # the loader's roofline: weights without their scales
        fill = min(1.0, pairs / (local * expected_tiles_random(group_tokens, k / E, CONTIGUOUS_TILE) * CONTIGUOUS_TILE))
        meas = max((r.up_proj_us + r.down_proj_us) * 1e-6, flops / peak, table_bytes / bw)
        rows.append({"series": (E, k, h, i, ep), "tokens": t, "meas_s": meas, "flops": flops, "fill": fill,
                     "bytes": max(1.0, active) * 3.0 * h * i * FP8_BLOCK_WEIGHT_B + acts})
    d = pd.DataFrame(rows)
    d["compute_bound"] = d.flops / (peak * d.fill) >= d.bytes / bw
    return d, peak, bw


def grouped_derive(d, peak):
    big = d[(d.tokens >= LARGE_TOKENS) & d.compute_bound]
    plateau = (big.flops / (big.meas_s * peak * big.fill)).groupby(big.series).max()
    return round(plateau.median(), 3), len(plateau)


def grouped_error(d, peak, bw, eff):
    pred = pd.concat([d.flops / (peak * eff * d.fill), d.bytes / (bw * HBM_EFF)], axis=1).max(axis=1).clip(lower=FLOOR_S)
    return (pred / d.meas_s - 1.0).abs()


def attn_table(gpu):
    """The prefill attention tables of `gpu` (every shape file), one row per point: measured time and FLOPs."""
    hw = preset(gpu)
    peak, bw = hw["dense_tflops_bf16"] * 1e12, hw["hbm_bandwidth_GBps"] * 1e9
    fam = ATTN_GPUS[gpu]
    rows = []
    for kind in ("mha", "mla"):
        for path in sorted(glob.glob(os.path.join(ROOT, "bench_data", kind, "prefill", fam, "*.csv"))):
            a, b, c = (int(x) for x in os.path.basename(path)[:-4].split("-")[:3])
            for r in pd.read_csv(path).itertuples():
                L = r.seq_len
                if kind == "mha":  # heads a, KV heads b, head dim c: kernels::mha_prefill(L, L / 2, ...)
                    flops, nbytes = 4.0 * L * a * c * L / 2, L * (a + 2 * b) * c * 2 + L * a * c * 2
                else:  # heads a, nope b, rope c (v = nope): kernels::mla_prefill(L, L / 2, a, b + c, b)
                    flops, nbytes = L * L / 2 * (2 * a * (b + c) + 2 * a * b), L * a * (2 * (b + c) + 2 * b) * 2
                meas = max(r.latency_us * 1e-6, flops / peak, nbytes / bw)
                rows.append({"shape": kind + "/" + os.path.basename(path), "seq_len": L, "meas_s": meas, "flops": flops})
    return pd.DataFrame(rows), peak


def attn_derive(d, peak):
    big = d[d.seq_len >= LARGE_TOKENS]
    plateau = (big.flops / (big.meas_s * peak)).groupby(big["shape"]).max()
    return round(plateau.median(), 3), len(plateau)


def attn_error(d, peak, eff):
    return ((d.flops / (peak * eff)).clip(lower=FLOOR_S) / d.meas_s - 1.0).abs()


def halves(d, key):
    keys = sorted(set(d[key]))
    a = set(keys[0::2])
    mask = d[key].isin(a) if key != "series" else d[key].map(lambda s: s in a)
    return d[mask], d[~mask]


def held_out(d, key, derive, error):
    """[(value derived on A, own error on B, global error on B, points of B), then the same B -> A]; None if one unit."""
    a, b = halves(d, key)
    if a.empty or b.empty:
        return None
    out = []
    for fit, test in ((a, b), (b, a)):
        v, _ = derive(fit)
        out.append((v, error(test, v).median(), error(test, None).median(), len(test)))
    return out


def report(name, gpu, value, n_units, unit, held, glob_value):
    print(f"{gpu:9s} {name} {value} (median of {n_units} {unit}' plateaus; calibration's {glob_value})")
    if held is None:
        print("    no held-out split (one shape): not set")
        return False
    for i, (v, own, glob_err, n) in enumerate(held):
        print(f"    derived on half {'AB'[i]} ({v}), tested on half {'BA'[i]} ({n} points): median |error| "
              f"{100 * own:.1f}% own, {100 * glob_err:.1f}% calibration's")
    better = all(own < glob_err for _, own, glob_err, _ in held)
    typical = 0.5 <= value <= 0.85
    print(f"    {'beats' if better else 'does not beat'} the calibration's both ways"
          f"{'' if typical else '; outside the typical 0.5-0.85'}")
    return better


def aic_moe_bounds():
    """The best whole-layer FLOP fraction of AIC's DeepEP MoE tables (DeepGEMM inside): a lower bound only."""
    for fam, gpu in (("h100", "h100-sxm"), ("h200", "h200"), ("b200", "b200")):
        peak = preset(gpu)["dense_tflops_fp8"] * 1e12
        for kind in ("prefill", "decode"):
            df = pd.read_csv(os.path.join(ROOT, "bench_data/moe", fam, f"sglang_deepep_{kind}.csv"))
            best = 0.0
            for r in df.to_dict("records"):
                for col, v in r.items():
                    if col.startswith("us_at_") and not pd.isna(v):  # group tokens -> pairs on the timed GPU
                        flops = 6.0 * int(col[6:]) * r["topk"] / r["ep"] * r["hidden"] * r["inter"] / r["tp"]
                        best = max(best, flops / (v * 1e-6) / peak)
            print(f"    {gpu:9s} sglang_deepep_{kind}: best whole-layer FLOP fraction {best:.3f} of the FP8 peak")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print the values as JSON")
    args = ap.parse_args()
    out = {}
    print(f"grouped GEMM fallback (calibration grouped_compute_eff {GROUPED_GLOBAL}, hbm_bw_eff {HBM_EFF}):")
    for gpu in GROUPED_GPUS:
        d, peak, bw = grouped_table(gpu)
        value, n = grouped_derive(d, peak)
        held = held_out(d, "series", lambda x: grouped_derive(x, peak),
                        lambda x, v: grouped_error(x, peak, bw, GROUPED_GLOBAL if v is None else v))
        better = report("grouped_gemm_efficiency", gpu, value, n, "series", held, GROUPED_GLOBAL)
        print(f"    whole table ({len(d)} points): {100 * grouped_error(d, peak, bw, value).median():.1f}% own, "
              f"{100 * grouped_error(d, peak, bw, GROUPED_GLOBAL).median():.1f}% calibration's")
        out.setdefault(gpu, {})["grouped_gemm_efficiency"] = {"value": value, "beats_calibration": better, "held_out": held}
    print("  AIC MoE tables (whole layers, not the grouped GEMMs alone; not used):")
    aic_moe_bounds()
    print(f"attention fallback (calibration attn_prefill_compute_eff {ATTN_GLOBAL}):")
    for gpu in ATTN_GPUS:
        d, peak = attn_table(gpu)
        value, n = attn_derive(d, peak)
        held = held_out(d, "shape", lambda x: attn_derive(x, peak),
                        lambda x, v: attn_error(x, peak, ATTN_GLOBAL if v is None else v))
        better = report("attn_efficiency", gpu, value, n, "shapes", held, ATTN_GLOBAL)
        out.setdefault(gpu, {})["attn_efficiency"] = {"value": value, "beats_calibration": better, "held_out": held}
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
