#!/usr/bin/env bash
# bench_presets.sh [BUILD_DIR] — one estimate() on every preset scenario (bench/bench_estimate.cpp,
# BM_EstimatePreset/<id>: 64 batch / context variants each), pinned to one core: each preset's median time over 5
# repetitions, then the median over the presets (issue 13's "<= 1 us median on the preset scenarios").
set -euo pipefail
build=${1:-build-native}
bin="$build/bench/bench_estimate"
[ -x "$bin" ] || { echo "bench_presets.sh: $bin not built (cmake --build $build)" >&2; exit 1; }
pin=()
command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ] && pin=(taskset -c 1)
"${pin[@]}" "$bin" --benchmark_filter='BM_EstimatePreset/' --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true --benchmark_time_unit=ns 2>/dev/null |
awk '/_median/ {
        name = $1; sub(/^BM_EstimatePreset\//, "", name); sub(/_median$/, "", name)
        printf "%-36s %7.0f ns\n", name, $2; t[++n] = $2
     }
     END {
        if (n == 0) { print "no results" > "/dev/stderr"; exit 1 }
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
        m = (n % 2) ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2
        over = 0; for (i = 1; i <= n; i++) if (t[i] > 1000) over++
        printf "median over %d presets: %.0f ns (target 1000 ns); slowest %.0f ns; %d of %d above 1000 ns\n", n, m, t[n], over, n
     }'
