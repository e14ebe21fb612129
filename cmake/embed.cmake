# embed.cmake — compiles presets/**/*.json and bench_data/**/*.csv into the binaries (core/base/embedded.h).
#
# Included from CMakeLists.txt it defines
#   moe_embed_files(OUT <file.cpp> ROOT <repo root> FILES <absolute paths>...)
# which adds a custom command that regenerates OUT whenever one of the files (or this script) changes.
# Run as a script (cmake -DOUT=... -DROOT=... -DLIST=<file with one path a line> -P embed.cmake) it writes OUT:
#   namespace moe { const EmbeddedBlob kEmbeddedBlobs[] = {{"presets/models/x.json", data_0, sizeof(data_0) - 1, false}, ...}; }
# Text files become C++ raw strings (readable, fast to compile); a file that a raw string cannot hold exactly
# (carriage returns, NUL bytes, the delimiter itself) or that is longer than a literal may be becomes a byte array. Sizes come from the compiler (sizeof).
# Stored in a form gzip packs better (the page's wasm is served compressed), the same content:
#   - a JSON file loses its line breaks and the indentation after them (JSON strings hold no raw line break, so only
#     whitespace between tokens goes): the same JSON for every parser. 31 -> 27 KB gzip.
#   - a CSV table whose lines all have the same count of cells (and no character CMake lists mishandle) is stored one
#     column a line (by_columns), and embedded_files() puts it back in rows byte for byte. 146 -> 124 KB gzip.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  set(_MOE_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_FILE}")
  function(moe_embed_files)
    cmake_parse_arguments(ARG "" "OUT;ROOT" "FILES" ${ARGN})
    list(SORT ARG_FILES)
    set(list_file "${ARG_OUT}.list")
    string(REPLACE ";" "\n" lines "${ARG_FILES}")
    # Written only when it changes, so an unchanged configure does not force a rebuild.
    file(CONFIGURE OUTPUT "${list_file}" CONTENT "${lines}\n" @ONLY)
    add_custom_command(
      OUTPUT "${ARG_OUT}"
      COMMAND "${CMAKE_COMMAND}" -DOUT=${ARG_OUT} -DROOT=${ARG_ROOT} -DLIST=${list_file} -P "${_MOE_EMBED_SCRIPT}"
      DEPENDS ${ARG_FILES} "${list_file}" "${_MOE_EMBED_SCRIPT}"
      COMMENT "Embedding presets/ and bench_data/ into ${ARG_OUT}"
      VERBATIM)
  endfunction()
  return()
endif()

# ---- script mode ------------------------------------------------------------------------------------------
cmake_policy(SET CMP0007 NEW)  # lists keep their empty elements (a table's empty cells)
foreach(v OUT ROOT LIST)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "embed.cmake: -D${v}=... is required")
  endif()
endforeach()

# A table's text (in text, ending in a line break) one column a line, when every line has the same count of cells;
# sets text, text_len, size and by_columns (in the caller's scope). Anything CMake's lists would change (';', '[', ']',
# '\\'), a carriage return or an empty line leaves the file as it is.
macro(moe_embed_by_columns)
  string(REGEX MATCH "[][;\\\r]|\n\n|^\n" _unsafe "${text}")
  string(REGEX MATCH "\n$" _ends "${text}")
  if(_unsafe STREQUAL "" AND NOT _ends STREQUAL "" AND text_len GREATER 1)
    math(EXPR _last "${text_len} - 1")
    string(SUBSTRING "${text}" 0 ${_last} _body)
    string(REPLACE "\n" ";" _lines "${_body}")
    set(_ncells -1)
    set(_ok TRUE)
    foreach(_line IN LISTS _lines)
      string(REPLACE "," ";" _cells "${_line}")
      list(LENGTH _cells _n)
      if(_ncells EQUAL -1)
        set(_ncells ${_n})
        foreach(_c RANGE 1 ${_n})
          set(_col_${_c} "")
          set(_sep_${_c} "")
        endforeach()
      elseif(NOT _n EQUAL _ncells)
        set(_ok FALSE)
        break()
      endif()
      set(_c 0)
      foreach(_cell IN LISTS _cells)
        math(EXPR _c "${_c} + 1")
        string(APPEND _col_${_c} "${_sep_${_c}}${_cell}")
        set(_sep_${_c} ",")
      endforeach()
    endforeach()
    if(_ok AND _ncells GREATER 0)
      set(text "")
      foreach(_c RANGE 1 ${_ncells})
        string(APPEND text "${_col_${_c}}\n")
      endforeach()
      string(LENGTH "${text}" text_len)
      set(size ${text_len})
      set(by_columns true)
    endif()
  endif()
endmacro()

file(STRINGS "${LIST}" files)
set(delim "moe_embed")
set(body "")
set(table "")
set(index 0)
foreach(f IN LISTS files)
  if(f STREQUAL "")
    continue()
  endif()
  file(RELATIVE_PATH rel "${ROOT}" "${f}")
  file(SIZE "${f}" size)
  file(READ "${f}" text)
  string(LENGTH "${text}" text_len)
  set(by_columns false)
  set(stored FALSE)  # text is the stored form
  if(text_len EQUAL size AND rel MATCHES "^presets/.*\\.json$")
    string(REGEX REPLACE "\n[ \t]*" "" text "${text}")
    string(LENGTH "${text}" text_len)
    set(size ${text_len})
    set(stored TRUE)
  elseif(text_len EQUAL size AND rel MATCHES "^bench_data/.*\\.csv$")
    moe_embed_by_columns()
    set(stored ${by_columns})
  endif()
  string(FIND "${text}" "\r" has_cr)
  string(FIND "${text}" ")${delim}\"" has_delim)
  set(name "data_${index}")
  # A string literal longer than 65,536 characters is beyond what C++ compilers must accept (clang's
  # -Woverlength-strings under -Wpedantic): such a file becomes a byte array too.
  if(text_len EQUAL size AND has_cr EQUAL -1 AND has_delim EQUAL -1 AND size LESS 65000)
    string(APPEND body "static const char ${name}[] = R\"${delim}(${text})${delim}\";\n")
  else()
    if(stored)  # the stored form, not the file: its bytes through a scratch file (CMake reads hex from files only)
      file(WRITE "${OUT}.blob" "${text}")
      file(READ "${OUT}.blob" hex HEX)
      file(REMOVE "${OUT}.blob")
    else()
      file(READ "${f}" hex HEX)
    endif()
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
    string(APPEND body "static const char ${name}[] = {${bytes}'\\0'};\n")
  endif()
  string(APPEND table "    {\"${rel}\", ${name}, sizeof(${name}) - 1, ${by_columns}},\n")
  math(EXPR index "${index} + 1")
endforeach()

if(index EQUAL 0)
  # A zero-length array is not C++: keep one null entry and report a count of zero.
  set(table "    {nullptr, nullptr, 0, false},\n")
  set(count 0)
else()
  set(count ${index})
endif()

set(out "// Generated by cmake/embed.cmake from presets/ and bench_data/ — do not edit.\n")
string(APPEND out "#include \"core/base/embedded.h\"\n\nnamespace moe {\nnamespace {\n")
string(APPEND out "${body}")
string(APPEND out "}  // namespace\n\nconst EmbeddedBlob kEmbeddedBlobs[] = {\n${table}};\n")
string(APPEND out "const std::size_t kEmbeddedBlobCount = ${count};\n\n}  // namespace moe\n")
file(WRITE "${OUT}.tmp" "${out}")
file(RENAME "${OUT}.tmp" "${OUT}")
