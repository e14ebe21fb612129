# imgui.cmake — Dear ImGui 1.86 from Debian's source package (scripts/setup.sh downloads it into
# third_party_cache/). Checked by sha256 and unpacked into the build tree at configure time; never committed.
#
#   include(cmake/imgui.cmake)     # defines the static library `imgui` (core + GLFW and OpenGL3 backends)

set(MOE_IMGUI_TARBALL "${PROJECT_SOURCE_DIR}/third_party_cache/imgui_1.86+ds.orig.tar.xz"
    CACHE FILEPATH "Dear ImGui 1.86 source tarball (Debian's imgui_1.86+ds.orig.tar.xz)")
set(_imgui_sha256 0dace0e8e57d298eb6e93af12dc19420cb96330832f6495c733b90aeeef11f64)
set(_imgui_dir "${CMAKE_BINARY_DIR}/_deps/imgui-1.86")

if(NOT EXISTS "${_imgui_dir}/.unpacked-${_imgui_sha256}")
  if(NOT EXISTS "${MOE_IMGUI_TARBALL}")
    message(FATAL_ERROR "Dear ImGui source not found at ${MOE_IMGUI_TARBALL}: run scripts/setup.sh")
  endif()
  file(SHA256 "${MOE_IMGUI_TARBALL}" _sha)
  if(NOT _sha STREQUAL _imgui_sha256)
    message(FATAL_ERROR "${MOE_IMGUI_TARBALL}: sha256 ${_sha}, expected ${_imgui_sha256}")
  endif()
  file(REMOVE_RECURSE "${_imgui_dir}")
  file(ARCHIVE_EXTRACT INPUT "${MOE_IMGUI_TARBALL}" DESTINATION "${CMAKE_BINARY_DIR}/_deps"
       PATTERNS "imgui-1.86/*.cpp" "imgui-1.86/*.h" "imgui-1.86/backends/imgui_impl_glfw.*"
                "imgui-1.86/backends/imgui_impl_opengl3*" "imgui-1.86/LICENSE.txt")
  file(TOUCH "${_imgui_dir}/.unpacked-${_imgui_sha256}")
endif()

add_library(imgui STATIC
  "${_imgui_dir}/imgui.cpp" "${_imgui_dir}/imgui_draw.cpp" "${_imgui_dir}/imgui_tables.cpp"
  "${_imgui_dir}/imgui_widgets.cpp"
  "${_imgui_dir}/backends/imgui_impl_glfw.cpp" "${_imgui_dir}/backends/imgui_impl_opengl3.cpp")
# SYSTEM: their warnings are not ours.
target_include_directories(imgui SYSTEM PUBLIC "${_imgui_dir}" "${_imgui_dir}/backends")
# imgui 1.86 would pick OpenGL ES2 on Emscripten; we want WebGL2 (TOOLCHAIN quirk 5). No file functions (the page
# sets io.IniFilename = nullptr and never logs to a file or the TTY; the wasm has no file system) and no metrics /
# debug windows (never opened): 2.4 KB less gzip for the page.
target_compile_definitions(imgui PUBLIC IMGUI_IMPL_OPENGL_ES3 IMGUI_DISABLE_OBSOLETE_FUNCTIONS
                                        IMGUI_DISABLE_FILE_FUNCTIONS IMGUI_DISABLE_METRICS_WINDOW)
if(EMSCRIPTEN)
  target_link_options(imgui INTERFACE -sUSE_GLFW=3 -sMIN_WEBGL_VERSION=2 -sMAX_WEBGL_VERSION=2)
endif()
