#!/usr/bin/env bash
# Builds the core, the CLI and every native test with AddressSanitizer + UndefinedBehaviorSanitizer (MOE_SANITIZE,
# -fno-sanitize-recover=all: the first finding fails its test) in build-asan/, and runs the whole native ctest there:
# unit tests, CLI tests, validation (not the benchmarks: their smoke runs are native only). clang when it is
# installed (about 3x faster to build with sanitizers than GCC here), else the default compiler.
#   bash scripts/sanitize.sh                 (JOBS=2 by default)
#   ctest --test-dir build-asan -R cli_      (afterwards: one group again)
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
# A report names the bug's file and line; leaks are findings too; a UBSan report aborts with a stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export CTEST_OUTPUT_ON_FAILURE=1

# build-asan/ is scripts/fuzz.sh's build too (scripts/asan_config.sh): with clang the fuzz targets are built here,
# against the same instrumented core, and fuzz.sh finds them built.
source scripts/asan_config.sh
log=$asan_build_dir/build.log
mkdir -p "$asan_build_dir"
if ! { asan_configure && cmake --build "$asan_build_dir" -j"$jobs"; } >"$log" 2>&1; then
  tail -40 "$log" >&2
  echo "sanitize: build failed (log: $log)" >&2
  exit 1
fi
# Natively only (their code paths run under ASan through the other tests of their group): the calibration round trip
# (about 60 s under ASan: a fit of 181 runs plus a 5-fold refit; cli_calibrate_errors and cli_calibrate_engines run
# here), the two longest planner cases (about 30 s each under ASan: a 64-GPU DeepSeek-V3 serving plan twice, and a
# space-size refusal after a 100-batch plan; cli_plan_front_sla, cli_plan_serving_disaggregated and the other plan
# cases run here), every HF config of the model catalogue through the CLI (43 s under ASan: the config parser runs
# here through the unit tests and the hf_config fuzz target, and the CLI's eval path through the other CLI tests), the
# serving set's 2,204 simulations (31 s: the simulation runs here through the unit tests, the runs loader and the fit
# through cli_calibrate_errors / cli_calibrate_engines and validation_serving_layouts), and the Python source checks (bench_data_distill, docs_test_citations).
# Not the fuzz_*_replay tests either: scripts/fuzz.sh runs every seed and past crash first, then fuzzes.
ctest --test-dir "$asan_build_dir" -j"$jobs" -LE 'slow|fuzz' \
  -E '^(cli_calibrate_roundtrip|cli_plan_default_ttft|cli_plan_large_space|cli_model_configs|validation_serving|bench_data_distill|docs_test_citations)$'
