#!/usr/bin/env bash
# serving_layouts.sh — the serving set's layouts and repeats as moe-validate reads them (native/serving_runs.cpp,
# agg_layout() and the repeat pass), each against the launch its id or its twin names:
#   bash tests/validation/serving_layouts.sh build-native/moe-validate
set -u
bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
# parallel ID: the scenario's parallel block of run ID as "tp dp ep" (1 where the dump leaves the default)
parallel() {
    "$bin" --serving --dump "$1" 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin).get("parallel", {})
print(p.get("tp", 1), p.get("dp", 1), p.get("ep", 1))'
}
# check FN ID WANT: FN's line for run ID is WANT
check() {
    local got
    got=$("$1" "$2") || fail "$2: no scenario"
    [[ $got == "$3" ]] || fail "$2: '$got', expected '$3'"
}
# check_each FN "ID|WANT"...: check each pair
check_each() {
    local fn=$1 pair
    shift
    for pair in "$@"; do check "$fn" "${pair%%|*}" "${pair#*|}"; done
}
expect() {  # expect ID "tp dp ep" WHY
    local got
    got=$(parallel "$1") || fail "$1: no scenario"
    [[ $got == "$2" ]] || fail "$1: parallel $got, expected $2 ($3)"
}
# The 2026-03-25 export writes Qwen3.5 on B200, TP 4 EP 4, as its id says: tp 4, ep 4 (4 GPUs), taken as written.
expect 2026_03_25_qwen3_5_397b_b200_sxm_sglang_fp8_agg_1024x1024_c32_tp4_0_ep4_0_342 "4 1 4" "columns that agree with the id"
# The 2026-04-06 export writes gpt-oss on H200, TP 2 EP 2, as tp_size 4, moe_tp 2, ep 2: the id's launch, 2 GPUs.
expect 2026_04_06_gpt_oss_120b_h200_sxm_trtllm_fp4_agg_8192x1024_c16_tp2_ep2_927 "2 1 2" "the id's TP and EP"
# The database dump: SGLang without attention DP, tp_size 4 = moe_tp 2 x ep 2 -> 2 GPUs, TP 2, EP 2.
expect qwen3_5_b300_sglang_fp4_agg_1024x1024_c64_cfg736 "2 1 2" "the dump's scaling reversed (moe_tp_size GPUs)"
# The database dump: vLLM with attention DP 4, ep 16 -> 4 GPUs, attention DP 4, EP 4.
expect minimaxm2_5_b300_vllm_fp8_agg_1024x1024_c512_cfg734 "1 4 4" "the dump's scaling reversed (ep / attention DP)"
# One measurement in four sources (1040.04 ms / 30.10 ms): the dump and the later export are repeats, not runs.
for id in qwen3_5_b200_sglang_fp8_agg_1024x1024_c128_cfg615 2026_04_06_qwen3_5_397b_b200_sxm_sglang_fp8_agg_1024x1024_c128_tp4_ep4_1965; do
    "$bin" --serving --dump "$id" 2>&1 >/dev/null | grep -q "a repeat of another source's measurement" || fail "$id: not a repeat"
done
# and the 2026-03-25 export's copy is the one evaluated, with its id's layout
expect 2026_03_25_qwen3_5_397b_b200_sxm_sglang_fp8_agg_1024x1024_c128_tp4_0_ep4_0_351 "4 1 4" "the kept copy"
# InferenceMAX's disaggregated runs as their recipes launched them (native/serving_recipes.cpp, inferencemax_disagg_recipe;
# NVIDIA/srt-slurm recipes/vllm/kimi-k2.5/1k1k/disagg-gb200-1p1d-dep4-dep16.yaml and -1p4d-dep4-tep4.yaml,
# recipes/kimi2.5/trtllm_dynamo/disagg/gb200Nvfp4/...): the prefill worker dep4 (data-parallel-size 4) taking 16,384
# tokens per forward and rank (16 prompts of 1k, 2 of 8k); vLLM's one decode worker dep16, its batch of 1,024 per
# worker 64 per rank (the default: "-"); its four decode workers tep4 as recorded; each decode worker's slots the
# recipe's (TensorRT-LLM max_batch_size 8 / 32, vLLM max-num-seqs 1024 / 16), not the concurrency over the workers;
# an FP8 KV cache. As "prefill tp dp batch | decode tp dp batch workers | kv".
pools() {
    "$bin" --serving --dump "$1" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin); s = d["serving"]; p, q = s["prefill"], s["decode"]
