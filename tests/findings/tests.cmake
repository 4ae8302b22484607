# Bottleneck findings: every rule fires on a run that has its
# problem and stays quiet on one that does not. CPU rules on real runs of
# the samples and fnd_cpu; GPU rules on runs of fnd_gpu, whose synthetic
# CUPTI records go through the real translator, log and importer.
if(NVTX3_INCLUDE)
  add_executable(fnd_cpu ${CMAKE_CURRENT_LIST_DIR}/fnd_cpu.c)
  target_include_directories(fnd_cpu PRIVATE ${NVTX3_INCLUDE})
  target_link_libraries(fnd_cpu PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(fnd_cpu PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)
  # Slow requests that hold a global lock (long-critical-section).
  add_executable(fnd_holds ${CMAKE_CURRENT_LIST_DIR}/fnd_holds.c)
  target_compile_options(fnd_holds PRIVATE -g -O1)
  target_include_directories(fnd_holds PRIVATE ${NVTX3_INCLUDE})
  target_link_libraries(fnd_holds PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(fnd_holds PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)
  if(TARGET latprof_cupti_tr)
    add_executable(fnd_gpu ${CMAKE_CURRENT_LIST_DIR}/fnd_gpu.c)
    target_include_directories(fnd_gpu PRIVATE ${NVTX3_INCLUDE} ${CUPTI_INCLUDE})
    target_link_libraries(fnd_gpu PRIVATE latprof_cupti_tr latprof_core ${CMAKE_DL_LIBS})
    set_target_properties(fnd_gpu PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)
  endif()
endif()
# fnd_spin: a poll server without NVTX beside a spinning or a passive pool.
add_executable(fnd_spin ${CMAKE_CURRENT_LIST_DIR}/fnd_spin.c)
target_link_libraries(fnd_spin PRIVATE Threads::Threads)
set_target_properties(fnd_spin PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/bin)
lp_py_test(findings_spin test_findings_spin.py LABELS e2e)
lp_py_test(findings_cpu test_findings_cpu.py LABELS e2e TIMEOUT 600)
lp_py_test(findings_gpu test_findings_gpu.py LABELS e2e)
lp_py_test(findings_cli test_findings_cli.py LABELS e2e)
lp_py_test(findings_csv test_findings_csv.py LABELS e2e)
# Whose load, what a thread is for, one account (fnd_cpu, with other programs beside).
lp_py_test(findings_load test_findings_load.py LABELS e2e TIMEOUT 600)
# Hold times of a contended lock and long-critical-section (fnd_holds).
lp_py_test(findings_holds test_findings_holds.py LABELS e2e)
lp_py_test(findings_tail_causes test_tail_causes.py LABELS unit)
# The rule table against docs/rules.md, and each rule at its threshold.
lp_c_test(findings_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_findings.c
  LIBS latprof_analyze m LABELS unit)
target_compile_definitions(findings_unit PRIVATE LP_SRC_DIR="${PROJECT_SOURCE_DIR}")
lp_py_test(findings_boundaries test_boundaries.py LABELS unit)
