# analysis/lp_ivset: interval sets and nearest-rank percentiles against
# brute-force references, edge cases and 10 M intervals.
lp_c_test(ivset_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ivset.c
  LIBS latprof_analyze LABELS unit)