g = lambda x, k: x.get("parallel", {}).get(k, 1)
print(g(p, "tp"), g(p, "dp"), p.get("batch", "-"), "|", g(q, "tp"), g(q, "dp"), q.get("batch", "-"), q.get("workers", 1), "|",
      d.get("precision", {}).get("kv_cache", "-"))'
}
check_each pools "kimik2_5_gb200_vllm_fp4_disagg_1024x1024_c1024_cfg697|1 4 16 | 1 16 - 1 | fp8" \
                 "kimik2_5_gb200_vllm_fp4_disagg_1024x1024_c32_cfg698|1 4 16 | 4 1 1024 4 | fp8" \
                 "kimik2_5_gb200_vllm_fp4_disagg_8192x1024_c128_cfg698|1 4 2 | 4 1 16 4 | fp8" \
                 "kimik2_5_gb200_trtllm_fp4_disagg_1024x1024_c55_cfg763|1 4 16 | 4 1 8 5 | fp8" \
                 "kimik2_5_gb200_trtllm_fp4_disagg_8192x1024_c156_cfg760|1 4 2 | 4 1 32 4 | fp8"
# The KV cache InferenceMAX's aggregated recipes launch with (native/serving_recipes.cpp, kFp8KvRecipes): SGLang's
# Qwen3.5 FP8 on B200 --kv-cache-dtype fp8_e4m3 (qwen3.5_fp8_b200.sh), its BF16 run the model's dtype; TensorRT-LLM's
# gpt-oss on H200 kv dtype auto (gptoss_fp4_h200_trt.sh), on B200 fp8.
kv() { "$bin" --serving --dump "$1" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin).get("precision", {}).get("kv_cache", "-"))'; }
check_each kv "2026_03_25_qwen3_5_397b_b200_sxm_sglang_fp8_agg_1024x1024_c4_tp8_0_ep1_0_347|fp8" \
              "2026_03_25_qwen3_5_397b_b200_sxm_sglang_bf16_agg_1024x1024_c4_tp8_0_ep1_0_631|-" \
              "2026_04_06_gpt_oss_120b_h200_sxm_trtllm_fp4_agg_1024x1024_c4_tp2_ep1_315|-" \
              "2026_03_25_gpt_oss_120b_b200_sxm_trtllm_fp4_agg_1024x1024_c4_tp4_0_ep1_0_1012|fp8"
# The benchmark's length: InferenceMAX's sa-bench sends 10 x CONC prompts (the default, "-"); GLM-5's H200 script ran
# its own client with 5 x CONC (glm5_fp8_h200.sh@0c82808).
rpc() { "$bin" --serving --dump "$1" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["serving"].get("requests_per_client", "-"))'; }
check_each rpc "2026_03_25_glm_5_h200_sxm_sglang_fp8_agg_1024x1024_c4_tp8_0_ep1_0_500|5" \
               "2026_03_25_qwen3_5_397b_b200_sxm_sglang_fp8_agg_1024x1024_c4_tp8_0_ep1_0_347|-"
