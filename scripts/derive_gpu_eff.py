#!/usr/bin/python3
"""derive_gpu_eff.py — each GPU's own GEMM fallback efficiencies, from its own measured dense-GEMM table.

The analytical GEMM fallback (core/step/op_time.cpp, used where no table covers a GEMM) times a GEMM as
max(kernel_floor_us, FLOPs / (peak x compute_eff), bytes / (HBM x hbm_eff)). presets/calibration.json gives one
compute_eff (gemm_compute_eff) and one hbm_eff (hbm_bw_eff) to every GPU; a GPU preset may carry its own
(`gemm_efficiency`, `gemm_hbm_efficiency`). This script derives them from the GPU's own table in bench_data/gemm:

  gemm_efficiency      the plateau: per (k, n) shape whose roofline is compute-bound at its largest m >= 4096, the
                       best FLOP/s over m >= 4096, over the preset's dense peak of the format; the median over shapes
  gemm_hbm_efficiency  weight streaming: per (k, n) shape with >= 16 MiB of weights, memory-bound in the roofline at
                       m <= 64, the best bytes / time over m <= 64, over the preset's HBM bandwidth; median over shapes

Held out: the (k, n) shapes sorted and split alternately into two halves; the values are derived on one half and the
fallback is tested on every row of the other half (each half in turn), against the calibration's global values.

Measured time: a table's latency as the model reads it (bench_data/README.md, "gemm"): InferSim's (h800, h20) less
calibration.gemm_table_overhead_us (never below the roofline), AIC's CUDA-graph rows as they are. Bytes: FP8 inputs and weights, BF16 output
(core/data/kernels.h kernels::gemm). GPUs, tables and kernels:
  h800      bench_data/gemm/h800/data.csv (InferSim, DeepGEMM fp8_gemm_nt, H800 SXM)
  h20       bench_data/gemm/h20/data.csv (InferSim, DeepGEMM fp8_gemm_nt, H20 96 GB)
  h100-sxm  bench_data/gemm/h100/sglang_cuda_graph.csv fp8_block (AIC sglang-0.5.14 h100_sxm, DeepGEMM)
  h200      bench_data/gemm/h200/sglang_cuda_graph.csv fp8_block (AIC sglang-0.5.14 h200_sxm, DeepGEMM)
  b200      bench_data/gemm/b200/sglang_cuda_graph.csv fp8_block (AIC sglang-0.5.14 b200_sxm, DeepGEMM)

    /usr/bin/python3 scripts/derive_gpu_eff.py [--json]      (pandas; a second)
"""
import argparse
import json
import os

import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAL = json.load(open(os.path.join(ROOT, "presets/calibration.json")))
OVERHEAD_US = CAL["gemm_table_overhead_us"]["value"]
FLOOR_US = CAL["kernel_floor_us"]["value"]
GLOBAL = (CAL["gemm_compute_eff"]["value"], CAL["hbm_bw_eff"]["value"])
LARGE_M, SMALL_M, MIN_WEIGHT_BYTES = 4096, 64, 16 * 2**20

# preset id -> (table file, dtype filter or None, latency includes InferSim's per-call overhead)
GPUS = {
    "h800": ("bench_data/gemm/h800/data.csv", None, True),
    "h20": ("bench_data/gemm/h20/data.csv", None, True),
    "h100-sxm": ("bench_data/gemm/h100/sglang_cuda_graph.csv", "fp8_block", False),
    "h200": ("bench_data/gemm/h200/sglang_cuda_graph.csv", "fp8_block", False),
    "b200": ("bench_data/gemm/b200/sglang_cuda_graph.csv", "fp8_block", False),
}


def load(gpu):
    path, dtype, overhead = GPUS[gpu]
    hw = json.load(open(os.path.join(ROOT, "presets/hardware", gpu + ".json")))
    df = pd.read_csv(os.path.join(ROOT, path))
    wide = [c for c in df.columns if c.startswith("us_at_")]
    if wide:  # AIC's grids: one row per (dtype, k, n), a us_at_<m> column per m (bench_data/README.md, "gemm")
        df = df.melt(id_vars=[c for c in df.columns if c not in wide], value_vars=wide, var_name="m", value_name="latency_us")
        df = df.dropna(subset=["latency_us"])
        df["m"] = df["m"].str[len("us_at_"):].astype(int)
    if dtype:
        df = df[df["dtype"] == dtype]
    # a row repeated in the file (h20: 2 shapes listed twice, same latencies) counts once, as the loader keeps it
    df = df[["m", "k", "n", "latency_us"]].drop_duplicates(["m", "k", "n"]).copy()
    df["t_s"] = (df["latency_us"] - (OVERHEAD_US if overhead else 0.0)) * 1e-6
    df["flops"] = 2.0 * df.m * df.k * df.n
    df["bytes"] = df.m * df.k + df.k * df.n + 2.0 * df.m * df.n
    peak, bw = hw["dense_tflops_fp8"] * 1e12, hw["hbm_bandwidth_GBps"] * 1e9
    df["compute_bound"] = df.flops / peak >= df.bytes / bw
    # never below the roofline (core/data/tables_store.h util_of: an overhead larger than the time left is capped)
    df["t_s"] = df.t_s.clip(lower=(df.flops / peak).combine(df.bytes / bw, max))
    return df, peak, bw


