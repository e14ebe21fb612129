#!/usr/bin/env python3
"""distill_aic.py — compact bench_data tables from AIConfigurator's measured per-operator CSVs.

Reads  ../shared/anchors/aic/perf/<system>/<backend>-<version>/<family>/<table>.csv.gz
       (NVIDIA AIConfigurator, ai-dynamo/aiconfigurator @ 095f58a51c4ca8e61b66ec108d86f223f8d559ce, Apache-2.0;
       units and column meanings in ../shared/anchors/aic/SOURCE.md)
Writes bench_data/comm/<gpu family>/collectives.csv, bench_data/gemm/<gpu family>/<engine>_cuda_graph.csv and
       bench_data/mha/{decode,prefill}/<gpu family>/<heads>-<kv heads>-<head dim>.csv (h200, b200) and
       bench_data/moe/<gpu family>/sglang.csv (h100, h200, b200, gb200), bench_data/moe/{b200,gb200}/sglang_triton.csv,
       bench_data/moe/<gpu family>/vllm_mxfp4.csv and trtllm_mxfp4.csv (h100, h200),
       bench_data/moe/<gpu family>/vllm_flashinfer_cutlass.csv (h100, h200),
       bench_data/gdn/<gpu family>/sglang.csv (h100, h200, b200, gb200).

    python3 scripts/distill_aic.py [--aic DIR] [--out DIR]      # from the repository root; re-runs are byte-identical
    python3 scripts/distill_aic.py --check                      # bench_data is exactly what the source rows give

Python standard library only (csv, gzip). What is kept, and why (bench_data/README.md says the same):
  * collectives: every measured point of the engines' own all-reduce in CUDA-graph mode (SGLang, vLLM, TRT-LLM) and
    in eager mode (SGLang, vLLM), and NCCL (nccl-tests, newest version 2.29.2: one measurement per key) all_reduce,
    all_gather and reduce_scatter on 2-byte elements. Message size is converted from elements to bytes of the whole
    buffer (for all_gather the gathered output, for reduce_scatter the full input), latency from ms to us. An
    isolated spike (a point more than 2x both its neighbours in the same series) is dropped as a glitch.
  * gemm: each engine's dense GEMM kernels (SGLang 0.5.14, vLLM 0.24, TensorRT-LLM 1.3.0rc20), one file per engine:
    bf16 (torch linear = cuBLAS; in SGLang's file only, the same library in all three), fp8 (per-tensor scaled:
    sgl-kernel fp8_scaled_mm, vLLM's CUTLASS scaled_mm), fp8_block (128x128 block-scaled:
    DeepGEMM in SGLang and TRT-LLM; vLLM's rows carry a per-call floor its serving does not show and are left out,
    GEMM_SOURCES says why) and nvfp4 (on
    Blackwell: FlashInfer CuTe-DSL in SGLang and vLLM; TRT-LLM's torch-flow fp8 and nvfp4 rows include a dynamic
    activation quantization its serving path does not run and are left out), on a subsampled grid: M (tokens)
    16 .. 16384 at powers of two but 8192, K and N in {512, 1024, 2048, 4096, 7168, 16384}, N also 65536 (LM
    heads), one row per (dtype, K, N) with a us_at_<M> column per M. AIC times GEMMs inside CUDA graphs with several
    weight copies (HBM weights).
  * mha (h200, b200; h100 keeps BLIS's tables): SGLang 0.5.14's default attention backend (fa3 on H200, trtllm_mha on
    B200), full attention (window 0), 8 per-GPU head shapes. Decode: bf16 and fp8 KV cache, batch in {1, 4, 16, 64,
    256, 1024} x KV length (isl + step) in {1024, 4096, 16384, 65536}, where measured. Prefill: one sequence
    (batch 1, no cached prefix), bf16 attention and KV, seq_len 512 .. 16384 at powers of two.
  * moe: SGLang 0.5.14's routed-expert layer (moe_perf: permutation, gate/up GEMM, activation, down GEMM, weighted
    combine on one GPU), `balanced` routing, the expert shapes of the model presets, the dtypes the model prices
    (bf16, fp8 = fp8_block, nvfp4 and mxfp4 = w4a8_mxfp4_mxfp8 on B200, int4 = int4_wo),
    every (moe_tp, moe_ep) with tp x ep <= 64, tokens in MOE_TOKENS. Per key the kernel_source with the smallest
    summed latency over those tokens; latencies made non-decreasing in tokens (running max; the script counts them).
  * moe, Triton (b200): SGLang 0.5.14's Triton fused MoE alone (kernel_source sglang_fused_moe_triton: bf16 and
    fp8_block), the same selection otherwise: on B200 the fastest kernel of most keys is TensorRT-LLM's
    (sglang_flashinfer_trtllm_moe), so runtime.moe_kernel = triton needs Triton's own rows. On h100 and h200 the
    fastest is Triton's for every bf16 / fp8 key; the script checks that (sglang.csv's bf16 / fp8 rows equal the
    Triton-only selection) and writes no separate file there.
  * moe, Hopper MXFP4 (h100, h200): vLLM 0.24's routed-expert layer for gpt-oss's MXFP4 experts (w4a16_mxfp4:
    triton_kernels, 4-bit weights dequantised to BF16 inside the kernel; Hopper has no FP4 tensor cores), the one
    FP4 expert path SGLang's Hopper tables lack (see MOE_DTYPES); same selection, written as dtype mxfp4.
  * moe, TensorRT-LLM's Hopper MXFP4 (h100, h200): TensorRT-LLM 1.3.0rc20's own routed-expert layer for gpt-oss's
    MXFP4 experts (moe_torch_flow, w4a16_mxfp4), the kernel a TensorRT-LLM run serves gpt-oss with there; same
    selection (AIC timed it under EP only: moe_tp 1), written as dtype mxfp4 to trtllm_mxfp4.csv.
  * moe, FlashInfer-CUTLASS (h100, h200): vLLM 0.24's FlashInferExperts (FlashInfer cutlass_fused_moe) on
    block-scaled FP8 experts, the same selection (MOE_FLASHINFER_KERNELS says what is left out and why); B200's rows
    are shapes no preset has: no file.
  * gdn (h100, h200, b200): SGLang 0.5.14's Gated DeltaNet prefill kernels (linear_attention/gdn_perf, context phase,
    one sequence: batch_size 1, seq_len = num_tokens): causal_conv1d_fn (conv_us) and chunk_gated_delta_rule
    (core_us), per GPU's (k heads, v heads, k dim, v dim) of the Qwen3.5 presets under TP 1-16 (Qwen3-Next has the
    35B's heads), every measured token count (1 .. 32768).
"""
import argparse
import csv
import gzip
import os
import sys

