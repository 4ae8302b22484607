# Lock report and symbolization (issue 2, items 6-7).
lp_c_test(lp_symbols_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/lp_symbols_test.c
  LIBS latprof_analyze LABELS unit)
target_compile_options(lp_symbols_test PRIVATE -g -O1)
