# Benchmarks (label bench): not part of the default run; .ci/run runs them
# once and prints their figures. They report ratios, never fail on them.
add_executable(bench_lock ${CMAKE_CURRENT_LIST_DIR}/bench_lock.c)
target_compile_options(bench_lock PRIVATE -O2)
target_link_libraries(bench_lock PRIVATE Threads::Threads)
add_executable(bench_gen_log ${CMAKE_CURRENT_LIST_DIR}/gen_log.c)
target_link_libraries(bench_gen_log PRIVATE latprof_core Threads::Threads)
set_target_properties(bench_lock bench_gen_log PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bench
  BUILD_RPATH ${CMAKE_BINARY_DIR}/lib/latprof)

lp_py_test(bench_lock_overhead run_bench.py LABELS bench TIMEOUT 900 ARGS lock)
lp_py_test(bench_import run_bench.py LABELS bench TIMEOUT 900 ARGS import)

# Per-process start cost (issue 18): spawn loop, fork loop, python3 -c pass.
add_executable(bench_fork ${CMAKE_CURRENT_LIST_DIR}/bench_fork.c)
set_target_properties(bench_fork PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bench)
lp_py_test(bench_spawn bench_spawn.py LABELS bench TIMEOUT 900)
