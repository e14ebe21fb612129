# warnings.cmake — compiler warnings for our own targets (never for Dear ImGui).
#
#   moe_warnings(<target>)        # -Wall -Wextra -Wpedantic -Wshadow ... ; -Werror when MOE_WERROR is ON
#   moe_sanitize(<target>)        # ASan + UBSan (float-cast-overflow too: GCC leaves it out) when MOE_SANITIZE is ON

option(MOE_WERROR "Treat warnings in our own targets as errors" OFF)
option(MOE_SANITIZE "Build core, CLI and tests with AddressSanitizer and UndefinedBehaviorSanitizer (native)" OFF)

function(moe_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual -Wcast-align -Wunused
    -Wformat=2 -Wimplicit-fallthrough)
  if(MOE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(moe_sanitize target)
  if(MOE_SANITIZE AND NOT EMSCRIPTEN)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
