# web.cmake — the Emscripten targets (included from CMakeLists.txt under emcmake).
#
#   site/index.html + index.js + index.wasm   the page (served by scripts/run.sh)
#   site/moe-roofline.html                     the same page in one file (wasm inlined), works from file://
#   node/moe-core.js + moe-core.wasm           the core as a module for node (createCore), from web/bindings.cpp
#   ctest: unit_wasm (CMakeLists.txt), core_module_node, browser_e2e, browser_serving, browser_plan, browser_layout

include(cmake/imgui.cmake)

set(MOE_SITE_DIR "${CMAKE_BINARY_DIR}/site")
set(MOE_NODE_DIR "${CMAKE_BINARY_DIR}/node")
set(MOE_CLI "${PROJECT_SOURCE_DIR}/build-native/moe-roofline"
    CACHE FILEPATH "The native moe-roofline the browser tests compare the page's numbers with")

# ---- the page's fonts: subsets of DejaVu Sans (Debian's fonts-dejavu-core, which Chromium's fontconfig pulls in),
# ~20 KB each instead of ~750 KB. Missing font files give empty arrays and the page uses ImGui's built-in font.
find_program(MOE_PYTHON3 NAMES python3 REQUIRED)
set(MOE_FONT_DIR "/usr/share/fonts/truetype/dejavu" CACHE PATH "Where DejaVuSans.ttf and DejaVuSans-Bold.ttf are")
set(_moe_fonts_cpp "${CMAKE_BINARY_DIR}/generated/web_fonts.cpp")
set(_moe_font_files "")
foreach(_f DejaVuSans.ttf DejaVuSans-Bold.ttf)
  if(EXISTS "${MOE_FONT_DIR}/${_f}")
    list(APPEND _moe_font_files "${MOE_FONT_DIR}/${_f}")
  else()
    message(WARNING "${MOE_FONT_DIR}/${_f} not found (apt-get install fonts-dejavu-core): the page falls back to ImGui's built-in font")
  endif()
endforeach()
add_custom_command(
  OUTPUT "${_moe_fonts_cpp}"
  COMMAND "${MOE_PYTHON3}" "${PROJECT_SOURCE_DIR}/web/tools/subset_font.py" "${_moe_fonts_cpp}"
          "font_regular=${MOE_FONT_DIR}/DejaVuSans.ttf" "font_bold=${MOE_FONT_DIR}/DejaVuSans-Bold.ttf"
  DEPENDS "${PROJECT_SOURCE_DIR}/web/tools/subset_font.py" ${_moe_font_files}
  COMMENT "Subsetting the page's fonts into ${_moe_fonts_cpp}"
  VERBATIM)