SYSTEMS = {"h100_sxm": "h100", "h200_sxm": "h200", "b200_sxm": "b200", "gb200": "gb200"}

# (table path under perf/<system>/, kernel_source -> impl name written to bench_data)
ALLREDUCE_SOURCES = [
    ("sglang-0.5.14/comm/custom_allreduce_perf.csv.gz",
     {"SGLang_CustomAllReduce_graph": "sglang", "SGLang_CustomAllReduce_eager": "sglang_eager"}),
    ("vllm-0.24.0/comm/custom_allreduce_perf.csv.gz",
     {"vLLM_custom_graph": "vllm", "vLLM_custom_eager": "vllm_eager"}),
    ("trtllm-1.3.0rc20/comm/custom_allreduce_perf.csv.gz", {"TRTLLM": "trtllm"}),
]
NCCL_SOURCE = "nccl-2.29.2/comm/nccl_perf.csv.gz"
NCCL_OPS = ("all_reduce", "all_gather", "reduce_scatter")

# Dense GEMMs per engine: (table under perf/<system>/, {(kernel_source, gemm_dtype): dtype written}). Where an engine
# measured several kernels of one format, each point keeps the fastest kernel measured there.
# vLLM's block-scaled FP8 rows (DeepGemm / Cutlass / FlashInfer Fp8BlockScaledMMKernel) are left out: each call
# carries a floor its serving path does not pay (m 64, k = n 7,168: 184.6 us on B200 and 81.4 us on H200 through
# vLLM's DeepGEMM wrapper, 26.7 and 18.9 us through SGLang's DeepGEMM; ~175 us at every m up to 1,024 on B200).
# MiniMax-M2.5's checkpoint is block-scaled FP8, and InferenceMAX measured it under vLLM on 4 B200 at 8.0-9.5 ms a
# decode step for 4 clients (../shared/reference/serving_public.csv) where its 124 attention projections at those rows
# alone would take 22 ms; on H100 and H200 the rows put its steps 34-41% above the measured ones (median). Without them vLLM
# reads SGLang's DeepGEMM rows (the same library) for block-scaled FP8 (Tables::gemm_slot: the engine's own, else SGLang's).
GEMM_SOURCES = {
    "sglang": ("sglang-0.5.14/gemm/gemm_perf.csv.gz", {
        ("sglang_torch_linear", "bfloat16"): "bf16",
        ("sglang_sgl_kernel_fp8_scaled_mm", "fp8"): "fp8",
        ("sglang_deepgemm_gemm_nt_f8f8bf16", "fp8_block"): "fp8_block",
        ("sglang_flashinfer_cutedsl_nvfp4", "nvfp4"): "nvfp4"}),
    "vllm": ("vllm-0.24.0/gemm/gemm_perf.csv.gz", {
        ("CutlassFP8ScaledMMLinearKernel", "fp8"): "fp8",
        ("FlashInferCuteDslNvFp4LinearKernel", "nvfp4"): "nvfp4"}),
    # TRT-LLM's torch_flow fp8 and nvfp4 rows time a dynamic activation quantization with the GEMM (AIC SOURCE.md
    # section 5.1: "the weights carry no input scale"); TRT-LLM serves ModelOpt checkpoints with static input
    # scales, NVFP4's quantization fused into the RMSNorm before, and its Llama-3.1-70B FP8 decode on one B200
    # measures 14.9 ms a step where these rows add up to 22 ms. Left out: TRT-LLM reads another engine's kernel of
    # those formats. Its block-scaled FP8 kernels (DeepGEMM on Blackwell) are kept.
    "trtllm": ("trtllm-1.3.0rc20/gemm/gemm_perf.csv.gz", {
        ("deepgemm", "fp8_block"): "fp8_block",
        ("torch_flow", "fp8_block"): "fp8_block"}),
}
# bf16 is cuBLAS (torch linear) in all three engines: kept once, in SGLang's file.
GEMM_M = [2 ** i for i in range(4, 15) if i != 13]  # 16 .. 16384 but 8192
GEMM_K = [512, 1024, 2048, 4096, 7168, 16384]
GEMM_N = [512, 1024, 2048, 4096, 7168, 16384, 65536]


