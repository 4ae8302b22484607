# Blocking calls: the interposer's hooks and the off-CPU
# categories of the breakdown, against programs that time themselves.
lp_py_test(block_offcpu test_offcpu.py LABELS e2e)
# pinned to core 0 and timed against the program's own clocks: alone
set_tests_properties(block_offcpu PROPERTIES RUN_SERIAL TRUE)
add_executable(lp_blockprog ${CMAKE_CURRENT_LIST_DIR}/lp_blockprog.c)
target_compile_options(lp_blockprog PRIVATE -g -O1)
target_link_libraries(lp_blockprog PRIVATE Threads::Threads)
target_include_directories(lp_blockprog PRIVATE ${PROJECT_SOURCE_DIR}/tests/lib) # lp_asleep.h
set_target_properties(lp_blockprog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)
lp_py_test(block_hooks test_hooks.py LABELS e2e)
lp_py_test(block_exitwait test_exitwait.py LABELS e2e)
lp_py_test(block_killwait test_killwait.py LABELS e2e)
# PostgreSQL under pgbench (root and Debian's postgresql, else skipped)
lp_py_test(block_postgres test_postgres.py LABELS e2e TIMEOUT 300)
set_tests_properties(block_postgres PROPERTIES RUN_SERIAL TRUE)
# a DNS server answering late, in a namespace of its own (root, else skipped)
lp_py_test(block_lookup test_lookup.py LABELS e2e)
# Run-queue time inside waits: socketpair ping-pong, more threads than
# CPUs and fewer, against each thread's own schedstat
add_executable(lp_runqprog ${CMAKE_CURRENT_LIST_DIR}/lp_runqprog.c)
target_compile_options(lp_runqprog PRIVATE -g -O1)
target_link_libraries(lp_runqprog PRIVATE Threads::Threads)
set_target_properties(lp_runqprog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)
lp_py_test(block_runq test_runq.py LABELS e2e)
# its threads' run-queue time is the measure: alone
set_tests_properties(block_runq PROPERTIES RUN_SERIAL TRUE)
# Blocking the interposer does not record (calls under the threshold) is
# not time waiting for a CPU: a thread's preempted against its schedstat
add_executable(lp_unseenprog ${CMAKE_CURRENT_LIST_DIR}/lp_unseenprog.c)
target_compile_options(lp_unseenprog PRIVATE -g -O1)
set_target_properties(lp_unseenprog PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)
lp_py_test(block_unseen test_unseen.py LABELS e2e)
