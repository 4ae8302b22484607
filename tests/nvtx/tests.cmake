# NVTX capture: edge cases, programmed stage costs, Python nvtx,
# and the push+pop benchmark (label bench).
if(NVTX3_INCLUDE)
  add_executable(lp_nvtx_cases ${CMAKE_CURRENT_LIST_DIR}/lp_nvtx_cases.c)
  target_include_directories(lp_nvtx_cases PRIVATE ${NVTX3_INCLUDE})
  target_compile_options(lp_nvtx_cases PRIVATE -g -O1)
  target_link_libraries(lp_nvtx_cases PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(lp_nvtx_cases PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/nvtx)

  # one named domain created and used by several threads at once
  add_executable(lp_nvtx_domrace ${CMAKE_CURRENT_LIST_DIR}/lp_nvtx_domrace.c)
  target_include_directories(lp_nvtx_domrace PRIVATE ${NVTX3_INCLUDE})
  target_compile_options(lp_nvtx_domrace PRIVATE -g -O1)
  target_link_libraries(lp_nvtx_domrace PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(lp_nvtx_domrace PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/nvtx)

  add_executable(bench_nvtx ${PROJECT_SOURCE_DIR}/tests/bench/bench_nvtx.c)
  target_include_directories(bench_nvtx PRIVATE ${NVTX3_INCLUDE})
  target_compile_options(bench_nvtx PRIVATE -O2)
  target_link_libraries(bench_nvtx PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(bench_nvtx PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bench)

  lp_py_test(nvtx_cases test_nvtx_cases.py LABELS e2e)
  lp_py_test(nvtx_stages test_nvtx_stages.py LABELS e2e)
  lp_py_test(nvtx_python test_nvtx_python.py LABELS e2e)
  lp_py_test(nvtx_domrace test_nvtx_domrace.py LABELS e2e)
  lp_py_test(bench_nvtx_pushpop bench_nvtx.py LABELS bench TIMEOUT 900)
endif()
# A run without NVTX ranges says once how to add them.
lp_py_test(nvtx_hint test_nvtx_hint.py LABELS e2e)
