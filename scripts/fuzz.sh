#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan) in build-fuzz/ and runs each for a bounded time.
# A finding fails the script; its input is saved as tests/fuzz/corpus/<target>/crash-<sha1> — a regression input that
# ctest's fuzz_<target>_replay (and every later run of this script) replays, so commit it with the fix.
#   bash scripts/fuzz.sh                      # 30 s per target (what scripts/test.sh runs)
#   SECONDS_PER_TARGET=600 bash scripts/fuzz.sh scenario csv     # longer, only some targets
#   RUNS=1000000 bash scripts/fuzz.sh         # a fixed number of executions per target instead of a time
#   JOBS=2 (build parallelism)
#   SEED=1 bash scripts/fuzz.sh               # a fixed libFuzzer seed (scripts/test.sh sets one: CI repeats a run
#                                             # checked before; exploration without SEED draws a new one each time)
# The corpus grown during a run stays in build-fuzz/corpus/<target>/ (not committed): later runs start from it.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${JOBS:-2}
per_target=${SECONDS_PER_TARGET:-30}
runs=${RUNS:-}
targets=("$@")
((${#targets[@]})) || targets=(scenario hf_config fragment csv plan)

if ! command -v clang++ >/dev/null; then echo "fuzz: clang++ is missing (scripts/setup.sh installs it)" >&2; exit 1; fi
log=$root/build-fuzz/build.log
mkdir -p build-fuzz
if ! { CXX=clang++ cmake -S . -B build-fuzz -DMOE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" --log-level=WARNING &&
       cmake --build build-fuzz -j"$jobs" --target moe_fuzz; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "fuzz: build failed" >&2
  exit 1
fi

status=0
for t in "${targets[@]}"; do
  bin=build-fuzz/fuzz/fuzz_$t
  seeds=tests/fuzz/corpus/$t
  work=build-fuzz/corpus/$t
  [[ -x $bin && -d $seeds ]] || { echo "fuzz: no target '$t'" >&2; status=1; continue; }
  mkdir -p "$work"
  dict=(); [[ -f tests/fuzz/$t.dict ]] && dict=(-dict="tests/fuzz/$t.dict")
  budget=(-max_total_time="$per_target"); [[ -n $runs ]] && budget=(-runs="$runs")
  [[ -n ${SEED:-} ]] && budget+=(-seed="$SEED")
  out=build-fuzz/fuzz_$t.log
  t0=$(date +%s.%N)
  # -rss_limit_mb: every input is small, a few hundred MB means a leak or a blow-up; -timeout: a hang is a finding.
  "$bin" "${dict[@]}" "${budget[@]}" -max_len=8192 -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="$seeds/" "$work" "$seeds" >"$out" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out" | grep -o '[0-9]*$' | tail -1)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  rate=$(awk -v n="${execs:-0}" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')
  if ((rc == 0)); then
    printf 'fuzz %-10s ok    %10s executions in %6s s (%s exec/s), corpus %s inputs\n' "$t" "${execs:-?}" "$secs" "$rate" \
      "$(ls "$work" | wc -l)"
  else
    status=1
    printf 'fuzz %-10s FOUND a problem after %s executions (%s s); log: %s\n' "$t" "${execs:-?}" "$secs" "$out" >&2
    grep -E 'FUZZ FINDING|ERROR: |runtime error|SUMMARY|Test unit written|Running:|seed' "$out" | head -12 >&2
    # the finding's input, on the output too (a CI log is all that comes back from a clean machine)
    for f in $(grep -o "Test unit written to [^ ]*" "$out" | awk '{print $NF}'); do
      [[ -f $f ]] && { echo "fuzz: input $f (base64):"; head -c 4096 "$f" | base64 -w0; echo; } >&2
    done
  fi
done
exit $status
