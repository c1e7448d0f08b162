# One place for the project's warning flags, applied per target (never global).
function(tilec_target_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wmissing-prototypes -fno-common)
  if(TILEC_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(TILEC_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
