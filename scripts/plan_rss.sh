#!/usr/bin/env bash
# plan_rss.sh [BIN] — peak RSS of `moe-roofline plan` against the number of points searched (issue 27: the plan keeps
# the front and the counts, not the points, and `--all` streams its rows).
#
#   bash scripts/plan_rss.sh build/moe-roofline                 # front only, 10^4 .. 10^7 points
#   ALL_UP_TO=7 bash scripts/plan_rss.sh build/moe-roofline     # also --all up to 10^7 (default 10^6; ~5 min at 10^7)
#   SIZES="4 5" THREADS=2 bash scripts/plan_rss.sh BIN          # fewer sizes, more threads
#
# The space: DeepSeek-V3 on 8 H200 with the serving layer (2K in / 1K out), aggregated and disaggregated: 720 points
# per decode batch, so a --space of B batches (1..B) gives 720·B points: 14, 139, 1389, 13889 batches for about
# 10^4 .. 10^7. Output to /dev/null; wall time and peak RSS from /usr/bin/time -v. Prints a Markdown table.
set -euo pipefail
bin=${1:-build/moe-roofline}
sizes=${SIZES:-"4 5 6 7"}
all_up_to=${ALL_UP_TO:-6}
threads=${THREADS:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo '{"model":"deepseek-v3","hardware":"h200","serving":{"mode":"aggregated","isl":2048,"osl":1024}}' >"$work/scenario.json"
declare -A batches=([4]=14 [5]=139 [6]=1389 [7]=13889)

measure() {  # measure LABEL ARGS...: one row
    local label=$1
    shift
    /usr/bin/time -v "$bin" plan "$work/scenario.json" --gpus 8 --threads "$threads" --format csv "$@" \
        >/dev/null 2>"$work/time.txt" || { cat "$work/time.txt" >&2; exit 1; }
    local points wall rss
    points=$(grep -o 'of [0-9]* searched' "$work/time.txt" | tr -dc 0-9)
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$work/time.txt")
    printf '| %s | %s | %s | %s MB |\n' "$label" "$(echo "$points" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')" "$wall" "$rss"
}

echo "| run | points | wall time | peak RSS |"
echo "|---|---:|---:|---:|"
for e in $sizes; do
    b=${batches[$e]}
    python3 -c "import json,sys; json.dump({'batch': list(range(1, int(sys.argv[1]) + 1))}, open(sys.argv[2], 'w'))" "$b" "$work/space.json"
    measure "front, 10^$e" --space "$work/space.json"
    if ((e <= all_up_to)); then measure "--all, 10^$e" --space "$work/space.json" --all; fi
done