ATTN_SOURCES = {"h200_sxm": "fa3", "b200_sxm": "trtllm_mha"}  # SGLang 0.5.14's default backend on the GPU
ATTN_SHAPES = [(8, 1, 128), (16, 2, 128), (32, 4, 128), (64, 8, 128), (32, 8, 128), (32, 32, 128), (8, 1, 64), (64, 8, 64)]
ATTN_BATCH = [1, 4, 16, 64, 256, 1024]
ATTN_KV = [1024, 4096, 16384, 65536]
ATTN_SEQ = [512, 1024, 2048, 4096, 8192, 16384]
KV_NAMES = {"bfloat16": "bf16", "fp8": "fp8"}

MOE_SOURCE = "sglang-0.5.14/moe/moe_perf.csv.gz"
# AIC moe_dtype -> the expert format the model prices it as, per architecture: on Blackwell MXFP4 runs on the FP4
# tensor cores (SGLang's default MXFP8 activations); NVFP4 only where FP4 tensor cores exist. Hopper's w4a16_mxfp4
# rows (sglang_fused_moe_triton) are left out: 3.2x slower than vLLM's triton_kernels MXFP4 path on the same GPU and
# shape (gpt-oss-120b, 64 tokens: 2.22 vs 0.69 ms), not the kernel SGLang serves gpt-oss with on Hopper.
MOE_DTYPES = {
    "hopper": {"bfloat16": "bf16", "fp8_block": "fp8", "int4_wo": "int4"},
    "blackwell": {"bfloat16": "bf16", "fp8_block": "fp8", "nvfp4": "nvfp4", "w4a8_mxfp4_mxfp8": "mxfp4", "int4_wo": "int4"},
}
MOE_ARCH = {"h100_sxm": "hopper", "h200_sxm": "hopper", "b200_sxm": "blackwell", "gb200": "blackwell"}
# SGLang's Triton fused MoE alone (runtime.moe_kernel = triton): {(kernel_source, moe_dtype): dtype written}.
MOE_TRITON_KERNELS = {("sglang_fused_moe_triton", "bfloat16"): "bf16", ("sglang_fused_moe_triton", "fp8_block"): "fp8"}
# Hopper's MXFP4 experts: vLLM 0.24's gpt-oss triton_kernels path, the kernel vLLM (and SGLang) serve gpt-oss with there.
MOE_HOPPER_MXFP4_SOURCE = "vllm-0.24.0/moe/moe_perf.csv.gz"
MOE_HOPPER_MXFP4_DTYPES = {"w4a16_mxfp4": "mxfp4"}
# TensorRT-LLM's own Hopper MXFP4 experts (its PyTorch flow's MoE on w4a16_mxfp4, the gpt-oss path; AIC timed it at
# moe_tp 1, ep 1-128): {(kernel_source, moe_dtype): dtype written}.
MOE_TRTLLM_SOURCE = "trtllm-1.3.0rc20/moe/moe_perf.csv.gz"
MOE_TRTLLM_HOPPER_KERNELS = {("moe_torch_flow", "w4a16_mxfp4"): "mxfp4"}
# (hidden, moe_intermediate, top_k, routed experts) of the MoE model presets (presets/models/)
MOE_SHAPES = [
    (7168, 2048, 8, 256),   # DeepSeek-V3 / R1 / V3.2
    (7168, 2048, 8, 384),   # Kimi-K2 / K2.5
    (7168, 3072, 6, 384),   # DeepSeek-V4-Pro
    (4096, 2048, 6, 256),   # DeepSeek-V4-Flash
    (6144, 2048, 8, 256),   # GLM-5 / GLM-5.2
    (3072, 1536, 8, 256),   # MiniMax-M2.5
    (2880, 2880, 4, 128),   # gpt-oss-120b
    (2880, 2880, 4, 32),    # gpt-oss-20b
    (4096, 1024, 10, 512),  # Qwen3.5-397B-A17B
    (4096, 1536, 8, 128),   # Qwen3-235B-A22B
    (2048, 768, 8, 128),    # Qwen3-30B-A3B
    (2048, 512, 8, 256),    # Qwen3.5-35B-A3B
    (2048, 512, 10, 512),   # Qwen3-Next-80B-A3B
    (2048, 1408, 6, 64),    # DeepSeek-V2-Lite
    (5120, 8192, 1, 128),   # Llama-4-Maverick
    (5120, 8192, 1, 16),    # Llama-4-Scout
    (4096, 14336, 2, 8),    # Mixtral-8x7B
]
MOE_TOKENS = [1, 4, 16, 64, 256, 1024, 2048, 4096, 8192, 16384]
# Expert shapes whose model routes with group-limited top-k (DeepSeek-V3/R1: n_group 8, topk_group 4). AIC's moe_perf
# collectors feed them "balanced" logits whose ties pile every token onto the same few lowest-index experts, i.e. onto
# rank 0, the GPU that is timed (bench_data/README.md, "moe"): their rows are not balanced routing and are left out,
# at every ep (at ep 1 every pick is on the timed GPU but on a handful of experts: a decode batch of 64 reads ~8
# experts' weights where balanced routing reads ~220).
MOE_GROUP_LIMITED = {(7168, 2048, 8, 256)}
# SGLang's DeepEP MoE (AIC's wideep collector, sglang 0.5.10: one GPU holding experts/ep experts, DeepGEMM grouped
# GEMMs after DeepEP's dispatch, uniform routing), the DeepSeek-V3 shape only: prefill = contiguous layout (DeepEP
# normal), decode = masked layout (DeepEP low-latency, CUDA graph).
MOE_DEEPEP_SOURCES = {"prefill": "sglang-0.5.10/moe/wideep_context_moe_perf.csv.gz",
                      "decode": "sglang-0.5.10/moe/wideep_generation_moe_perf.csv.gz"}
