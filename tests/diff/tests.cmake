# Run comparison: statistics, diff and check.
lp_c_test(stats_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_stats.c
  LIBS latprof_analyze LABELS unit)
# lp_diff_compute on sides built in memory: estimates against brute force,
# verdicts of scaled samples, the minimum-sample boundary, locks, findings.
lp_c_test(diff_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_diff.c
  LIBS latprof_analyze m LABELS unit)
lp_py_test(diff_synthetic test_diff_synthetic.py LABELS e2e)
lp_py_test(diff_infer test_diff_infer.py LABELS e2e)
lp_py_test(diff_check test_check.py LABELS e2e)
lp_py_test(diff_damage test_diff_damage.py LABELS e2e reliability)
# The noise floor's interval against a reference; a true +12% on one run each.
lp_py_test(diff_noise_floor test_noise_floor.py LABELS unit)
# New and resolved findings, each named, on synthetic runs with known findings.
lp_py_test(diff_findings test_diff_findings.py LABELS unit)
# Request ranges only, no stages: the diff of the outermost rows alone.
lp_py_test(diff_requests_only test_diff_requests_only.py LABELS unit)
# Three answers on real runs, one a side: a 30% slower stage, and the same
# program beside CPU hogs (preemption).
lp_py_test(diff_verdicts test_diff_verdicts.py LABELS e2e)
