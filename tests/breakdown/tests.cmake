# Request/stage breakdown: unit tests of the interval sweep and percentiles,
# end-to-end tests on recorded NVTX programs.
lp_c_test(breakdown_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_bd_unit.c
  LIBS latprof_analyze LABELS unit)
