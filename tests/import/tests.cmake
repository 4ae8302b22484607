# Imports of other profilers' captures: Nsight Systems SQLite
# exports and PyTorch profiler (Kineto) traces.
lp_py_test(import_realdata test_realdata.py LABELS e2e TIMEOUT 900)
lp_py_test(import_nsys_generated test_nsys_generated.py LABELS e2e)
lp_py_test(import_kineto_generated test_kineto_generated.py LABELS e2e)
# Wait class sync: CUDA host syncs of imports, never contention.
lp_py_test(import_sync_class test_sync_class.py LABELS e2e)
# Lock waits inserted in batches through a virtual table: rows,
# order and NULLs as written.
lp_py_test(import_batch_rows test_batch_rows.py LABELS e2e)
# The two-thread Kineto reader (import/captures/lp_json_pipe.c) against the one-thread
# one: same elements in the same order with a slow caller, errors as one line.
lp_c_test(json_pipe_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_json_pipe.c
  LIBS latprof_analyze LABELS unit tsan)
# Records with a zero or inverted timestamp (incomplete at the source's
# flush): dropped and counted, reports otherwise byte-identical.
lp_py_test(import_bad_timestamps test_bad_timestamps.py LABELS e2e)
# One huge string in a Kineto trace: kept to 32 KiB, counted, linear time.
lp_py_test(import_huge_string test_huge_string.py LABELS e2e)
# Every lock wait written imports with its exact duration, 0 ns included.
add_executable(gen_waits ${CMAKE_CURRENT_LIST_DIR}/gen_waits.c)
target_link_libraries(gen_waits PRIVATE latprof_core Threads::Threads)
set_target_properties(gen_waits PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin
  BUILD_RPATH ${CMAKE_BINARY_DIR}/lib/latprof)
lp_py_test(import_waits_exact test_waits_exact.py LABELS unit)
lp_py_test(import_block_categories test_block_categories.py LABELS unit)
# lp_import_dir's stats: every field this import's own, whatever the
# caller's struct held (a recording made by lp_core linked in); a short
# child-status record and an NVTX category whose name was lost are skipped.
lp_c_test(import_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_import.c
  LIBS latprof_core latprof_analyze Threads::Threads LABELS unit)
target_include_directories(import_unit PRIVATE ${PROJECT_SOURCE_DIR}/collector)
# The database check's schema list (db/) holds every import source's schema.
lp_c_test(import_db_schemas SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_db_schemas.c
  LIBS latprof_import LABELS unit)
