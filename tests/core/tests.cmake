# End-to-end tests: record real programs with `latprof run` and
# assert on the numbers in the database.
add_executable(lp_core_proc ${CMAKE_CURRENT_LIST_DIR}/lp_core_proc.c)
target_compile_options(lp_core_proc PRIVATE -g -O2)
target_link_libraries(lp_core_proc PRIVATE Threads::Threads)
set_target_properties(lp_core_proc PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/core)

lp_py_test(core_contention test_contention.py LABELS e2e)
lp_py_test(core_python_lock test_python_lock.py LABELS e2e)
lp_py_test(core_exit_signals test_exit_signals.py LABELS e2e)
lp_py_test(core_process_tree test_process_tree.py LABELS e2e)
lp_py_test(core_stress test_stress.py LABELS e2e TIMEOUT 600)
lp_py_test(core_damaged_input test_damaged_input.py LABELS e2e)
lp_py_test(core_damaged_report test_damaged_report.py LABELS e2e)
# A misspelt long option names the one meant; no guess for far words.
lp_py_test(core_option_suggest test_option_suggest.py LABELS e2e)
lp_py_test(core_output_names test_output_names.py LABELS e2e)
lp_py_test(core_process_fold test_process_fold.py LABELS unit)
lp_py_test(core_proctab test_proctab.py LABELS e2e)
# cmake --install into a temporary prefix: man pages per command, bash/zsh
# completion, --version/-V, a recording from the prefix.
lp_py_test(core_install test_install.py LABELS e2e)
# A duration or percentage without its unit is refused alike in run, diff
# and check (exit 2, one line); with its unit it is taken.
lp_py_test(core_units test_units.py LABELS e2e)
# README's Getting started as written: install to ~/.local (HOME a temporary
# directory), record, the NVTX snippets in C, C++ and Python built and run.
lp_py_test(core_readme test_readme.py LABELS e2e)
# Progress lines on a terminal (a pty), none when piped or --quiet.
lp_py_test(core_progress test_progress.py LABELS e2e)
