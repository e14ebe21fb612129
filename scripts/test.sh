#!/usr/bin/env bash
# Runs every test of MoE Roofline from a fresh clone: installs what is missing (scripts/setup.sh), builds native
# (build-native/) and web (build-web/), then runs the native ctest (unit + CLI tests), the same native tests under
# ASan + UBSan (scripts/sanitize.sh), each fuzz target briefly (scripts/fuzz.sh; FUZZ_SECONDS per target, 12 by
# default, JOBS targets at a time), the web ctest (the same unit tests as wasm under node, the core module under node,
# the browser end-to-end tests in Chromium; JOBS tests at a time).
# Budget: under 15 minutes on 2 idle cores (README, "Two commands", has the stage times).
# Every stage runs even if an earlier one failed; the exit status is non-zero if anything failed.
#   bash scripts/test.sh            (JOBS=2 by default)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${JOBS:-2}
export NODE_PATH=/usr/share/nodejs   # emcc's acorn (TOOLCHAIN quirk 1)
export CTEST_OUTPUT_ON_FAILURE=1

failed=()
summary=()
mkdir -p build-logs
stage() {  # stage NAME COMMAND...: runs, times and records one step (its output also in build-logs/, for the summary)
  local name=$1; shift
  local t0=$SECONDS log
  log=build-logs/$(printf '%02d' ${#summary[@]}).log
  echo "==> $name"
  if "$@" 2>&1 | tee "$log"; (( PIPESTATUS[0] == 0 )); then summary+=("ok    $(printf '%4ds' $((SECONDS - t0)))  $name")
  else summary+=("FAIL  $(printf '%4ds' $((SECONDS - t0)))  $name"); failed+=("$name"); failed_logs+=("$log"); fi
}
failed_logs=()

stage "setup" bash scripts/setup.sh || true
if ((${#failed[@]})); then echo "setup failed: nothing else can run" >&2; exit 1; fi

# -DMOE_WERROR=ON: our own targets must stay warning-free (Dear ImGui's warnings are not ours).
# -DMOE_UNITY_TESTS=ON: the unit tests compiled a few files per translation unit (natively and as wasm: 116 -> 29 CPU s
# for the wasm build of them); -DMOE_TESTS_O0=ON natively: the unit-test programs at -O0 (a third less to compile, 2 s
# more to run). The core, the CLI, the page and the core module keep their flags (CMakeLists.txt, at the end).
stage "native: configure" cmake -S . -B build-native -DCMAKE_BUILD_TYPE=Release -DMOE_WERROR=ON -DMOE_TESTS_O0=ON \
  -DMOE_UNITY_TESTS=ON --log-level=WARNING
stage "native: build" cmake --build build-native -j"$jobs"
# (FULL=1 also runs the `slow` label: the serving set's leave-one-family-out fit, ~15 minutes)
slow=(-LE slow); [[ -n ${FULL:-} ]] && slow=()
stage "native: ctest" ctest --test-dir build-native -j"$jobs" "${slow[@]}"

# Issue 8: the same native tests under ASan + UBSan (build-asan/), then each libFuzzer target for 12 s (built in
# build-asan/ by the sanitizer stage, against the same instrumented core: scripts/asan_config.sh).
stage "sanitizers: ASan + UBSan build and ctest" bash scripts/sanitize.sh
# A fixed seed: CI repeats exploration checked before it landed (scripts/fuzz.sh without SEED explores anew).
stage "fuzz: 5 targets x 12 s" env SECONDS_PER_TARGET="${FUZZ_SECONDS:-12}" SEED="${FUZZ_SEED:-20261126}" bash scripts/fuzz.sh

# (the wasm unit tests stay at the build type's -Os: at -O0, or linked without -Os, they run ~1.7x longer under node)
stage "web: configure" emcmake cmake -S . -B build-web -DMOE_CLI="$root/build-native/moe-roofline" -DMOE_WERROR=ON \
  -DMOE_UNITY_TESTS=ON --log-level=WARNING
stage "web: build" cmake --build build-web -j"$jobs"
stage "web: ctest (wasm unit tests, core module, browser)" ctest --test-dir build-web -j"$jobs"

echo
echo "==> summary"
printf '  %s\n' "${summary[@]}"
if ((${#failed[@]})); then
  # the end of each failed stage's output again, where a CI log's tail shows it
  for f in "${failed_logs[@]}"; do echo; echo "==> end of $f"; tail -n 40 "$f"; done
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "all tests passed (screenshots in build-web/screenshots/)"