# ---- the page ------------------------------------------------------------------------------------------------
file(GLOB MOE_PAGE_SOURCES CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/web/*.cpp")
list(REMOVE_ITEM MOE_PAGE_SOURCES "${PROJECT_SOURCE_DIR}/web/bindings.cpp")
add_library(moe_page_objs OBJECT ${MOE_PAGE_SOURCES} "${_moe_fonts_cpp}")
target_link_libraries(moe_page_objs PUBLIC moe_core imgui)
moe_warnings(moe_page_objs)
moe_pch(moe_page_objs)

# The page's link: binaryen's -Os pipeline (-O2 at shrink level 1), stated here instead of by emcc's -Os, which would
# add meta-DCE and its call-count function order (11 KB more gzip of the code section, 8.7 KB of wasm + js;
# CMakeLists.txt, MOE_OWN_OPT_LEVEL). The extra passes come after emcc's -O2 on wasm-opt's line: binaryen 108 (Debian's,
# with Emscripten 3.1.6) applies the last shrink level to the whole pipeline; newer binaryens fix each -O's levels
# where it is read, so on another toolchain check the page's size (bench/page_bench.mjs) before trusting this line.
# Its inliner (the only one: emcc's -Os marks every function noinline for clang): a function with one caller is
# inlined there only up to 50 bytes (-ocimfs, default: any size; the panels inlined into frame() compressed worse), and
# a function of up to 4 bytes everywhere (-aimfs, default 2: the std and ImGui one-line accessors). Measured on binaryen
# 108 for this code: 6 and 3 KB less gzip (a plateau: 20-80 and 3-5 bytes do about as well). emscripten's small
# allocator (emmalloc) instead of dlmalloc: 2.4 KB less, the plan and the sweeps as fast (page_bench).
set(MOE_PAGE_LINK_OPTIONS
  -O2 -sBINARYEN_EXTRA_PASSES=--shrink-level=1,-ocimfs=50,-aimfs=4 -sMALLOC=emmalloc -sUSE_GLFW=3 -sMIN_WEBGL_VERSION=2 -sMAX_WEBGL_VERSION=2 -sALLOW_MEMORY_GROWTH=1 -sENVIRONMENT=web
  -sEXPORTED_FUNCTIONS=_main,_malloc,_free,_moe_page_bench_sweep -sMINIFY_HTML=0 -sFILESYSTEM=0
  "--shell-file=${PROJECT_SOURCE_DIR}/web/shell.html")

add_executable(moe_page)
target_link_libraries(moe_page PRIVATE moe_page_objs)
target_link_options(moe_page PRIVATE ${MOE_PAGE_LINK_OPTIONS})
set_target_properties(moe_page PROPERTIES OUTPUT_NAME index SUFFIX ".html" MOE_OWN_OPT_LEVEL ON
                      RUNTIME_OUTPUT_DIRECTORY "${MOE_SITE_DIR}" LINK_DEPENDS "${PROJECT_SOURCE_DIR}/web/shell.html")

add_executable(moe_page_single)
target_link_libraries(moe_page_single PRIVATE moe_page_objs)
target_link_options(moe_page_single PRIVATE ${MOE_PAGE_LINK_OPTIONS} -sSINGLE_FILE=1)
set_target_properties(moe_page_single PROPERTIES OUTPUT_NAME moe-roofline SUFFIX ".html" MOE_OWN_OPT_LEVEL ON
                      RUNTIME_OUTPUT_DIRECTORY "${MOE_SITE_DIR}" LINK_DEPENDS "${PROJECT_SOURCE_DIR}/web/shell.html")

# ---- the core module for node ----------------------------------------------------------------------------------
add_executable(moe_core_module "${PROJECT_SOURCE_DIR}/web/bindings.cpp")
target_link_libraries(moe_core_module PRIVATE moe_core)
moe_warnings(moe_core_module)
target_link_options(moe_core_module PRIVATE
  -Os -sMODULARIZE=1 -sEXPORT_NAME=createCore -sENVIRONMENT=web,node -sALLOW_MEMORY_GROWTH=1
  -sEXPORTED_FUNCTIONS=_moe_eval,_moe_eval_flat,_moe_url_decode,_moe_url_encode,_moe_scenario_compact,_moe_presets,_malloc,_free
  -sEXPORTED_RUNTIME_METHODS=ccall,cwrap,UTF8ToString)
set_target_properties(moe_core_module PROPERTIES OUTPUT_NAME moe-core RUNTIME_OUTPUT_DIRECTORY "${MOE_NODE_DIR}")

# ---- tests: the core module under node, and the page in Chromium ---------------------------------------------
# The browser tests are independent (each its own Chromium, its own http.server on a port the kernel picks, its own
# screenshot and file names in screenshots/), so `ctest -j2` (scripts/test.sh) runs two at once; COST starts the
# longest (browser_e2e, browser_serving) first.
add_test(NAME core_module_node
         COMMAND "${MOE_NODE}" --no-experimental-fetch "${PROJECT_SOURCE_DIR}/tests/wasm/core_module.test.mjs"
                 "${MOE_NODE_DIR}/moe-core.js")
# moe_browser_test(NAME SCRIPT COST): tests/browser/SCRIPT against the built page, the core module and the CLI
function(moe_browser_test name script cost)
  add_test(NAME ${name}
           COMMAND "${MOE_NODE}" "${PROJECT_SOURCE_DIR}/tests/browser/${script}"
                   --site "${MOE_SITE_DIR}" --core "${MOE_NODE_DIR}/moe-core.js" --cli "${MOE_CLI}"
                   --out "${CMAKE_BINARY_DIR}/screenshots")
  set_tests_properties(${name} PROPERTIES TIMEOUT 600 COST ${cost})
endfunction()
moe_browser_test(browser_e2e run.mjs 300)
# the tests from (k) on: hardware specs, errors, Copy link, the Serving section, a mesh, speculative decoding and
# sessions (tests/browser/serving.mjs; run.mjs's second half, apart so that ctest -j2 runs the halves at once)
moe_browser_test(browser_serving serving.mjs 280)
# the Plan tab against moe-roofline plan: one search, and GPUs x engines at p90 (tests/browser/plan.mjs)
moe_browser_test(browser_plan plan.mjs 200)
# issue 26: lengths, verdicts, pools, the Plan tab's command / CSV / hover, and no text overlapping at 1280x720 and
# 800x600 (tests/browser/layout.mjs)
moe_browser_test(browser_layout layout.mjs 200)

# The core's sweeps are the page's hot loop: -O2 (not the build type's -Os) for the core and the page's link. (Its
# functions stay out of line all the same: the build type's -Os flags come first on each compile line and bring
# -fno-inline-functions, which a later -O2 does not undo; letting clang inline made the page 47-125 KB gzip bigger.)
target_compile_options(moe_core PRIVATE -O2)

# Link-time optimisation of the page: the core, ImGui and the page's files are compiled to LLVM bitcode and optimised
# as one program when the page is linked (-flto there also takes emscripten's bitcode builds of libc and libc++).
# The functions stay out of line as before (emcc's -Os compiles with -fno-inline-functions, which marks each one
# noinline; clang's inlining at -Os made the page 47 KB gzip bigger), so what LTO adds is dead-code removal,
# internalisation and constants across files: 705 -> 696 KB gzip (wasm + js). The other wasm links (unit tests, the
# core module) take the core's bitcode as it is, without emscripten's LTO libraries.
option(MOE_WASM_LTO "Link the page with link-time optimisation (smaller wasm)" ON)
if(MOE_WASM_LTO)
  foreach(_t moe_core imgui moe_page_objs)
    target_compile_options(${_t} PRIVATE -flto)
  endforeach()
  foreach(_t moe_page moe_page_single)
    target_link_options(${_t} PRIVATE -flto)
  endforeach()
endif()
