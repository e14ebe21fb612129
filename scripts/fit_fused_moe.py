#!/usr/bin/env python3
"""fit_fused_moe.py — the fused-MoE kernels' fallback constants, fitted on AIConfigurator's measured layers.

Triton's fused MoE (runtime.moe_kernel = triton, and auto where DeepGEMM does not run) and FlashInfer's CUTLASS MoE
(flashinfer_cutlass) have, off the bench_data tables, three constants each in presets/calibration.json:
<kernel>_moe_compute_eff (their fraction of the tensor peak at full tiles), <kernel>_moe_bw_eff (their fraction of HBM
bandwidth) and <kernel>_moe_fixed_us (a fixed time per layer: their 5-7 kernels' launches and tails). This script
fits them on the measured rows tests/unit/test_moe_offtable.cpp lists (AIC's SGLang Triton rows on H100 / H200 / B200,
vLLM's FlashInfer-CUTLASS rows on H100 / H200, 3 expert shapes x 4 token counts each), the layer timed by the
analytical path of build-native/moe-roofline. The constants are fitted on the Hopper rows (H100, H200), and
reported with each of them held out in turn (fitted on the other) and with B200 held out entirely (Triton's B200 rows
are never fitted on: its Blackwell kernel reaches less of the peak, 0.13-0.18 at prefill). The fit minimises the mean |log(predicted / measured)| over a grid (compute 0.20..0.80, HBM 0.40..0.95 by 0.01,
fixed 0..60 us by 2).

    python3 scripts/fit_fused_moe.py [--cli build-native/moe-roofline]
Python standard library only; about a minute (120 evaluations and the grid search).
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OTHER = ("moe.permute", "moe.finalize", "moe.unpermute")
DEEPGEMM_EFF, HBM_EFF = 0.585, 0.9  # what the split runs below time the two sides at (matmul_efficiency pins them)


def rows_of_test():
    src = open(os.path.join(ROOT, "tests", "unit", "test_moe_offtable.cpp"), encoding="utf-8").read()
    rows = []
    for hw, kern, body in re.findall(r'\{"([\w-]+)", "(\w+)", [\d.]+, [\d.]+, \{(.*?)\}\},', src, re.S):
        for m in re.finditer(r'\{"([\w.-]+)", "(\w+)", (\d+), (\d+), ([\d.]+), (\d+)\}', body):
            rows.append({"hw": hw, "kernel": kern, "model": m.group(1), "experts": m.group(2), "ep": int(m.group(3)),
                         "tokens": int(m.group(4)), "us": float(m.group(5))})
    return rows


def scenario(r, hardware):
    dp = r["tokens"] % r["ep"] == 0  # as test_moe_offtable.cpp's scenario_of()
    return {"model": r["model"], "hardware": hardware,
            "parallel": {"tp": 1 if dp else r["ep"], "dp": r["ep"] if dp else 1, "ep": r["ep"]},
            "workload": {"phase": "decode", "batch": r["tokens"] // r["ep"] if dp else r["tokens"], "context_len": 128},
            "precision": {"experts": r["experts"], "fp8_scaling": "block"},
            "runtime": {"a2a_backend": "allgather", "moe_kernel": r["kernel"]}}


def ops(cli, s):
    out = subprocess.run([cli, "eval", "-", "--format", "json"], input=json.dumps(s), capture_output=True, text=True)
    j = json.loads(out.stdout)
    return [o for o in j["layers"] if o["phase"] == "decode" and o["group"].startswith("MoE layers")]


def split(cli, r):
    """The layer's parts on the analytical path: compute side (at DEEPGEMM_EFF), memory side (at HBM_EFF), the
    kernel's zero rows (at HBM_EFF) and the other passes, each from a run with the other side made ~1000x faster."""
    hw = {"base": r["hw"], "tables": "", "tables_fallback": "", "matmul_efficiency": DEEPGEMM_EFF}
    base = ops(cli, scenario(r, hw))
    compute = ops(cli, scenario(r, dict(hw, hbm_bandwidth_GBps=2e6)))
    memory = ops(cli, scenario(r, dict(hw, dense_tflops_bf16=2e5, dense_tflops_fp8=2e5)))
    def time(os_, name):  # one layer's op (models with several MoE layer groups list it once per group)
        return next((o["time_us"] for o in os_ if o["name"] == name), 0.0)
    return {"tc": time(compute, "moe.routed_experts"), "tm": time(memory, "moe.routed_experts"),
            "zeros": time(base, "moe.nonlocal_rows"), "other": sum(time(base, n) for n in OTHER)}


def predict(p, ce, me, fixed):
    return max(p["tc"] * DEEPGEMM_EFF / ce, p["tm"] * HBM_EFF / me) + p["zeros"] * HBM_EFF / me + p["other"] + fixed


FIT_GPUS = ("h100-sxm", "h200")
GRID = [(ce / 100, me / 100, f) for ce in range(20, 81) for me in range(40, 96) for f in range(0, 61, 2)]


def fit(rows):
    return min(GRID, key=lambda c: sum(abs(math.log(predict(r["parts"], *c) / r["us"])) for r in rows))


def errors(rows, c):
    return [abs(predict(r["parts"], *c) / r["us"] - 1) for r in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build-native", "moe-roofline"))
    a = ap.parse_args()
    rows = rows_of_test()
    for r in rows:
        r["parts"] = split(a.cli, r)
    before = (DEEPGEMM_EFF, HBM_EFF, 0)
    for kernel in ("triton", "flashinfer_cutlass"):
        mine = [r for r in rows if r["kernel"] == kernel and r["hw"] in FIT_GPUS]
        shipped = fit(mine)
        held = []
        for gpu in FIT_GPUS:
            train = [r for r in mine if r["hw"] != gpu]
            test = [r for r in mine if r["hw"] == gpu]
            c = fit(train)
            e = errors(test, c)
            held += e
            print(f"{kernel} {gpu} held out: fitted on the other {c}, median |error| {statistics.median(e):.3f}, "
                  f"worst {max(e):.3f} (DeepGEMM's constants: {statistics.median(errors(test, before)):.3f})")
        e_all, e_before = errors(mine, shipped), errors(mine, before)
        print(f"{kernel}: fitted on {len(mine)} Hopper rows (compute_eff, bw_eff, fixed_us) = {shipped}: median |error| "
              f"{statistics.median(e_all):.3f}, worst {max(e_all):.3f}; each GPU held out: median "
              f"{statistics.median(held):.3f}, worst {max(held):.3f}; DeepGEMM's constants: median "
              f"{statistics.median(e_before):.3f}, worst {max(e_before):.3f}")
        other = [r for r in rows if r["kernel"] == kernel and r["hw"] not in FIT_GPUS]
        if other:
            e, eb = errors(other, shipped), errors(other, before)
            print(f"{kernel} on {sorted({r['hw'] for r in other})}, never fitted on: median |error| "
                  f"{statistics.median(e):.3f}, worst {max(e):.3f} (DeepGEMM's constants: {statistics.median(eb):.3f}, "
                  f"worst {max(eb):.3f})")


if __name__ == "__main__":
    main()
