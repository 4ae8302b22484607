# Never lose a recording, never harm the app. Faults and security,
# each a test on a real run that prints the figure it asserts
# (docs/reliability.md).
set(lp_rel_dir ${CMAKE_BINARY_DIR}/tests/reliability)
add_executable(lp_rel_app ${CMAKE_CURRENT_LIST_DIR}/lp_rel_app.c)
target_compile_options(lp_rel_app PRIVATE -g -O2)
target_link_libraries(lp_rel_app PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
set_target_properties(lp_rel_app PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${lp_rel_dir})

add_library(lp_rel_lib MODULE ${CMAKE_CURRENT_LIST_DIR}/lp_rel_lib.c)
target_compile_options(lp_rel_lib PRIVATE -g)
target_link_libraries(lp_rel_lib PRIVATE Threads::Threads)
set_target_properties(lp_rel_lib PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${lp_rel_dir})

# A statically linked copy: no PT_INTERP, so no LD_PRELOAD. Sanitizer
# runtimes cannot link statically: plain flags only.
if(NOT LATPROF_SANITIZE AND NOT LATPROF_FUZZ)
  add_executable(lp_rel_static ${CMAKE_CURRENT_LIST_DIR}/lp_rel_app.c)
  target_link_options(lp_rel_static PRIVATE -static)
  target_link_libraries(lp_rel_static PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(lp_rel_static PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${lp_rel_dir})
endif()

# Names that are hostile to SQL, HTML, JSON and CSV, recorded through NVTX.
if(NVTX3_INCLUDE)
  add_executable(lp_rel_names ${CMAKE_CURRENT_LIST_DIR}/lp_rel_names.c)
  target_include_directories(lp_rel_names PRIVATE ${NVTX3_INCLUDE})
  target_link_libraries(lp_rel_names PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(lp_rel_names PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${lp_rel_dir})
  add_executable(lp_rel_storm ${CMAKE_CURRENT_LIST_DIR}/lp_rel_storm.c)
  target_include_directories(lp_rel_storm PRIVATE ${NVTX3_INCLUDE})
  target_compile_options(lp_rel_storm PRIVATE -O2)
  target_link_libraries(lp_rel_storm PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(lp_rel_storm PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${lp_rel_dir})
endif()

lp_py_test(rel_sigkill test_sigkill.py LABELS e2e reliability)
lp_py_test(rel_crash test_crash.py LABELS e2e reliability)
lp_py_test(rel_diskfull test_diskfull.py LABELS e2e reliability)
lp_py_test(rel_scale test_scale.py LABELS e2e reliability TIMEOUT 600)
lp_py_test(rel_hostile_apps test_hostile_apps.py LABELS e2e reliability)
lp_py_test(rel_own_locks test_own_locks.py LABELS e2e reliability)
lp_py_test(rel_unattachable test_unattachable.py LABELS e2e reliability)
lp_py_test(rel_sigterm test_sigterm.py LABELS e2e reliability)
lp_py_test(rel_signals_once test_signals_once.py LABELS e2e reliability)
lp_py_test(rel_followed test_followed.py LABELS e2e reliability)
# Its one case that needs CPU counters, apart: a skip there skips only it.
lp_py_test(rel_followed_counters test_followed.py LABELS e2e reliability ARGS counters)
lp_py_test(rel_messages test_messages.py LABELS e2e reliability)
lp_py_test(rel_html_bound test_html_bound.py LABELS e2e reliability TIMEOUT 600)
lp_py_test(rel_security test_security.py LABELS e2e reliability)
lp_py_test(rel_env test_env.py LABELS e2e reliability)
lp_py_test(rel_wait test_wait.py LABELS e2e reliability)
lp_py_test(rel_lint test_lint.py LABELS unit reliability)
# One-way dependencies between folders (docs/architecture.md): includes and
# the read-only libraries' link needs.
lp_py_test(rel_arch test_arch.py LABELS unit reliability lint)
# Every C and C++ file follows .clang-format.
lp_py_test(lint_format test_format.py LABELS lint)
# Damaged database pages: each report exits 2 with one line or prints the
# undamaged report.
lp_py_test(rel_damage test_damage.py LABELS e2e reliability)

# Log space, name/stack storms, address space (docs/reliability.md).
lp_py_test(rel_logspace test_logspace.py LABELS e2e reliability)
lp_py_test(rel_storms test_storms.py LABELS e2e reliability TIMEOUT 600)
# Alone: its storm's wait is timed against a bare run (any neighbour's load
# moves one side), and its real-time threads wake 120,000 times, which
# shows in neighbours that count their own context switches (counters_tiny).
set_tests_properties(rel_storms PROPERTIES RUN_SERIAL TRUE)
lp_py_test(rel_addrspace test_addrspace.py LABELS e2e reliability)
lp_py_test(rel_uid_drop test_uid_drop.py LABELS e2e reliability)

# Relative TMPDIR and long output paths, one output rule for every
# command, expectations refused before evaluation, and the small ones.
lp_py_test(rel_paths test_paths.py LABELS e2e reliability)
lp_py_test(rel_outputs test_outputs.py LABELS e2e reliability)
lp_py_test(rel_expect test_expect.py LABELS e2e reliability)
lp_py_test(rel_small test_small.py LABELS e2e reliability)

# The recording core and the importer under many threads, linked directly
# (no LD_PRELOAD): the one test the ThreadSanitizer tier runs.
lp_c_test(rel_core_stress SOURCES ${CMAKE_CURRENT_LIST_DIR}/core_stress.c
  LIBS latprof_core latprof_analyze Threads::Threads LABELS unit tsan sanitize)
target_include_directories(rel_core_stress PRIVATE ${PROJECT_SOURCE_DIR}/collector)

# What is not recorded is said, and the app keeps its descriptors: raw
# clone() tasks, io_uring waits, 32-bit and chrooted children, RLIMIT_NOFILE
# (docs/reliability.md).
add_executable(lp_rel_unseen ${CMAKE_CURRENT_LIST_DIR}/lp_rel_unseen.c)
target_compile_options(lp_rel_unseen PRIVATE -O2)
target_link_libraries(lp_rel_unseen PRIVATE Threads::Threads)
set_target_properties(lp_rel_unseen PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${lp_rel_dir})
# Its io_uring waits through a library's exported io_uring_enter2, as an
# app linked with liburing makes them.
add_library(lp_rel_uringlib SHARED ${CMAKE_CURRENT_LIST_DIR}/lp_rel_uringlib.c)
set_target_properties(lp_rel_uringlib PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${lp_rel_dir})
add_executable(lp_rel_uringapp ${CMAKE_CURRENT_LIST_DIR}/lp_rel_unseen.c)
target_compile_definitions(lp_rel_uringapp PRIVATE LP_REL_URINGLIB)
target_link_libraries(lp_rel_uringapp PRIVATE lp_rel_uringlib Threads::Threads)
set_target_properties(lp_rel_uringapp PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${lp_rel_dir})
# A 32-bit build of it, where the compiler has a 32-bit libc (gcc-multilib);
# sanitizer runtimes have no 32-bit copy here: plain flags only.
if(NOT LATPROF_SANITIZE AND NOT LATPROF_FUZZ)
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS -m32)
  set(CMAKE_REQUIRED_LINK_OPTIONS -m32)
  check_c_source_compiles("#include <stdio.h>\nint main(void) { return puts(\"\") < 0; }"
    LP_HAVE_M32)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(LP_HAVE_M32)
    add_executable(lp_rel_unseen32 ${CMAKE_CURRENT_LIST_DIR}/lp_rel_unseen.c)
    target_compile_options(lp_rel_unseen32 PRIVATE -m32 -O2)
    target_link_options(lp_rel_unseen32 PRIVATE -m32 -pthread)
    set_target_properties(lp_rel_unseen32 PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${lp_rel_dir})
  endif()
endif()
lp_py_test(rel_raw_clone test_raw_clone.py LABELS e2e reliability)
lp_py_test(rel_uring test_uring.py LABELS e2e reliability)
lp_py_test(rel_foreign_exec test_foreign_exec.py LABELS e2e reliability)
lp_py_test(rel_nofile test_nofile.py LABELS e2e reliability)
lp_py_test(rel_counters_why test_counters_why.py LABELS e2e reliability)
