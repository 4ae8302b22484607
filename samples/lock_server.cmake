# samples/lock_server: the README's demo, and the program the e2e tests record.
add_executable(lock_server ${CMAKE_CURRENT_LIST_DIR}/lock_server.c)
target_compile_options(lock_server PRIVATE -g -O2)
target_link_libraries(lock_server PRIVATE Threads::Threads)
set_target_properties(lock_server PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/samples)
configure_file(${CMAKE_CURRENT_LIST_DIR}/py_lock.py ${CMAKE_BINARY_DIR}/samples/py_lock.py COPYONLY)
