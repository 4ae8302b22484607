# CUDA capture. Unit tests need only the CUPTI library (no GPU).
if(TARGET latprof_cupti_tr)
  lp_c_test(cupti_unit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cupti.c
    LIBS latprof_cupti_tr latprof_analyze LABELS unit)
  target_include_directories(cupti_unit PRIVATE ${CUPTI_INCLUDE})
  add_dependencies(cupti_unit latprof latprof_cupti)
endif()
if(TARGET cuda_pipeline)
  lp_py_test(cuda_e2e test_cuda_run.py LABELS e2e)
endif()

# The collector itself (start-up order, buffer callbacks and limit, dropped
# counts, flushes at cudaDeviceReset and exit) under latprof run, with a
# stand-in libcupti.so.13 that plays CUPTI's part and an app that plays the
# driver's (tests/cuda/fake_cupti.c, fake_cupti_app.c).
if(TARGET latprof_cupti AND NVTX3_INCLUDE)
  get_filename_component(lp_real_cupti ${CUPTI_LIB} REALPATH)
  add_library(fake_cupti SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_cupti.c)
  target_include_directories(fake_cupti PRIVATE ${CUPTI_INCLUDE})
  target_compile_definitions(fake_cupti PRIVATE LP_REAL_CUPTI="${lp_real_cupti}")
  target_link_libraries(fake_cupti PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  target_link_options(fake_cupti PRIVATE -Wl,-soname,libcupti.so.13)
  set_target_properties(fake_cupti PROPERTIES OUTPUT_NAME cupti SUFFIX ".so.13" PREFIX "lib"
    C_VISIBILITY_PRESET hidden LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/cuda/fake)
  add_executable(fake_cupti_app ${CMAKE_CURRENT_LIST_DIR}/fake_cupti_app.c)
  target_include_directories(fake_cupti_app PRIVATE ${NVTX3_INCLUDE} ${CUPTI_INCLUDE})
  target_link_libraries(fake_cupti_app PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  # The driver entry points the collector looks up (dlsym) live in the app.
  set_target_properties(fake_cupti_app PROPERTIES ENABLE_EXPORTS ON
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/cuda)
  add_dependencies(fake_cupti_app fake_cupti latprof_cupti)
  lp_py_test(cuda_collector test_collector.py LABELS e2e)
endif()
