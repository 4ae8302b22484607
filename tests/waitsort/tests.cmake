# import/sources/lp_waitsort: lock waits put in start order, against qsort of the
# same rows; runs per thread, out-of-order rows, ties, drains that reuse it.
lp_c_test(waitsort_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_waitsort.c
  LIBS latprof_analyze LABELS unit)
