# pch.cmake — precompiled headers for the targets with many translation units (the test-time budget, README).
#
#   moe_pch(<target>)             # nlohmann/json and the std headers most of our files include, parsed once per
#                                 # target instead of once per file; PRIVATE, so each target builds its own with its
#                                 # own flags (a sanitizer or fuzzing flag on one target never meets another's)
#   moe_pch(<target> DOCTEST)     # the same and doctest (the unit-test executables; their main.cpp, the doctest
#                                 # runner, is compiled without it: DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN must come
#                                 # before doctest.h's first inclusion)
#
# -DMOE_PCH=OFF builds without them (a file that forgot an #include of its own then fails to compile: the PCH
# includes <map>, <cmath>, ... in every file of the target).
option(MOE_PCH "Precompile nlohmann/json, doctest and common std headers (faster builds)" ON)

set(MOE_PCH_HEADERS
  <nlohmann/json.hpp> <algorithm> <cmath> <cstdint> <cstdio> <cstdlib> <cstring> <map> <string> <string_view>
  <vector>)

function(moe_pch target)
  if(NOT MOE_PCH)
    return()
  endif()
  cmake_parse_arguments(_pch "DOCTEST" "" "" ${ARGN})
  set(_headers ${MOE_PCH_HEADERS})
  if(_pch_DOCTEST)
    list(APPEND _headers <doctest/doctest.h>)
    get_target_property(_sources ${target} SOURCES)
    foreach(_src IN LISTS _sources)
      if(_src MATCHES "/tests/unit/main\\.cpp$")
        set_source_files_properties("${_src}" TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endforeach()
  endif()
  target_precompile_headers(${target} PRIVATE ${_headers})
endfunction()