MOE_DEEPEP_SYSTEMS = ("h100_sxm", "h200_sxm", "b200_sxm", "gb200")
MOE_MAX_GPUS = 64  # moe_tp x moe_ep
# vLLM 0.24's FlashInfer-CUTLASS routed experts (FlashInferExperts: FlashInfer's cutlass_fused_moe, the standard
# contiguous format vLLM runs without an all-to-all or after its all-gather): block-scaled FP8 (Fp8MoEMethod, 128x128
# weight blocks), with the same kernel's unquantised BF16 and NVFP4 rows where a preset shape was measured (none: B200's
# are two shapes no preset has). {(kernel_source, moe_dtype): dtype written}. Left out:
#   * per-tensor FP8 (vllm_modeloptfp8moe_flashinfer_cutlass_flashinferexperts): its balanced rows run 5-10x under
#     the HBM roof and fall as tokens grow: h200 Mixtral 4096/14336/2/8 at ep 1 reads 8 x 176 MB = 1.41 GB in 2.672 ms
#     at 8 tokens (0.53 TB/s of 4.8), 0.960 ms at 512 tokens, 3.092 ms at 768; Qwen3-235B 4096/1536/8/128 at ep 2,
#     16 tokens 2.094 ms where the block-scaled kernel takes 0.318 ms for the same 1.21 GB. Not a kernel's behaviour
#     a lookup can stand on.
#   * SGLang 0.5.14's sglang_flashinfer_cutlass_moe (BF16): only shapes no model preset has.
MOE_FLASHINFER_SOURCE = "vllm-0.24.0/moe/moe_perf.csv.gz"
MOE_FLASHINFER_KERNELS = {
    ("vllm_fp8moe_flashinfer_cutlass_flashinferexperts", "fp8_block"): "fp8",
    ("vllm_unquantizedfusedmoe_flashinfer_cutlass_flashinferexperts", "bfloat16"): "bf16",
    ("vllm_compressedtensorsw4a4nvfp4moe_flashinfer_cutlass_flashinferexperts", "nvfp4"): "nvfp4",
}


def rows(path):
    with gzip.open(path, "rt", newline="") as f:
        yield from csv.DictReader(f)


def fmt_us(ms):
    """ms -> us with 4 significant digits (the repeat-to-repeat scatter of these measurements is a few percent)."""
    us = float(ms) * 1000.0
    return f"{us:.4g}" if us < 1e4 else f"{us:.0f}"


def drop_spikes(series):
    """series: sorted [(bytes, us)]. Drops isolated spikes (> 2x both neighbours); returns (kept, dropped)."""
    kept, dropped = [], []
    for i, (b, us) in enumerate(series):
        lo = series[i - 1][1] if i > 0 else None
        hi = series[i + 1][1] if i + 1 < len(series) else None
        if lo is not None and hi is not None and us > 2 * max(lo, hi):
            dropped.append((b, us))
        else:
            kept.append((b, us))
    return kept, dropped


