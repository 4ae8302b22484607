# samples/offcpu_stages: one NVTX stage per off-CPU category (sleep, file
# and socket I/O, poll, on-CPU, preempted) with its own timings.
if(NVTX3_INCLUDE)
  add_executable(offcpu_stages ${CMAKE_CURRENT_LIST_DIR}/offcpu_stages.c)
  target_include_directories(offcpu_stages PRIVATE ${NVTX3_INCLUDE})
  target_compile_options(offcpu_stages PRIVATE -g -O2)
  target_link_libraries(offcpu_stages PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(offcpu_stages PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/samples)
endif()
