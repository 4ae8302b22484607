# CPU counters (issue 8): acceptance on recordings of samples/counters_demo,
# the strict-paranoid and no-libpfm4 builds, and the boundary benchmark.
lp_py_test(counters_stages test_counters.py LABELS e2e)
lp_py_test(counters_hw test_counters_hw.py LABELS e2e)
lp_py_test(counters_paranoid test_paranoid.py LABELS e2e)
lp_py_test(counters_no_libpfm test_no_libpfm.py LABELS e2e TIMEOUT 1200)

add_executable(bench_counters ${PROJECT_SOURCE_DIR}/tests/bench/bench_counters.c)
target_compile_options(bench_counters PRIVATE -O2)
target_link_libraries(bench_counters PRIVATE latprof_core)
set_target_properties(bench_counters PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bench
  BUILD_RPATH ${CMAKE_BINARY_DIR}/lib/latprof)
lp_py_test(bench_counters bench_counters.py LABELS bench TIMEOUT 900)

# Tight loops of tiny ranges inside stages: reads at most once per interval.
if(NVTX3_INCLUDE)
  add_executable(ctr_tiny ${CMAKE_CURRENT_LIST_DIR}/ctr_tiny.c)
  target_include_directories(ctr_tiny PRIVATE ${NVTX3_INCLUDE})
  target_compile_options(ctr_tiny PRIVATE -g -O2)
  target_link_libraries(ctr_tiny PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(ctr_tiny PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/counters)
  lp_py_test(counters_tiny test_tiny.py LABELS e2e)
endif()
