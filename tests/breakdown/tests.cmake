# Request/stage breakdown: end-to-end tests on recorded NVTX programs
# (samples/infer_server and bd_nested below). The interval sets and
# percentiles under it have their unit tests in tests/ivset.

if(NVTX3_INCLUDE)
  add_executable(bd_nested ${CMAKE_CURRENT_LIST_DIR}/bd_nested.c)
  target_include_directories(bd_nested PRIVATE ${NVTX3_INCLUDE})
  target_link_libraries(bd_nested PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(bd_nested PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)
  # requests whose largest waits it times itself (a lock held for it, a sleep)
  add_executable(bd_slowwait ${CMAKE_CURRENT_LIST_DIR}/bd_slowwait.c)
  target_include_directories(bd_slowwait PRIVATE ${NVTX3_INCLUDE}
    ${PROJECT_SOURCE_DIR}/tests/lib) # lp_asleep.h
  target_link_libraries(bd_slowwait PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  set_target_properties(bd_slowwait PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)
endif()
# lp_breakdown_compute on hand-built databases: stages, shares and the
# category split against a microsecond-by-microsecond brute force.
lp_c_test(breakdown_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_breakdown.c
  LIBS latprof_analyze LABELS unit)
lp_py_test(breakdown_stages test_stages.py LABELS e2e)
lp_py_test(breakdown_tail test_tail.py LABELS e2e)
lp_py_test(breakdown_nesting test_nesting.py LABELS e2e)
lp_py_test(breakdown_noranges test_noranges.py LABELS e2e)
lp_py_test(breakdown_python test_python.py LABELS e2e)
# The slowest requests' largest waits on bd_slowwait: the lock and the
# sleep it times, their time within its own bounds, their call sites.
lp_py_test(breakdown_slow_waits test_slow_waits.py LABELS e2e)
# report --breakdown on 10M generated ranges: seconds and max RSS as ratios
lp_py_test(bench_breakdown ../bench/bench_breakdown.py LABELS bench TIMEOUT 1200)
lp_py_test(breakdown_counters test_counters_columns.py LABELS e2e)
lp_py_test(breakdown_split_load test_split_load.py LABELS e2e)
# The stage table fits COLUMNS: one table, or parts with the same cells.
lp_py_test(breakdown_text_width test_text_width.py LABELS e2e)
