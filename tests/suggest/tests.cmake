# util/lp_suggest: "did you mean" against hand-checked misspellings.
lp_c_test(suggest_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_suggest.c
  LIBS latprof_analyze LABELS unit)
