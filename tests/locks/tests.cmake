# Lock report and symbolization (issue 2, items 6-7).
lp_c_test(lp_symbols_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/lp_symbols_test.c
  LIBS latprof_analyze LABELS unit)
target_compile_options(lp_symbols_test PRIVATE -g -O1)

add_executable(lp_lockprog ${CMAKE_CURRENT_LIST_DIR}/lp_lockprog.c)
target_compile_options(lp_lockprog PRIVATE -g -O1)
target_link_libraries(lp_lockprog PRIVATE Threads::Threads)
set_target_properties(lp_lockprog PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/locks)

lp_py_test(locks_report test_report_locks.py LABELS e2e)
lp_py_test(locks_report_errors test_report_errors.py LABELS e2e)
lp_py_test(locks_report_summary test_report_summary.py LABELS e2e)

# C++ symbols demangled in frames and lock names.
add_executable(lp_lockprog_cpp ${CMAKE_CURRENT_LIST_DIR}/lp_lockprog_cpp.cpp)
target_compile_options(lp_lockprog_cpp PRIVATE -g -O1)
target_link_libraries(lp_lockprog_cpp PRIVATE Threads::Threads)
set_target_properties(lp_lockprog_cpp PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/locks)
lp_py_test(locks_demangle test_locks_demangle.py LABELS e2e)

# pthread_spin_lock contention and prctl(PR_SET_NAME) thread names.
add_executable(lp_spinprog ${CMAKE_CURRENT_LIST_DIR}/lp_spinprog.c)
target_compile_options(lp_spinprog PRIVATE -g -O1)
target_link_libraries(lp_spinprog PRIVATE Threads::Threads)
set_target_properties(lp_spinprog PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/locks)
lp_py_test(locks_spin test_spin.py LABELS e2e)
