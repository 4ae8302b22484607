# The interposer's edge cases, one program mode per run (lp_contend: mutex,
# rwlock and errorcheck behaviour, fork+exec, exit; lp_misc: condition
# variables, semaphores, thread names, vfork, system(), dlopen, a child
# killed by SIGKILL), each recorded through `latprof run` and checked in the
# database.
foreach(p lp_contend lp_misc)
  add_executable(${p} ${CMAKE_CURRENT_LIST_DIR}/${p}.c)
  target_compile_options(${p} PRIVATE -g -O1)
  target_link_libraries(${p} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  target_include_directories(${p} PRIVATE ${PROJECT_SOURCE_DIR}/tests/lib) # lp_asleep.h
  set_target_properties(${p} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/preload)
endforeach()
lp_py_test(preload_modes test_modes.py LABELS e2e)
