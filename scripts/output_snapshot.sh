#!/usr/bin/env bash
# output_snapshot.sh BIN DIR — writes the outputs a speed change must keep byte-identical into DIR: every preset's
# `eval` (JSON and table), serving evals, sweeps over batch x context x EP x KV format x overlap x phase, the md5 of
# bench/sweep_bench.sh's 1M-point CSV and `plan` CSV/JSON (with --all, threads, a shard). Take one with the old binary,
# one with the new, then: diff -r OLD_DIR NEW_DIR   (about 30 s per snapshot on this machine; ~1 GB of scratch avoided
# by hashing the big plan outputs).
set -uo pipefail
bin=$1; out=$2
mkdir -p "$out"; rm -f "$out"/*
ids=$("$bin" presets scenarios | awk 'NR>1 {print $1}' | grep -v '^$')
for id in $ids; do
  "$bin" eval "$id" --format json > "$out/eval-$id.json" 2>&1 || true
  "$bin" eval "$id" --format table > "$out/table-$id.txt" 2>&1 || true
done
# serving variants of a few presets
for id in deepseek-v3-decode-h800-ep128 gpt-oss-120b-h100 qwen3-30b-a3b-decode-h20-ep4 kimi-k2-decode-h200-ep16; do
  "$bin" eval "$id" --set serving.mode=aggregated --format json > "$out/serve-agg-$id.json" 2>&1 || true
  "$bin" eval "$id" --set serving.mode=disaggregated --format json > "$out/serve-dis-$id.json" 2>&1 || true
done
# sweeps: batch x context x EP x kv format x overlap, both phases
for id in $ids; do
  "$bin" sweep "$id" --axis workload.batch=1,3,17,64,200 --axis workload.context_len=512,4096,33000 \
     --axis precision.kv_cache=bf16,fp8 --axis runtime.two_batch_overlap=false,true -q -o "$out/sweep-$id.csv" 2>"$out/sweep-$id.err" || true
done
for id in deepseek-v3-decode-h800-ep128 deepseek-v3-prefill-h800-ep32 gpt-oss-120b-h100; do
  "$bin" sweep "$id" --axis parallel.ep=1,2,4,8,16,32,64,128 --axis workload.batch=1:300:+7 --axis workload.prefill_tokens=512,8192 \
     --axis workload.phase=both,decode,prefill -q -o "$out/sweepep-$id.csv" 2>"$out/sweepep-$id.err" || true
done
echo '{"model":"deepseek-v3","hardware":"h800","parallel":{"dp":128,"ep":128},"workload":{"phase":"decode"}}' > "$out/dsv3.json.in"
"$bin" sweep "$out/dsv3.json.in" --axis parallel.ep=1:128:x2 --axis workload.context_len=1024:124928:+1024 --axis workload.batch=1:1024:+1 -q --threads 1 -o - | md5sum > "$out/sweep1M.md5"
# plans
echo '{"model":"deepseek-v3","hardware":"h200","serving":{"mode":"aggregated","isl":2048,"osl":1024}}' > "$out/p1.json.in"
"$bin" plan "$out/p1.json.in" --gpus 64 --tpot-ms 30 --all --format csv 2>&1 | md5sum > "$out/plan-dsv3-serving.md5"
"$bin" plan "$out/p1.json.in" --gpus 64 --tpot-ms 30 --format csv > "$out/plan-dsv3-serving-front.csv" 2>&1 || true
echo '{"model":"deepseek-v3","hardware":"h200","workload":{"prompt_len":2048,"output_len":1024}}' > "$out/p2.json.in"
"$bin" plan "$out/p2.json.in" --gpus 64 --tpot-ms 30 --all --format csv 2>&1 | md5sum > "$out/plan-dsv3-step.md5"
echo '{"model":"qwen3-30b-a3b","hardware":"h200","serving":{"mode":"aggregated","isl":1024,"osl":512}}' > "$out/p3.json.in"
"$bin" plan "$out/p3.json.in" --gpus 16 --tpot-ms 20 --all --format csv 2>&1 | md5sum > "$out/plan-qwen-serving.md5"
"$bin" plan "$out/p3.json.in" --gpus 8 --ttft-ms 800 --format json > "$out/plan-qwen-serving.json" 2>&1 || true
echo '{"model":"gpt-oss-120b","hardware":"h100-sxm","runtime":{"engine":"vllm"},"serving":{"mode":"aggregated","isl":4096,"osl":1024}}' > "$out/p4.json.in"
"$bin" plan "$out/p4.json.in" --gpus 8 --tpot-ms 50 --engine vllm --all --format csv > "$out/plan-gptoss-vllm.csv" 2>&1 || true
# a plan with threads and shards
"$bin" plan "$out/p3.json.in" --gpus 16 --tpot-ms 20 --all --format csv --threads 2 --shard 2/3 2>&1 | md5sum > "$out/plan-qwen-shard.md5"
ls "$out" | wc -l
