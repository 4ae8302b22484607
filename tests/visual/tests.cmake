# Visual outputs: report --html in headless Chromium, latprof plot's gnuplot
# scripts and data, export --chrome against Perfetto's importer rules.
if(NVTX3_INCLUDE)
  add_executable(lp_hostile ${CMAKE_CURRENT_LIST_DIR}/lp_hostile.c)
  target_include_directories(lp_hostile PRIVATE ${NVTX3_INCLUDE})
  target_link_libraries(lp_hostile PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  set_target_properties(lp_hostile PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)
endif()
lp_py_test(visual_html test_html.py LABELS e2e)
lp_py_test(visual_plot test_plot.py LABELS e2e)
lp_py_test(visual_chrome test_chrome.py LABELS e2e)
lp_py_test(visual_diff_html test_diff_html.py LABELS e2e)
# lp_timeseries' numbers (the charts' bins, the request timeline) against a
# brute-force reference on a hand-built database.
lp_c_test(timeseries_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_timeseries.c
  LIBS latprof_analyze LABELS unit)
# Pictures against the JSON report on a GIL-bound Python server started
# through launchers: category names, the process table, timelines, heatmap.
lp_py_test(visual_pictures test_pictures.py LABELS e2e)
