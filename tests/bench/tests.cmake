# Benchmarks (label bench): not part of the default run; .ci/run runs them
# once (scripts/test.sh). They print ratios against floors measured in the
# same run; the recorder's gate on them (tests/lib/lpgate.py).
add_executable(bench_lock ${CMAKE_CURRENT_LIST_DIR}/bench_lock.c)
target_compile_options(bench_lock PRIVATE -O2)
target_link_libraries(bench_lock PRIVATE Threads::Threads)
add_executable(bench_block ${CMAKE_CURRENT_LIST_DIR}/bench_block.c)
target_compile_options(bench_block PRIVATE -O2)
target_link_libraries(bench_block PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
add_executable(bench_gen_log ${CMAKE_CURRENT_LIST_DIR}/gen_log.c)
target_link_libraries(bench_gen_log PRIVATE latprof_core Threads::Threads)
add_executable(bench_sqlite_ref ${CMAKE_CURRENT_LIST_DIR}/sqlite_ref.c)
target_compile_options(bench_sqlite_ref PRIVATE -O2)
target_link_libraries(bench_sqlite_ref PRIVATE PkgConfig::SQLITE3)
set_target_properties(bench_lock bench_block bench_gen_log bench_sqlite_ref PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bench
  BUILD_RPATH ${CMAKE_BINARY_DIR}/lib/latprof)

lp_py_test(bench_lock_overhead run_bench.py LABELS bench TIMEOUT 900 ARGS lock)
lp_py_test(bench_block_overhead run_bench.py LABELS bench TIMEOUT 900 ARGS block)
lp_py_test(bench_import run_bench.py LABELS bench TIMEOUT 900 ARGS import)
lp_py_test(bench_diff run_bench.py LABELS bench TIMEOUT 900 ARGS diff)
lp_py_test(bench_symcache run_bench.py LABELS bench TIMEOUT 900 ARGS symcache)
lp_py_test(bench_servers bench_servers.py LABELS bench TIMEOUT 1200)
lp_py_test(bench_import_nsys run_bench.py LABELS bench TIMEOUT 1800 ARGS import-nsys)
lp_py_test(bench_import_kineto run_bench.py LABELS bench TIMEOUT 3600 ARGS import-kineto)

# Per-process start cost: spawn loop, fork loop, python3 -c pass.
add_executable(bench_fork ${CMAKE_CURRENT_LIST_DIR}/bench_fork.c)
set_target_properties(bench_fork PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bench)
lp_py_test(bench_spawn bench_spawn.py LABELS bench TIMEOUT 900)
# One huge string in a Kineto trace: import time linear in its length.
lp_py_test(bench_import_kineto_string run_bench.py LABELS bench TIMEOUT 1800
  ARGS import-kineto-string)

# Thread-creation storms: each thread's start and end cost, bare vs latprof.
add_executable(bench_threads ${CMAKE_CURRENT_LIST_DIR}/bench_threads.c)
target_compile_options(bench_threads PRIVATE -O2)
target_link_libraries(bench_threads PRIVATE Threads::Threads)
set_target_properties(bench_threads PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bench)
# The gate itself: a build with a slowed record path must fail the bench.
lp_py_test(bench_gate_slowed test_bench_gate.py LABELS bench TIMEOUT 900)
lp_py_test(bench_thread_storms bench_threads.py LABELS bench TIMEOUT 900)
# Python frames per recorded wait (docs/python.md): with against without.
lp_py_test(bench_py_frames bench_py_frames.py LABELS bench TIMEOUT 900)
# Every view, findings, diff, check, export and plot against SQLite's grouped
# scan of the tables it reads, at 1 M and 10 M lock waits and ranges.
lp_py_test(bench_views_1m bench_views.py LABELS bench TIMEOUT 3600 ARGS 1000000 1000000)
# 10 M: by hand (ctest -R bench_views_10m); label manual keeps it out of every tier.
lp_py_test(bench_views_10m bench_views.py LABELS manual TIMEOUT 7200 ARGS 10000000 10000000)
# 100 M waits (report: time and max RSS; a 4 GB database) and the 10 M ranges
# views the acceptance names, by hand: LP_BENCH_ROUNDS=1 ctest -R bench_views_100m.
lp_py_test(bench_views_100m bench_views.py LABELS manual TIMEOUT 14400 ARGS 100000000 10000000
  "report,ranges: report --breakdown,ranges: report --html")