def collectives(sysdir, log):
    series = {}  # (op, impl, gpus) -> [(bytes, us)]
    for rel, impls in ALLREDUCE_SOURCES:
        for r in rows(os.path.join(sysdir, rel)):
            impl = impls.get(r["kernel_source"])
            if impl is None or r["allreduce_dtype"] != "bfloat16":
                continue
            key = ("all_reduce", impl, int(r["num_gpus"]))
            series.setdefault(key, []).append((int(r["message_size"]) * 2, float(r["latency"]) * 1000.0))
    for r in rows(os.path.join(sysdir, NCCL_SOURCE)):
        if r["op_name"] not in NCCL_OPS or r["nccl_dtype"] != "half":
            continue
        key = (r["op_name"], "nccl", int(r["num_gpus"]))
        series.setdefault(key, []).append((int(r["message_size"]) * 2, float(r["latency"]) * 1000.0))
    out = []
    for key in sorted(series):
        pts = sorted(series[key])
        if len({b for b, _ in pts}) != len(pts):
            sys.exit(f"{sysdir}: repeated message size in {key}")
        kept, dropped = drop_spikes(pts)
        for b, us in dropped:
            log.append(f"{os.path.basename(sysdir)} {key[0]} {key[1]} {key[2]} GPUs {b} B: {us:.1f} us dropped (spike)")
        for b, us in kept:
            out.append((key[0], key[1], key[2], b, fmt_us(us / 1000.0)))
    return out


def gemm(sysdir, engine):
    """[(dtype, m, k, n, us)] of one engine's dense GEMMs on the grid; a (dtype, k, n) series no kernel measured at
    every grid m is left out (the lookup then borrows the nearest measured shape)."""
    source, kernels = GEMM_SOURCES[engine]
    path = os.path.join(sysdir, source)
    if not os.path.isfile(path):
        return []
    want_m, want_k, want_n = set(GEMM_M), set(GEMM_K), set(GEMM_N)
    got = {}  # (dtype, k, n) -> {m: fastest latency ms among the kernels measured there}
    seen = set()
    for r in rows(path):
        dt = kernels.get((r["kernel_source"], r["gemm_dtype"]))
        if dt is None:
            continue
        m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
        if m in want_m and n in want_n and k in want_k:
            if (dt, r["kernel_source"], k, n, m) in seen:
                sys.exit(f"{sysdir}: repeated GEMM key {(engine, dt, r['kernel_source'], k, n, m)}")
            seen.add((dt, r["kernel_source"], k, n, m))
            series = got.setdefault((dt, k, n), {})
            if m not in series or float(r["latency"]) < float(series[m]):
                series[m] = r["latency"]
    best = {key: series for key, series in got.items() if len(series) == len(GEMM_M)}
    out = []
    for (dt, k, n) in sorted(best):
        out += [(dt, m, k, n, fmt_us(best[(dt, k, n)][m])) for m in GEMM_M]
    return out


def attention(sysdir, kernel):
    """{(h, kv, d): [(kv_dtype, batch, kv_len, us)]}, {(h, kv, d): [(seq_len, us)]}"""
    shapes = set(ATTN_SHAPES)
    dec, pre = {}, {}
    for r in rows(os.path.join(sysdir, "sglang-0.5.14/attention/generation_attention_perf.csv.gz")):
        shape = (int(r["num_heads"]), int(r["num_key_value_heads"]), int(r["head_dim"]))
        if r["kernel_source"] != kernel or r["window_size"] != "0" or shape not in shapes or r["kv_cache_dtype"] not in KV_NAMES:
            continue
        b, L = int(r["batch_size"]), int(r["isl"]) + int(r["step"])
        if b in ATTN_BATCH and L in ATTN_KV:
            key = (KV_NAMES[r["kv_cache_dtype"]], b, L)
            d = dec.setdefault(shape, {})
            if key in d:
                sys.exit(f"{sysdir}: repeated decode attention key {shape} {key}")
            d[key] = fmt_us(r["latency"])
    for r in rows(os.path.join(sysdir, "sglang-0.5.14/attention/context_attention_perf.csv.gz")):
        shape = (int(r["num_heads"]), int(r["num_key_value_heads"]), int(r["head_dim"]))
        if (r["kernel_source"] != kernel or r["window_size"] != "0" or shape not in shapes or r["batch_size"] != "1"
                or r["step"] != "0" or r["attn_dtype"] != "bfloat16" or r["kv_cache_dtype"] != "bfloat16"):
            continue
        L = int(r["isl"])
        if L in ATTN_SEQ:
            p = pre.setdefault(shape, {})
            if L in p:
                sys.exit(f"{sysdir}: repeated prefill attention key {shape} {L}")
            p[L] = fmt_us(r["latency"])
    for shape in ATTN_SHAPES:
        if len(pre.get(shape, {})) != len(ATTN_SEQ) or len(dec.get(shape, {})) < 16:
            sys.exit(f"{sysdir}: attention shape {shape} lacks rows")
    return ({s: [(*k, v) for k, v in sorted(d.items())] for s, d in dec.items()},
            {s: sorted(p.items()) for s, p in pre.items()})


