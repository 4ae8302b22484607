# CPU counters: acceptance on recordings of samples/counters_demo,
# the strict-paranoid and no-libpfm4 builds, and the boundary benchmark.
lp_py_test(counters_stages test_counters.py LABELS e2e)
lp_py_test(counters_hw test_counters_hw.py LABELS e2e)
lp_py_test(counters_paranoid test_paranoid.py LABELS e2e)
# It configures and builds a second tree of the whole project, on every core:
# label `rebuild`, a tier of its own (scripts/test.sh), never beside others.
lp_py_test(counters_no_libpfm test_no_libpfm.py LABELS rebuild TIMEOUT 1200)

add_executable(bench_counters ${PROJECT_SOURCE_DIR}/tests/bench/bench_counters.c)
target_compile_options(bench_counters PRIVATE -O2)
target_link_libraries(bench_counters PRIVATE latprof_core)
set_target_properties(bench_counters PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bench
  BUILD_RPATH ${CMAKE_BINARY_DIR}/lib/latprof)
lp_py_test(bench_counters bench_counters.py LABELS bench TIMEOUT 900)

# A test program of this folder that marks NVTX ranges.
function(lp_counters_prog name)
  add_executable(${name} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${name}.c)
  target_include_directories(${name} PRIVATE ${NVTX3_INCLUDE})
  target_compile_options(${name} PRIVATE -g -O2)
  target_link_libraries(${name} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(${name} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/counters)
endfunction()

if(NVTX3_INCLUDE)
  # Tight loops of tiny ranges inside stages: reads at most once per interval.
  lp_counters_prog(ctr_tiny)
  lp_py_test(counters_tiny test_tiny.py LABELS e2e)
  # Whole-thread totals from the kernel's accounting; groups only on threads
  # with NVTX ranges.
  lp_counters_prog(ctr_acct)
  lp_py_test(counters_acct test_acct.py LABELS e2e)
endif()

# collector/lp_taskacct.c's readers against getrusage and the thread clock.
lp_c_test(taskacct_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_taskacct.c
  LIBS Threads::Threads LABELS unit)
