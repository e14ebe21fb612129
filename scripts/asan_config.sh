# asan_config.sh — sourced by scripts/sanitize.sh and scripts/fuzz.sh: configures their one build directory,
# build-asan/, so that the core is compiled (and instrumented) once for both.
#
#   source scripts/asan_config.sh && asan_configure     # (in the repository root) cmake -S . -B build-asan ...
#
# With clang (scripts/setup.sh installs it): ASan + UBSan (MOE_SANITIZE) and the libFuzzer targets (MOE_FUZZ), so
# the core also carries -fsanitize=fuzzer-no-link (coverage for the mutator): the tests under ASan run about a quarter
# more CPU for it (~50 s; the unit tests 30 -> 45 s), a separate fuzzing build cost ~150 CPU s (its own core). Without
# clang: ASan + UBSan with the default compiler, and no fuzz targets (scripts/fuzz.sh refuses).
# -O1 -gline-tables-only: stacks with files and lines (all a report prints; full -g, for a debugger, costs ~15% more
# build), and a build half the time of -O2 (the tests run in seconds either way). -DMOE_TESTS_O0=ON: the test programs
# themselves at -O0 (their time is spent in the core; the same checks, about a third of the build time of -O1).
# -DMOE_UNITY=ON: the core's files, and the unit tests', compiled a few per translation unit (the same code
# instrumented, in less build time).
asan_build_dir=build-asan

asan_configure() {
  local compiler=()
  command -v clang++ >/dev/null && compiler=(-DCMAKE_CXX_COMPILER=clang++ -DMOE_FUZZ=ON)
  cmake -S . -B "$asan_build_dir" "${compiler[@]}" -DMOE_SANITIZE=ON -DMOE_UNITY=ON -DMOE_TESTS_O0=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" --log-level=WARNING
}