def monotone_us(points):
    """{tokens: ms} -> [(tokens, us text)] ascending, each latency raised to the largest at fewer tokens (a measured
    time never falls as tokens grow), and how many were raised."""
    out, run, raised = [], 0.0, 0
    for t in sorted(points):
        us = float(fmt_us(points[t]))
        if us < run:
            raised += 1
            us = run
        run = us
        out.append((t, f"{us:.4g}" if us < 1e4 else f"{us:.0f}"))
    return out, raised


def moe(sysdir, arch, log, source=MOE_SOURCE, names=None, kernels=None):
    """[(dtype, hidden, inter, topk, experts, tp, ep, tokens, latency_us)] and the kernel picks per key. kernels:
    {(kernel_source, moe_dtype): dtype written}, only those rows (names is then not used)."""
    names, shapes, want_t = names or MOE_DTYPES[arch], set(MOE_SHAPES), set(MOE_TOKENS)
    series = {}  # (dtype, h, i, k, e, tp, ep) -> {kernel: {tokens: ms}}
    dropped = set()  # (tp, ep) layouts of group-limited shapes left out
    for r in rows(os.path.join(sysdir, source)):
        dt = kernels.get((r["kernel_source"], r["moe_dtype"])) if kernels is not None else names.get(r["moe_dtype"])
        if dt is None or r["distribution"] != "balanced":
            continue
        shape = (int(r["hidden_size"]), int(r["inter_size"]), int(r["topk"]), int(r["num_experts"]))
        tp, ep, t = int(r["moe_tp_size"]), int(r["moe_ep_size"]), int(r["num_tokens"])
        if shape not in shapes or tp * ep > MOE_MAX_GPUS or t not in want_t:
            continue
        if shape in MOE_GROUP_LIMITED:
            dropped.add((tp, ep))
            continue
        pts = series.setdefault((dt, *shape, tp, ep), {}).setdefault(r["kernel_source"], {})
        # a point measured more than once (GB200's file holds two runs of about half its points): their mean
        pts.setdefault(t, []).append(float(r["latency"]))
    repeated = 0
    for kernels in series.values():
        for pts in kernels.values():
            for t, v in pts.items():
                repeated += len(v) > 1
                pts[t] = sum(v) / len(v)
    out, picks, adjusted, partial = [], {}, 0, 0
    for key in sorted(series):
        kernels = series[key]
        full = [k for k in sorted(kernels) if len(kernels[k]) == len(MOE_TOKENS)]
        if not full:  # keep the kernel covering most token counts (ties: the faster over the common points)
            partial += 1
            most = max(len(p) for p in kernels.values())
            full = [k for k in sorted(kernels) if len(kernels[k]) == most]
        best = min(full, key=lambda k: (sum(kernels[k].values()), k))
        picks[best] = picks.get(best, 0) + 1
        cells, raised = monotone_us(kernels[best])
        adjusted += raised
        out.extend((*key, t, us) for t, us in cells)
    log.append(f"{os.path.basename(sysdir)} moe ({source}): {len(series)} keys, {len(out)} rows, kernels {picks}, "
               f"{adjusted} points raised to a smaller token count's time, {partial} keys without the full token grid, "
               f"{len(dropped)} group-limited (tp, ep) layouts left out, {repeated} points measured more than once (their mean)")
    return out


def moe_deepep(sysdir, phase, log):
    """SGLang's DeepEP MoE of one phase, uniform routing, fp8: (header, wide rows), a row per ep; tokens = AIC's
    num_tokens, the tokens entering the layer across the EP group (tokens per GPU x ep). Latencies made
    non-decreasing in tokens (running max), as moe()."""
    source = MOE_DEEPEP_SOURCES[phase]
    series = {}  # (dtype, h, i, k, e, tp, ep) -> {tokens: ms}
    for r in rows(os.path.join(sysdir, source)):
        if r["distribution"] != "uniform" or r["moe_dtype"] != "fp8_block":
            continue
        key = ("fp8", int(r["hidden_size"]), int(r["inter_size"]), int(r["topk"]), int(r["num_experts"]),
               int(r["moe_tp_size"]), int(r["moe_ep_size"]))
        t = int(r["num_tokens"])
        pts = series.setdefault(key, {})
        if t in pts:
            sys.exit(f"{sysdir}: repeated DeepEP MoE key {key} {t}")
        pts[t] = float(r["latency"])
    tokens = sorted({t for pts in series.values() for t in pts})
    out, adjusted = [], 0
    for key in sorted(series):
        pairs, raised = monotone_us(series[key])
        adjusted += raised
        cells = dict(pairs)
        out.append((*key, *(cells.get(t, "") for t in tokens)))
    log.append(f"{os.path.basename(sysdir)} moe deepep {phase} ({source}): {len(series)} keys, "
               f"{sum(len(p) for p in series.values())} points, {adjusted} raised to a smaller token count's time")
    return ["dtype", "hidden", "inter", "topk", "experts", "tp", "ep"] + [f"us_at_{t}" for t in tokens], out


