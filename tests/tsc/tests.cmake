# collector/lp_tsc.h: the TSC-to-CLOCK_MONOTONIC arithmetic of the NVTX and
# blocking-call clocks, on synthetic points and on this machine's clock.
lp_c_test(tsc_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tsc.c
  LIBS latprof_core LABELS unit)
