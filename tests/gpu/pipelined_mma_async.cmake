# test_gpu_pipelined: the pipelined loop with mma_async (pipelined_mma_async.tile) against the
# CPU, embedded like the examples and checked with their harness; skipped (77) without a Hopper
# GPU. Included from tests/gpu/CMakeLists.txt: include(pipelined_mma_async.cmake)
if(TARGET tile_example_harness)
  tile_add_kernel_library(tile_gpu_pipelined SOURCES ${CMAKE_CURRENT_LIST_DIR}/pipelined_mma_async.tile)
  add_executable(test_gpu_pipelined ${CMAKE_CURRENT_LIST_DIR}/test_gpu_pipelined.c)
  target_link_libraries(test_gpu_pipelined PRIVATE tile_example_harness tile_gpu_pipelined m)
  tilec_target_warnings(test_gpu_pipelined)
  add_test(NAME test_gpu_pipelined COMMAND test_gpu_pipelined)
  set_tests_properties(test_gpu_pipelined PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endif()