GDN_SOURCE = "sglang-0.5.14/linear_attention/gdn_perf.csv.gz"
GDN_MODELS = ("Qwen/Qwen3.5-35B-A3B", "Qwen/Qwen3.5-397B-A17B")  # Qwen3-Next-80B-A3B: the 35B's heads
GDN_KERNELS = {"causal_conv1d_fn": "conv", "chunk_gated_delta_rule": "core"}


def gdn(sysdir, log):
    """[(k_heads, v_heads, k_dim, v_dim, tokens, conv_us, core_us)] per GPU, one sequence."""
    pts = {}  # (kh, vh, dk, dv) -> {tokens: {"conv": ms, "core": ms}}
    for r in rows(os.path.join(sysdir, GDN_SOURCE)):
        kern = GDN_KERNELS.get(r["kernel_source"])
        if kern is None or r["phase"] != "context" or r["model_name"] not in GDN_MODELS or int(r["batch_size"]) != 1:
            continue
        key = (int(r["num_k_heads"]), int(r["num_v_heads"]), int(r["head_k_dim"]), int(r["head_v_dim"]))
        t = int(r["num_tokens"])
        cell = pts.setdefault(key, {}).setdefault(t, {})
        if kern in cell and abs(cell[kern] - float(r["latency"])) > 1e-12:
            # the same per-GPU heads measured for two models: keep the first model's (GDN_MODELS order)
            continue
        cell.setdefault(kern, float(r["latency"]))
    out = []
    for key in sorted(pts):
        for t in sorted(pts[key]):
            c = pts[key][t]
            if "conv" in c and "core" in c:
                out.append((*key, t, fmt_us(c["conv"]), fmt_us(c["core"])))
    log.append(f"{os.path.basename(sysdir)} gdn: {len(pts)} head shapes, {len(out)} rows")
    return out


def long_to_wide(data, nkey, prefix, key_names=("op", "impl", "num_gpus")):
    """Rows (key..., x, us) as one row per key with a <prefix><x> column per x any key measured (ascending; an empty
    cell where a key has no point): the collectives (key op, impl, num_gpus; x message bytes) and the MHA decode
    tables (key kv_dtype, batch_size; x KV length)."""
    xs = sorted({row[nkey] for row in data})
    series = {}
    for row in data:
        series.setdefault(tuple(row[:nkey]), {})[row[nkey]] = row[nkey + 1]
    out = [(*key, *(pts.get(x, "") for x in xs)) for key, pts in series.items()]
    return list(key_names) + [f"{prefix}{x}" for x in xs], out


def gemm_wide(data):
    """The long GEMM rows (dtype, m, k, n, us) as one row per (dtype, k, n) with a us_at_<m> column per GEMM_M."""
    series = {}
    for dt, m, k, n, us in data:
        series.setdefault((dt, k, n), {})[m] = us
    out = [(*key, *(pts.get(m, "") for m in GEMM_M)) for key, pts in series.items()]
    return ["dtype", "k", "n"] + [f"us_at_{m}" for m in GEMM_M], out


def moe_wide(data):
    """The long MoE rows as one row per key with a us_at_<tokens> column per MOE_TOKENS count (empty: not measured)."""
    series = {}
    for row in data:
        series.setdefault(tuple(row[:7]), {})[row[7]] = row[8]
    out = [(*key, *(pts.get(t, "") for t in MOE_TOKENS)) for key, pts in series.items()]
    return ["dtype", "hidden", "inter", "topk", "experts", "tp", "ep"] + [f"us_at_{t}" for t in MOE_TOKENS], out


