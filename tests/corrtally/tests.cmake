# import/captures/lp_corrtally: GPU work without its call, counted by correlation
# id, against a brute-force reference; the cases that turn it off.
lp_c_test(corrtally_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_corrtally.c
  LIBS latprof_analyze LABELS unit)
