#!/usr/bin/env bash
# sweep_bench.sh — how fast `moe-roofline sweep` streams a grid to CSV, on one core.
#
#   bash bench/sweep_bench.sh [path/to/moe-roofline]      (default: build-native/moe-roofline, else build-cli/)
#
# DeepSeek-V3 decode on H800 with DP-attention 128, swept over batch x context x EP: about 100k, 300k and 1M
# points (same batch and EP axes, more context values), each pinned to CPU 0 with taskset and measured with
# /usr/bin/time -v (wall time, peak RSS). Prints one table row per size, then whether time grows linearly
# (points/s within 15% across sizes). Then the 1M grid again on every core (--threads default, not pinned; its CSV
# checked byte-identical to the one-thread run), and `moe-roofline plan` for DeepSeek-V3 on 64 H200 (2K in / 1K out,
# TPOT <= 30 ms, the default space) on one thread and on every core. The CSV goes to a temporary directory.
# Not a test: it prints figures, and exits 0 unless a sweep fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-}
if [[ -z $bin ]]; then
  for candidate in "$root/build-native/moe-roofline" "$root/build-cli/moe-roofline"; do
    [[ -x $candidate ]] && { bin=$candidate; break; }
  done
fi
[[ -n $bin && -x $bin ]] || { echo "sweep_bench: build moe-roofline first (cmake --build build-native)" >&2; exit 1; }

[[ -x /usr/bin/time ]] || { echo "sweep_bench: needs GNU time for peak RSS: apt-get install time" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/dsv3.json" <<'EOF'
{"model":"deepseek-v3","hardware":"h800","parallel":{"dp":128,"ep":128},"workload":{"phase":"decode"}}
EOF

pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)

# contexts: 12, 37 or 122 values of 1024..; batch: 1..1024 (1024 values); ep: 1..128 (8 values)
declare -A contexts=([100k]="1024:12288:+1024" [300k]="1024:37888:+1024" [1M]="1024:124928:+1024")

printf '%-6s %10s %12s %14s %10s %12s\n' size points "wall s" "points/s" "RSS MB" "CSV MB"
rates=()
for size in 100k 300k 1M; do
  csv="$work/sweep-$size.csv"
  "${pin[@]}" /usr/bin/time -v -o "$work/time.txt" "$bin" sweep "$work/dsv3.json" \
    --axis parallel.ep=1:128:x2 --axis workload.context_len="${contexts[$size]}" --axis workload.batch=1:1024:+1 \
    -o "$csv" -q --threads 1
  points=$(($(wc -l <"$csv") - 1))
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$work/time.txt")
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  rate=$(awk -v p="$points" -v w="$wall" 'BEGIN {printf "%.0f", p / w}')
  rates+=("$rate")
  printf '%-6s %10d %12.2f %14s %10.1f %12.1f\n' "$size" "$points" "$wall" "$rate" "$(awk -v k="$rss_kb" 'BEGIN {print k/1024}')" \
    "$(awk -v b="$(stat -c %s "$csv")" 'BEGIN {print b/1e6}')"
  [[ $size == 1M ]] && mv "$csv" "$work/one-thread.csv" || rm -f "$csv"
done
awk -v a="${rates[0]}" -v b="${rates[2]}" 'BEGIN {
  r = b / a; printf "linearity: points/s at 1M / at 100k = %.2f (%s)\n", r, (r > 0.85 && r < 1.15) ? "linear" : "NOT linear" }'

seconds() { awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$1"; }
/usr/bin/time -v -o "$work/time.txt" "$bin" sweep "$work/dsv3.json" --axis parallel.ep=1:128:x2 \
  --axis workload.context_len="${contexts[1M]}" --axis workload.batch=1:1024:+1 -o "$work/all.csv" -q
same=$(cmp -s "$work/all.csv" "$work/one-thread.csv" && echo "byte-identical to --threads 1" || echo "DIFFERS from --threads 1")
printf '1M points on every core (%d threads): %.2f s, %s\n' "$(nproc)" "$(seconds "$work/time.txt")" "$same"
rm -f "$work/all.csv" "$work/one-thread.csv"

echo '{"model":"deepseek-v3","hardware":"h200","workload":{"prompt_len":2048,"output_len":1024}}' >"$work/plan.json"
for threads in 1 "$(nproc)"; do
  /usr/bin/time -v -o "$work/time.txt" "$bin" plan "$work/plan.json" --gpus 64 --tpot-ms 30 --format csv \
    --threads "$threads" >"$work/plan.csv" 2>"$work/plan.err"
  printf 'plan DeepSeek-V3 on 64 H200, TPOT <= 30 ms, %d thread(s): %.2f s; %s' "$threads" "$(seconds "$work/time.txt")" \
    "$(sed 's/^plan: //' "$work/plan.err")"
  echo
done
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); one core (taskset -c 0) unless stated"
