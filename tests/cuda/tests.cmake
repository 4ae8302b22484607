# CUDA capture (issue 4). Unit tests need only the CUPTI library (no GPU).
if(TARGET latprof_cupti_tr)
  lp_c_test(lp_cupti_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/lp_cupti_test.c
    LIBS latprof_cupti_tr latprof_analyze LABELS unit)
  target_include_directories(lp_cupti_test PRIVATE ${CUPTI_INCLUDE})
  add_dependencies(lp_cupti_test latprof latprof_cupti)
endif()
if(TARGET cuda_pipeline)
  lp_py_test(cuda_e2e test_cuda_run.py LABELS e2e)
endif()
