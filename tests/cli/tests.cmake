# tests/cli/tests.cmake — the CLI's tests (included natively by the top CMakeLists.txt).
#
#   cli_values          doctest: the sweep VALUES grammar (native/values.cpp)
#   cli_<case>          tests/cli/cli_test.sh running the moe-roofline binary (one ctest entry per case; the cases
#                       live by section in cases_sweep.sh, cases_eval.sh, cases_plan.sh, cases_serving.sh)
if(NOT TARGET moe-roofline)
  return()
endif()

add_executable(cli_values_test "${CMAKE_CURRENT_LIST_DIR}/values_test.cpp")
target_link_libraries(cli_values_test PRIVATE moe_cli doctest::doctest)
moe_warnings(cli_values_test)
moe_sanitize(cli_values_test)
add_test(NAME cli_values COMMAND cli_values_test --no-colors)
set_tests_properties(cli_values PROPERTIES LABELS cli)

set(_moe_cli_cases
    grid default_columns determinism invalid_point bad_json unknown_path malformed_range unknown_column
    unreadable_scenario unwritable_output keeps_old_file interrupt progress eval_json eval_invalid eval_table
    url_roundtrip presets_dir presets help limits plan_front_sla plan_default_ttft plan_scale_out plan_serving_disaggregated sweep_scale_out plan_bad_flags serving number_overflow messages plan_large_space output_links_and_kills plan_hardware_objective serving_trace eval_mixed_lengths)
foreach(_case IN LISTS _moe_cli_cases)
  add_test(NAME cli_${_case}
           COMMAND bash "${CMAKE_CURRENT_LIST_DIR}/cli_test.sh" "$<TARGET_FILE:moe-roofline>" ${_case})
  set_tests_properties(cli_${_case} PROPERTIES LABELS cli TIMEOUT 120)
endforeach()

# issue 28: calibrate, --engines, the band outputs and plan --sla-at (the round trip fits ~180 runs: ~30 s)
foreach(_case IN ITEMS errors roundtrip engines)
  add_test(NAME cli_calibrate_${_case}
           COMMAND bash "${CMAKE_CURRENT_LIST_DIR}/calibrate_test.sh" "$<TARGET_FILE:moe-roofline>"
                   "${PROJECT_SOURCE_DIR}/tests/validation/serving_public.csv" ${_case})
  set_tests_properties(cli_calibrate_${_case} PROPERTIES LABELS cli TIMEOUT 300)
endforeach()

# Every model config that ships (issue 29): each AIConfigurator config.json (and its hf_quant_config.json) evaluates
# or is refused naming the missing mechanism; the shared anchors when beside the checkout, else the copy in tests/data.
find_program(MOE_PYTHON3 NAMES python3)
if(MOE_PYTHON3)
  add_test(NAME cli_model_configs
           COMMAND "${MOE_PYTHON3}" "${CMAKE_CURRENT_LIST_DIR}/model_configs_test.py" "$<TARGET_FILE:moe-roofline>"
                   "${MOE_SHARED_DIR}/anchors/aic/model_configs" "${PROJECT_SOURCE_DIR}/tests/data/model_configs"
                   "${PROJECT_SOURCE_DIR}/tests/data/model_configs/expected.json")
  set_tests_properties(cli_model_configs PROPERTIES LABELS cli TIMEOUT 300)
endif()
