# Blocking calls (issue 16): the interposer's hooks and the off-CPU
# categories of the breakdown, against programs that time themselves.
lp_py_test(block_offcpu test_offcpu.py LABELS e2e)
# pinned to core 0 and timed against the program's own clocks: alone
set_tests_properties(block_offcpu PROPERTIES RUN_SERIAL TRUE)
