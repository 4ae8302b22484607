# Run comparison: statistics, diff and check.
lp_c_test(lp_stats_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/lp_stats_test.c
  LIBS latprof_analyze LABELS unit)
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