def write_csv(path, header, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        f.write(",".join(header) + "\n")
        for row in data:
            f.write(",".join(str(c) for c in row) + "\n")
    return os.path.getsize(path)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--aic", default=os.path.join(root, "..", "shared", "anchors", "aic", "perf"))
    ap.add_argument("--out", default=os.path.join(root, "bench_data"))
    ap.add_argument("--check", action="store_true",
                    help="distil into a scratch folder and compare with --out byte for byte: every distilled table is "
                         "exactly what its source rows give (exit 0), a difference names the file (exit 1); exit 77 "
                         "(skipped) when the AIConfigurator folder is not there")
    a = ap.parse_args()
    if a.check:
        import filecmp
        import tempfile
        if not os.path.isdir(a.aic):
            print(f"distill_aic.py --check: {a.aic} not found: skipped")
            sys.exit(77)
        with tempfile.TemporaryDirectory() as tmp:
            args = [sys.executable, os.path.abspath(__file__), "--aic", a.aic, "--out", tmp]
            import subprocess
            if subprocess.run(args, stdout=subprocess.DEVNULL).returncode != 0:
                sys.exit("distill_aic.py --check: distilling failed")
            bad, n = [], 0
            for dirpath, _, files in os.walk(tmp):
                for f in files:
                    rel = os.path.relpath(os.path.join(dirpath, f), tmp)
                    n += 1
                    mine = os.path.join(a.out, rel)
                    if not os.path.isfile(mine) or not filecmp.cmp(os.path.join(tmp, rel), mine, shallow=False):
                        bad.append(rel)
            for rel in bad:
                print(f"bench_data/{rel}: differs from what the source rows give (re-run scripts/distill_aic.py)")
            print(f"distill_aic.py --check: {n - len(bad)} of {n} AIConfigurator tables reproduce their source rows")
            sys.exit(1 if bad else 0)
    total, log = 0, []
    for system, family in SYSTEMS.items():
        sysdir = os.path.join(a.aic, system)
        c = collectives(sysdir, log)
        total += write_csv(os.path.join(a.out, "comm", family, "collectives.csv"), *long_to_wide(c, 3, "us_at_"))
        if family != "gb200":
            for engine in GEMM_SOURCES:
                g = [r for r in gemm(sysdir, engine) if engine == "sglang" or r[0] != "bf16"]
                if g:
                    total += write_csv(os.path.join(a.out, "gemm", family, f"{engine}_cuda_graph.csv"), *gemm_wide(g))
        if system in ATTN_SOURCES:
            dec, pre = attention(sysdir, ATTN_SOURCES[system])
            for (h, kv, d) in ATTN_SHAPES:
                name = f"{h}-{kv}-{d}.csv"
                total += write_csv(os.path.join(a.out, "mha", "decode", family, name),
                                   *long_to_wide(dec[(h, kv, d)], 2, "us_at_", ["kv_dtype", "batch_size"]))
                total += write_csv(os.path.join(a.out, "mha", "prefill", family, name), ["seq_len", "latency_us"],
                                   pre[(h, kv, d)])
        if system in MOE_DEEPEP_SYSTEMS:
            for phase in MOE_DEEPEP_SOURCES:
                total += write_csv(os.path.join(a.out, "moe", family, f"sglang_deepep_{phase}.csv"),
                                   *moe_deepep(sysdir, phase, log))
        if system in MOE_ARCH:
            fused = moe(sysdir, MOE_ARCH[system], log)
            total += write_csv(os.path.join(a.out, "moe", family, "sglang.csv"), *moe_wide(fused))
            triton = moe(sysdir, MOE_ARCH[system], log, kernels=MOE_TRITON_KERNELS)
            if MOE_ARCH[system] == "blackwell":
                total += write_csv(os.path.join(a.out, "moe", family, "sglang_triton.csv"), *moe_wide(triton))
            elif sorted(triton) != sorted(r for r in fused if r[0] in ("bf16", "fp8")):
                # the core reads sglang.csv as Triton's where no sglang_triton.csv exists (core/step/ops_ffn.cpp)
                sys.exit(f"{system}: sglang.csv's bf16 / fp8 rows are not all Triton's: write a sglang_triton.csv")
            if MOE_ARCH[system] == "hopper":
                total += write_csv(os.path.join(a.out, "moe", family, "vllm_mxfp4.csv"),
                                   *moe_wide(moe(sysdir, "hopper", log, MOE_HOPPER_MXFP4_SOURCE, MOE_HOPPER_MXFP4_DTYPES)))
                total += write_csv(os.path.join(a.out, "moe", family, "trtllm_mxfp4.csv"),
                                   *moe_wide(moe(sysdir, "hopper", log, MOE_TRTLLM_SOURCE, kernels=MOE_TRTLLM_HOPPER_KERNELS)))
            data = moe(sysdir, MOE_ARCH[system], log, MOE_FLASHINFER_SOURCE, kernels=MOE_FLASHINFER_KERNELS)
            if data:  # B200's rows are shapes no preset has
                total += write_csv(os.path.join(a.out, "moe", family, "vllm_flashinfer_cutlass.csv"), *moe_wide(data))
            total += write_csv(os.path.join(a.out, "gdn", family, "sglang.csv"),
                               ["k_heads", "v_heads", "k_dim", "v_dim", "tokens", "conv_us", "core_us"], gdn(sysdir, log))
    for line in log:
        print(line)
    print(f"wrote {total} bytes")


if __name__ == "__main__":
    main()