# The checkpoint and formats a run served, as "preset weights fp8_scaling" ("-": left to the checkpoint's config).
# FP8 scaling: AIConfigurator's gemm_quant_mode fp8 is its per-tensor kernel; InferenceMAX's "fp8" names the
# checkpoint, whose own scaling the run served (ModelMap::fp8_block: MiniMax-M2.5's config, weight_block_size [128, 128];
# else the preset's own, which is per tensor for Llama's ModelOpt FP8). The checkpoint (kServed): gpt-oss "fp4" is
# openai/gpt-oss-120b itself and Kimi-K2.5 "int4" moonshotai/Kimi-K2.5 itself, their formats the config's (MXFP4 /
# INT4 experts, BF16 attention); the other "fp4" runs are NVIDIA's NVFP4 checkpoints; an FP8 run keeps the CSV's
# format for every linear layer.
served() { "$bin" --serving --dump "$1" 2>/dev/null | python3 -c 'import json, sys; d = json.load(sys.stdin); p = d.get("precision", {}); print(d["model"], p.get("weights", "-"), p.get("fp8_scaling", "-"))'; }
check_each served "minimaxm2_5_b200_vllm_fp8_agg_8192x1024_c32_cfg634|minimax-m2.5 fp8 block" \
                  "2026_04_06_llama_3_1_70b_b200_sxm_trtllm_fp8_agg_1024x8192_c4_tp4_ep1_266|llama-3.1-70b fp8 -" \
                  "qwen3_32b_qwen3_32b_h100_sxm_sglang_disagg_4000x1000_c_tpnone_epnone_1|qwen3-32b fp8 block" \
                  "2026_03_25_gpt_oss_120b_b200_sxm_trtllm_fp4_agg_1024x1024_c4_tp4_0_ep1_0_1012|gpt-oss-120b - -" \
                  "2026_03_25_kimi_k2_5_h200_sxm_vllm_int4_agg_1024x1024_c4_tp8_0_ep1_0_599|kimi-k2.5 - -" \
                  "kimik2_5_b200_vllm_fp4_agg_1024x1024_c4_cfg636|kimi-k2.5-nvfp4 - -" \
                  "minimaxm2_5_b300_vllm_fp4_agg_8192x1024_c4_cfg730|minimax-m2.5-nvfp4 - -"
# Expert parallelism a recipe turns on (native/serving_recipes.cpp, inferencemax_recipe_ep): vLLM's MiniMax-M2.5 FP8 on
# H200 at TP 8 passes --enable-expert-parallel whenever EP_SIZE >= 1 (minimaxm2.5_fp8_h200.sh from PR #869,
# whn09/InferenceX@53605e0): EP 8 though its id says ep1; its TP 4 runs (before that PR) and the same model's B300
# dump rows keep the EP their columns give.
expect 2026_03_25_minimax_m2_5_h200_sxm_vllm_fp8_agg_1024x1024_c32_tp8_0_ep1_0_216 "8 1 8" "the H200 script's -ge 1 EP flag"
expect 2026_04_06_minimax_m2_5_h200_sxm_vllm_fp8_agg_1024x1024_c4_tp4_ep1_1857 "4 1 1" "the script before PR #869"
# Speculative drafts a recipe launches (inferencemax_mtp_recipe): SGLang's Qwen3.5 FP8 from the image
# lmsysorg/sglang:v0.5.9-cu130 ran qwen3.5_fp8_b200_mtp.sh (EAGLE on the MTP layer, 3 steps, top-k 1), its -amd64 build
# the plain recipe; as "method drafts" ("-": none; the dump leaves the default method, mtp, out).
spec() { "$bin" --serving --dump "$1" 2>/dev/null | python3 -c 'import json, sys; p = json.load(sys.stdin).get("runtime", {}).get("speculative"); print(p.get("method", "mtp"), p.get("draft_tokens", 0)) if p else print("-")'; }
check_each spec "2026_03_25_qwen3_5_397b_b200_sxm_sglang_fp8_agg_1024x1024_c4_tp4_0_ep1_0_463|mtp 3" \
                "2026_03_25_qwen3_5_397b_b300_sxm_sglang_fp8_agg_1024x1024_c4_tp4_0_ep1_0_18|mtp 3" \
                "2026_03_25_qwen3_5_397b_b200_sxm_sglang_fp8_agg_1024x1024_c4_tp8_0_ep1_0_347|-"
echo "serving layouts: 8 layouts, 5 disaggregated recipes, 4 KV caches, 2 client lengths, 3 draft settings, 2 repeats and 7 served checkpoints (3 FP8 scalings) as their launches name them"
