# deps.cmake — third-party libraries, all from Debian packages (scripts/setup.sh installs them).
#
# Defines the usual imported targets: nlohmann_json::nlohmann_json, doctest::doctest, and natively also
# CLI11::CLI11 and benchmark::benchmark when found (MOE_HAVE_CLI11, MOE_HAVE_BENCHMARK).
# Under emcmake, find_package() finds nothing and /usr/include must never be on a wasm include path (glibc headers
# would shadow Emscripten's libc, TOOLCHAIN quirk 6): only the two header-only directories are symlinked into the
# build tree and wrapped as INTERFACE targets.

if(EMSCRIPTEN)
  set(_moe_sysinc "${CMAKE_BINARY_DIR}/sysinc")
  file(MAKE_DIRECTORY "${_moe_sysinc}")
  foreach(dir nlohmann doctest)
    if(NOT EXISTS "/usr/include/${dir}")
      message(FATAL_ERROR "/usr/include/${dir} is missing: run scripts/setup.sh")
    endif()
    if(NOT EXISTS "${_moe_sysinc}/${dir}")
      file(CREATE_LINK "/usr/include/${dir}" "${_moe_sysinc}/${dir}" SYMBOLIC)
    endif()
  endforeach()
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  set_target_properties(nlohmann_json::nlohmann_json PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_moe_sysinc}")
  add_library(doctest::doctest INTERFACE IMPORTED)
  set_target_properties(doctest::doctest PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_moe_sysinc}")
  set(MOE_HAVE_CLI11 OFF)
  set(MOE_HAVE_BENCHMARK OFF)
else()
  find_package(nlohmann_json 3.11 REQUIRED)
  find_package(doctest REQUIRED)
  find_package(CLI11 CONFIG QUIET)
  set(MOE_HAVE_CLI11 ${CLI11_FOUND})
  find_package(benchmark QUIET)
  set(MOE_HAVE_BENCHMARK ${benchmark_FOUND})
endif()
