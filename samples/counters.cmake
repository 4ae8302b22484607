# samples/counters_demo: stages with known counter signatures.
if(NVTX3_INCLUDE)
  add_executable(counters_demo ${CMAKE_CURRENT_LIST_DIR}/counters_demo.c)
  target_include_directories(counters_demo PRIVATE ${NVTX3_INCLUDE})
  target_compile_options(counters_demo PRIVATE -g -O2)
  target_link_libraries(counters_demo PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(counters_demo PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/samples)
endif()
