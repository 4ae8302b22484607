# Trials of latprof diff's verdicts on real recordings: A/A false
# alarms and power, counted and asserted. Label trials: part of the default
# tier (about 5 minutes on 2 cores), left out of the sanitizer tiers.
lp_py_test(trials_diff test_trials.py LABELS trials TIMEOUT 900)
set_tests_properties(trials_diff PROPERTIES RUN_SERIAL TRUE)