def derive(df, peak, bw):
    large = df[df.m >= LARGE_M]
    top = large.loc[large.groupby(["k", "n"]).m.idxmax()]
    shapes = top[top.compute_bound][["k", "n"]]
    plateau = large.merge(shapes).assign(f=lambda d: d.flops / d.t_s / peak).groupby(["k", "n"]).f.max()
    small = df[(df.m <= SMALL_M) & (df.k * df.n >= MIN_WEIGHT_BYTES) & ~df.compute_bound]
    stream = small.assign(f=lambda d: d.bytes / d.t_s / bw).groupby(["k", "n"]).f.max()
    return round(plateau.median(), 3), round(stream.median(), 3), len(plateau), len(stream)


def fallback_error(df, peak, bw, eff):
    pred = (df.flops / (peak * eff[0])).combine(df.bytes / (bw * eff[1]), max).clip(lower=FLOOR_US * 1e-6)
    return (pred / df.t_s - 1.0).abs()


def halves(df):
    shapes = sorted(set(zip(df.k, df.n)))
    key = list(zip(df.k, df.n))
    a = {s for i, s in enumerate(shapes) if i % 2 == 0}
    mask = pd.Series([s in a for s in key], index=df.index)
    return df[mask], df[~mask]


# A second, independent check of H800's pair: DeepGEMM's README dense FP8 rows on H800 (tests/validation/cases.cpp,
# "DeepGEMM dense GEMM": M=64/128 @a6d97a1c, M=4096 @327ec92f; TFLOPS by (n, k)), which the calibration's
# gemm_compute_eff was fitted on; bytes with the weights' 128 x 128 block scales.
DEEPGEMM_README = {
    64: [206, 289, 219, 336, 287, 295], 128: [352, 535, 358, 645, 533, 510], 4096: [1127, 1212, 775, 1520, 1410, 1168]}
DEEPGEMM_SHAPES = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]


def deepgemm_readme_error(eff):
    hw = json.load(open(os.path.join(ROOT, "presets/hardware/h800.json")))
    peak, bw = hw["dense_tflops_fp8"] * 1e12, hw["hbm_bandwidth_GBps"] * 1e9
    errs = []
    for m, tflops in DEEPGEMM_README.items():
        for (n, k), v in zip(DEEPGEMM_SHAPES, tflops):
            f, b = 2.0 * m * n * k, m * k + k * n * (1 + 4 / 128**2) + 2.0 * m * n
            t = max(f / (peak * eff[0]), b / (bw * eff[1]), FLOOR_US * 1e-6)
            errs.append(abs(f / t / 1e12 / v - 1.0))
    return pd.Series(errs).median(), max(errs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print the values as JSON")
    args = ap.parse_args()
    out = {}
    print(f"global calibration: gemm_compute_eff {GLOBAL[0]}, hbm_bw_eff {GLOBAL[1]}; floor {FLOOR_US} us")
    for gpu in GPUS:
        df, peak, bw = load(gpu)
        ce, me, n_c, n_m = derive(df, peak, bw)
        a, b = halves(df)
        held = []
        for fit, test in ((a, b), (b, a)):
            ce_h, me_h, _, _ = derive(fit, peak, bw)
            held.append((ce_h, me_h, fallback_error(test, peak, bw, (ce_h, me_h)).median(),
                         fallback_error(test, peak, bw, GLOBAL).median(), len(test)))
        out[gpu] = {"gemm_efficiency": ce, "gemm_hbm_efficiency": me, "held_out": held}
        print(f"{gpu:9s} {GPUS[gpu][0]} ({len(df)} rows): gemm_efficiency {ce} (median of {n_c} shapes' plateaus), "
              f"gemm_hbm_efficiency {me} (median of {n_m} shapes)")
        for i, (ce_h, me_h, e_own, e_glob, n) in enumerate(held):
            print(f"    fit on half {'AB'[i]} ({ce_h}, {me_h}), tested on half {'BA'[i]} ({n} rows): median |error| "
                  f"{100 * e_own:.1f}% own, {100 * e_glob:.1f}% global")
        ok_c, ok_m = 0.5 <= ce <= 0.85, 0.7 <= me <= 0.95
        if not (ok_c and ok_m):
            print(f"    NOTE: outside the typical range (compute 0.5-0.85, HBM 0.7-0.95): "
                  f"{'' if ok_c else 'compute '}{'' if ok_m else 'HBM'}")
    own = (out["h800"]["gemm_efficiency"], out["h800"]["gemm_hbm_efficiency"])
    (mo, xo), (mg, xg) = deepgemm_readme_error(own), deepgemm_readme_error(GLOBAL)
    print(f"h800 on DeepGEMM's README rows (18, never derived on): median |error| {100 * mo:.1f}% (max {100 * xo:.1f}%) "
          f"with its own pair, {100 * mg:.1f}% (max {100 * xg:.1f}%) with the calibration's, which was fitted on them")
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
