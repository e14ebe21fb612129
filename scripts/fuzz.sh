#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan) in build-asan/ (scripts/asan_config.sh: the
# sanitizer build's directory and core; after scripts/sanitize.sh they are built already) and runs each for a bounded time,
# JOBS targets at a time (each libFuzzer process uses one core; its budget is its own, so two at once on 2 cores
# explore as much as one after the other, in half the time).
# A finding fails the script; its input is saved as tests/fuzz/corpus/<target>/crash-<sha1> — a regression input that
# ctest's fuzz_<target>_replay (and every later run of this script) replays, so commit it with the fix.
#   bash scripts/fuzz.sh                      # 30 s per target (scripts/test.sh: 12 s and a fixed SEED)
#   SECONDS_PER_TARGET=600 bash scripts/fuzz.sh scenario csv     # longer, only some targets
#   RUNS=1000000 bash scripts/fuzz.sh         # a fixed number of executions per target instead of a time
#   JOBS=2 (build parallelism, and how many targets fuzz at once)
#   SEED=1 bash scripts/fuzz.sh               # a fixed libFuzzer seed (scripts/test.sh sets one: CI repeats a run
#                                             # checked before; exploration without SEED draws a new one each time)
# The corpus grown during a run stays in build-asan/fuzz/corpus/<target>/ (not committed): later runs start from it.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${JOBS:-2}
per_target=${SECONDS_PER_TARGET:-30}
runs=${RUNS:-}
targets=("$@")
((${#targets[@]})) || targets=(scenario hf_config fragment csv plan)

if ! command -v clang++ >/dev/null; then echo "fuzz: clang++ is missing (scripts/setup.sh installs it)" >&2; exit 1; fi
source scripts/asan_config.sh
out_dir=$asan_build_dir/fuzz   # the targets, and their logs, results and grown corpora
log=$root/$asan_build_dir/fuzz_build.log
mkdir -p "$out_dir"
# (only the fuzz targets and the core: the tests are scripts/sanitize.sh's)
if ! { asan_configure && cmake --build "$asan_build_dir" -j"$jobs" --target moe_fuzz; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "fuzz: build failed" >&2
  exit 1
fi

fuzz_one() {  # fuzz_one TARGET: runs it, writes its summary line to build-asan/fuzz/fuzz_TARGET.result; exit status 1 = finding
  local t=$1 bin=$out_dir/fuzz_$1 seeds=tests/fuzz/corpus/$1 work=$out_dir/corpus/$1
  local res=$out_dir/fuzz_$1.result out=$out_dir/fuzz_$1.log
  [[ -x $bin && -d $seeds ]] || { echo "fuzz: no target '$t'" >"$res"; return 1; }
  mkdir -p "$work"
  local dict=() budget=()
  [[ -f tests/fuzz/$t.dict ]] && dict=(-dict="tests/fuzz/$t.dict")
  budget=(-max_total_time="$per_target"); [[ -n $runs ]] && budget=(-runs="$runs")
  [[ -n ${SEED:-} ]] && budget+=(-seed="$SEED")
  local t0 t1 rc execs secs rate
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
      "$(ls "$work" | wc -l)" >"$res"
    return 0
  fi
  {
    printf 'fuzz %-10s FOUND a problem after %s executions (%s s); log: %s\n' "$t" "${execs:-?}" "$secs" "$out"
    grep -E 'FUZZ FINDING|ERROR: |runtime error|SUMMARY|Test unit written|Running:|seed' "$out" | head -12
    # the finding's input, on the output too (a CI log is all that comes back from a clean machine)
    for f in $(grep -o "Test unit written to [^ ]*" "$out" | awk '{print $NF}'); do
      [[ -f $f ]] && { echo "fuzz: input $f (base64):"; head -c 4096 "$f" | base64 -w0; echo; }
    done
  } >"$res"
  return 1
}

# JOBS targets at a time; the summaries are printed in the targets' order once all have finished.
for t in "${targets[@]}"; do
  rm -f "$out_dir/fuzz_$t.result" "$out_dir/fuzz_$t.rc"
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
  { fuzz_one "$t"; echo $? >"$out_dir/fuzz_$t.rc"; } &
done
wait
status=0
for t in "${targets[@]}"; do
  if [[ $(cat "$out_dir/fuzz_$t.rc" 2>/dev/null) == 0 ]]; then
    cat "$out_dir/fuzz_$t.result"
  else
    status=1
    cat "$out_dir/fuzz_$t.result" >&2 2>/dev/null || echo "fuzz: $t did not finish" >&2
  fi
done
exit $status
