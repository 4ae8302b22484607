# Lock report and symbolization.
lp_c_test(symbols_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_symbols.c
  LIBS latprof_analyze LABELS unit)
target_compile_options(symbols_unit PRIVATE -g -O1)
# The symbol cache: damaged entries, concurrent writers, eviction.
lp_c_test(symcache_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_symcache.c
  LIBS latprof_analyze LABELS unit)
target_compile_options(symcache_unit PRIVATE -g -O1)

# A threaded test program with debug info (symbolization needs it), built
# into tests/locks/ where the tests look for it.
function(lp_lock_program name source)
  add_executable(${name} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${source})
  target_compile_options(${name} PRIVATE -g -O1)
  target_link_libraries(${name} PRIVATE Threads::Threads)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/lib) # lp_asleep.h
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/locks)
endfunction()

lp_lock_program(lp_lockprog lp_lockprog.c)

lp_py_test(locks_report test_report_locks.py LABELS e2e)
# p50/p99 exact where the durations crowd the histogram's buckets
lp_py_test(locks_pctl_exact test_pctl_exact.py LABELS e2e)
lp_py_test(locks_report_errors test_report_errors.py LABELS e2e)
lp_py_test(locks_report_summary test_report_summary.py LABELS e2e)

# C++ symbols demangled in frames and lock names.
lp_lock_program(lp_lockprog_cpp lp_lockprog_cpp.cpp)
lp_py_test(locks_demangle test_locks_demangle.py LABELS e2e)

# pthread_spin_lock contention and prctl(PR_SET_NAME) thread names.
lp_lock_program(lp_spinprog lp_spinprog.c)
lp_py_test(locks_spin test_spin.py LABELS e2e)

# The symbol cache on a real run: re-imports served from it, damaged entries.
lp_py_test(locks_symcache test_symcache.py LABELS e2e)

# The holder's stage: lock_waits.owner_range_id.
lp_py_test(locks_holder_stage test_holder_stage.py LABELS e2e)

# Wait classes on a hand-built database with the real schema.
lp_c_test(waits_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_waits.c
  LIBS latprof_analyze LABELS unit)

# A C program's pthread_join is a wait of class join, never contention.
lp_lock_program(lp_joinprog lp_joinprog.c)
lp_py_test(locks_join_class test_join_class.py LABELS e2e)
# Per-thread semaphores (PostgreSQL's PGSemaphore) fold into one row per site.
lp_py_test(locks_fold_sems test_fold_sems.py LABELS unit)
# A lock wrapper called straight from the thread function: the site is
# the thread function, not libc's thread start.
lp_lock_program(lp_wrapsite lp_wrapsite.c)
lp_py_test(locks_wrapsite test_wrapsite.py LABELS e2e)
# A futex lock whose one wait function calls syscall(SYS_futex): the site is
# its caller, though no other lock shares that frame.
lp_lock_program(lp_futexsite lp_futexsite.c)
lp_py_test(locks_futexsite test_futexsite.py LABELS e2e)
lp_py_test(locks_symlink_exe test_symlink_exe.py LABELS e2e)
# A PTHREAD_PROCESS_SHARED mutex in inherited shared memory: one lock.
lp_lock_program(lp_pshared lp_pshared.c)
lp_py_test(locks_pshared test_pshared.py LABELS e2e)
