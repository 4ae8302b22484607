# samples/infer_server (C) and infer_server_cpp (nvtx3.hpp): NVTX-annotated
# inference servers with programmed stage costs; py_nvtx.py is the
# Python flavour (PyPI package `nvtx`).
if(NVTX3_INCLUDE)
  add_executable(infer_server ${CMAKE_CURRENT_LIST_DIR}/infer_server.c)
  target_include_directories(infer_server PRIVATE ${NVTX3_INCLUDE})
  target_compile_options(infer_server PRIVATE -g -O2)
  target_link_libraries(infer_server PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  add_executable(infer_server_cpp ${CMAKE_CURRENT_LIST_DIR}/infer_server_cpp.cpp)
  target_include_directories(infer_server_cpp PRIVATE ${NVTX3_INCLUDE})
  target_compile_features(infer_server_cpp PRIVATE cxx_std_14)
  target_compile_options(infer_server_cpp PRIVATE -g -O2)
  target_link_libraries(infer_server_cpp PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(infer_server infer_server_cpp PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/samples)
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/py_nvtx.py ${CMAKE_BINARY_DIR}/samples/py_nvtx.py COPYONLY)
