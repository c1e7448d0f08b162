# Finds every external dependency and says plainly what is missing and how to get it.
# scripts/setup.sh installs all of them on Debian/Ubuntu.

set(_tilec_hint "run 'scripts/setup.sh' (Debian/Ubuntu) to install the dependencies")

# --- LLVM 19 (NVPTX back end), through llvm-config ---------------------------
find_program(LLVM_CONFIG NAMES llvm-config-19 llvm-config
  HINTS /usr/lib/llvm-19/bin)
if(NOT LLVM_CONFIG)
  message(FATAL_ERROR "tilec needs LLVM 19 (llvm-config-19 not found): ${_tilec_hint}")
endif()
execute_process(COMMAND ${LLVM_CONFIG} --version OUTPUT_VARIABLE LLVM_VERSION
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT LLVM_VERSION MATCHES "^19\\.")
  message(FATAL_ERROR "tilec needs LLVM 19, ${LLVM_CONFIG} is ${LLVM_VERSION}: ${_tilec_hint}")
endif()
execute_process(COMMAND ${LLVM_CONFIG} --targets-built OUTPUT_VARIABLE _targets
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _targets MATCHES "NVPTX")
  message(FATAL_ERROR "LLVM ${LLVM_VERSION} at ${LLVM_CONFIG} was built without the NVPTX target")
endif()
execute_process(COMMAND ${LLVM_CONFIG} --includedir OUTPUT_VARIABLE LLVM_INCLUDE_DIR
  OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${LLVM_CONFIG} --libdir OUTPUT_VARIABLE LLVM_LIB_DIR
  OUTPUT_STRIP_TRAILING_WHITESPACE)
find_library(LLVM_LIBRARY NAMES LLVM-19 LLVM HINTS ${LLVM_LIB_DIR} NO_DEFAULT_PATH)
if(NOT LLVM_LIBRARY)
  message(FATAL_ERROR "libLLVM-19 shared library not found in ${LLVM_LIB_DIR}: ${_tilec_hint}")
endif()
message(STATUS "tilec: LLVM ${LLVM_VERSION} at ${LLVM_LIBRARY}")

# --- flex and bison (reentrant scanner, pure parser) -------------------------
find_package(FLEX 2.6)
find_package(BISON 3.5)
if(NOT FLEX_FOUND OR NOT BISON_FOUND)
  message(FATAL_ERROR "tilec needs flex >= 2.6 and bison >= 3.5: ${_tilec_hint}")
endif()

# --- CMocka (unit tests) ------------------------------------------------------
find_path(CMOCKA_INCLUDE_DIR cmocka.h)
find_library(CMOCKA_LIBRARY cmocka)
if(NOT CMOCKA_INCLUDE_DIR OR NOT CMOCKA_LIBRARY)
  message(FATAL_ERROR "the tests need CMocka (cmocka.h, libcmocka): ${_tilec_hint}")
endif()
add_library(tilec_cmocka INTERFACE)
target_include_directories(tilec_cmocka INTERFACE ${CMOCKA_INCLUDE_DIR})
target_link_libraries(tilec_cmocka INTERFACE ${CMOCKA_LIBRARY})

# --- CUDA toolkit: ptxas (PTX -> cubin) and cuda.h (runtime) -------------------
# Optional: without ptxas tilec still emits PTX, and the ptxas tests say "skipped".
find_program(TILEC_PTXAS ptxas HINTS /usr/local/cuda/bin ENV CUDA_HOME PATH_SUFFIXES bin)
find_path(CUDA_INCLUDE_DIR cuda.h HINTS /usr/local/cuda/include ENV CUDA_HOME PATH_SUFFIXES include)
if(TILEC_PTXAS)
  message(STATUS "tilec: ptxas at ${TILEC_PTXAS}")
else()
  message(WARNING "ptxas not found: tilec will emit PTX but no cubin, and the ptxas tests will be "
    "skipped. Install the CUDA toolkit (12.3 or newer) or set CUDA_HOME.")
  set(TILEC_PTXAS "")
endif()
if(NOT CUDA_INCLUDE_DIR)
  message(WARNING "cuda.h not found: the runtime uses its own copy of the driver API declarations")
endif()
