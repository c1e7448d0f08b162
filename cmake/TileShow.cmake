# TileShow.cmake: the `tile_show` target: every shipped .tile file (examples/*.tile,
# kernels/*.tile) compiled with the built tilec to <build>/show/<name>.meta and .ptx, and,
# with ptxas, to .cubin with ptxas's report in .ptxas. scripts/show-kernels.sh prints the
# table from these files. Each is a custom command with tilec's depfile, so a second
# `./tile run` with no change compiles nothing. Not part of `all`: only `./tile run` and
# show-kernels.sh need it.
include_guard(GLOBAL)

function(tile_add_show_target)
  set(out ${PROJECT_BINARY_DIR}/show)
  file(MAKE_DIRECTORY ${out})
  # kernels/common/ holds imported helpers only; CONFIGURE_DEPENDS picks up a new file
  file(GLOB sources CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/examples/*.tile ${PROJECT_SOURCE_DIR}/kernels/*.tile)
  list(SORT sources)
  set(all "")
  set(names "")
  foreach(src IN LISTS sources)
    get_filename_component(name ${src} NAME_WE)
    if(name IN_LIST names)
      message(FATAL_ERROR "tile_show: two shipped .tile files named ${name}")
    endif()
    list(APPEND names ${name})
    set(outputs ${out}/${name}.meta ${out}/${name}.ptx)
    set(ptxas_cmd "")
    if(TILEC_PTXAS)
      # tilec --emit=cubin runs these flags too (compiler/cubin.c); running ptxas on the
      # PTX here keeps its report, one compile instead of a second one through tilec.
      # (no ';' in the shell text: it would split the CMake argument)
      list(APPEND outputs ${out}/${name}.cubin ${out}/${name}.ptxas)
      set(ptxas_cmd COMMAND sh -c "\"$0\" -arch=sm_90a -O3 -v --warn-on-spills -o \"$1\" \"$2\" >\"$3\" 2>&1 || (cat \"$3\" && false)"
        ${TILEC_PTXAS} ${out}/${name}.cubin ${out}/${name}.ptx ${out}/${name}.ptxas)
    endif()
    add_custom_command(OUTPUT ${outputs}
      COMMAND tilec ${src} -I ${PROJECT_SOURCE_DIR}/kernels --emit=meta -o ${out}/${name}.meta
              --depfile ${out}/${name}.d
      COMMAND tilec ${src} -I ${PROJECT_SOURCE_DIR}/kernels --emit=ptx -o ${out}/${name}.ptx
      ${ptxas_cmd}
      DEPENDS ${src} tilec
      DEPFILE ${out}/${name}.d
      COMMENT "tilec ${name}.tile -> show/${name}.{meta,ptx,cubin}"
      VERBATIM)
    list(APPEND all ${outputs})
  endforeach()
  add_custom_target(tile_show DEPENDS ${all})
endfunction()
