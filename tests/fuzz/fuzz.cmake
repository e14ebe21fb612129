# tests/fuzz/fuzz.cmake — libFuzzer targets over every input path of the core (issue 8). Included natively by the
# top CMakeLists.txt; does nothing unless MOE_FUZZ is ON, which needs clang (Debian: clang + libclang-rt-14-dev).
#
#   CXX=clang++ cmake -S . -B build-fuzz -DMOE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
#   cmake --build build-fuzz -j2 --target moe_fuzz         # the five targets below
#   build-fuzz/fuzz/fuzz_scenario -dict=tests/fuzz/scenario.dict tests/fuzz/corpus/scenario
# (scripts/fuzz.sh and scripts/sanitize.sh build them in build-asan/, with MOE_SANITIZE too: one instrumented core for
# the sanitizer tests and the fuzz targets, scripts/asan_config.sh)
#
# Targets (<build>/fuzz/): fuzz_scenario (scenario JSON + --set overrides -> estimate), fuzz_hf_config (HF
# config.json -> estimate), fuzz_fragment (the page's #s= link codec), fuzz_csv (bench_data CSV loader + lookups),
# fuzz_plan (a plan request and its --space file through the streaming planner: PlanEnumerator, PlanFront).
# With MOE_FUZZ the core itself is built with -fsanitize=fuzzer-no-link,address,undefined (coverage for the mutator,
# ASan + UBSan for findings). ctest gets one fuzz_<target>_replay test per target: every file of
# tests/fuzz/corpus/<target>/ (the seeds and every past crash) run once.
option(MOE_FUZZ "Build the libFuzzer targets of tests/fuzz (clang only)" OFF)
if(NOT MOE_FUZZ OR EMSCRIPTEN)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "MOE_FUZZ needs clang: configure with CXX=clang++ (libFuzzer is part of clang)")
endif()

set(_moe_fuzz_flags -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
target_compile_options(moe_core PRIVATE ${_moe_fuzz_flags})
# Everything else that links the core in this build directory (unit tests, CLI) gets the sanitizer runtimes.
target_link_options(moe_core INTERFACE -fsanitize=address,undefined)

add_custom_target(moe_fuzz)
foreach(_target scenario hf_config fragment csv plan)
  add_executable(fuzz_${_target} "${CMAKE_CURRENT_LIST_DIR}/fuzz_${_target}.cpp")
  target_link_libraries(fuzz_${_target} PRIVATE moe_core)
  target_compile_options(fuzz_${_target} PRIVATE ${_moe_fuzz_flags})
  target_link_options(fuzz_${_target} PRIVATE -fsanitize=fuzzer,address,undefined)
  set_target_properties(fuzz_${_target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/fuzz")
  moe_warnings(fuzz_${_target})
  add_dependencies(moe_fuzz fuzz_${_target})

  file(GLOB _seeds CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/corpus/${_target}/*")
  if(_seeds)
    add_test(NAME fuzz_${_target}_replay COMMAND fuzz_${_target} ${_seeds})
    set_tests_properties(fuzz_${_target}_replay PROPERTIES LABELS fuzz TIMEOUT 300)
  endif()
endforeach()
