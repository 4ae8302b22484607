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

# A test build of the interposer that takes every CPython for a version
# latprof does not know (LATPROF_TEST_PY_VERSION), in a directory of its own
# beside the real core: test_py_unknown.py runs `latprof run` with it
# (LATPROF_LIBDIR) and checks that nothing but the Python frames changes.
get_target_property(lp_preload_srcs latprof_preload SOURCES)
list(TRANSFORM lp_preload_srcs PREPEND ${PROJECT_SOURCE_DIR}/preload/)
set(lp_fakepy_dir ${CMAKE_BINARY_DIR}/tests/fakepy)
add_library(latprof_preload_fakepy SHARED ${lp_preload_srcs})
target_include_directories(latprof_preload_fakepy PRIVATE ${PROJECT_SOURCE_DIR}/preload)
target_compile_definitions(latprof_preload_fakepy PRIVATE LATPROF_TEST_PY_VERSION=0x030f00f0)
target_link_libraries(latprof_preload_fakepy PRIVATE latprof_core Threads::Threads
  ${CMAKE_DL_LIBS})
target_compile_options(latprof_preload_fakepy PRIVATE -fno-omit-frame-pointer)
target_link_options(latprof_preload_fakepy PRIVATE
  "LINKER:--version-script=${PROJECT_SOURCE_DIR}/preload/lp_preload.map" "LINKER:-z,now"
  "LINKER:-z,nodelete")
set_target_properties(latprof_preload_fakepy PROPERTIES C_VISIBILITY_PRESET hidden
  OUTPUT_NAME latprof_preload LIBRARY_OUTPUT_DIRECTORY ${lp_fakepy_dir}
  BUILD_RPATH "${CMAKE_BINARY_DIR}/lib/latprof")
add_custom_command(TARGET latprof_preload_fakepy POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E create_symlink $<TARGET_FILE:latprof_core>
  ${lp_fakepy_dir}/liblatprof_core.so)
lp_py_test(preload_py_unknown test_py_unknown.py LABELS e2e)
set_property(TEST preload_py_unknown APPEND PROPERTY ENVIRONMENT
  "LP_FAKEPY_LIBDIR=${lp_fakepy_dir}"
  "PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/lib:${PROJECT_SOURCE_DIR}/tests/real")

# An app built with AddressSanitizer under the (uninstrumented) interposer:
# the sanitizer runtime interposes pthread_mutex_unlock too and its own
# __pthread_mutex_unlock has no real function behind it (glibc >= 2.34).
if(NOT LATPROF_SANITIZE AND NOT LATPROF_FUZZ)
  add_executable(lp_contend_asan ${CMAKE_CURRENT_LIST_DIR}/lp_contend.c)
  target_compile_options(lp_contend_asan PRIVATE -g -O1 -fsanitize=address)
  target_link_options(lp_contend_asan PRIVATE -fsanitize=address)
  target_link_libraries(lp_contend_asan PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  target_include_directories(lp_contend_asan PRIVATE ${PROJECT_SOURCE_DIR}/tests/lib)
  set_target_properties(lp_contend_asan PROPERTIES RUNTIME_OUTPUT_DIRECTORY
    ${CMAKE_BINARY_DIR}/tests/preload)
  lp_py_test(preload_asan_app test_asan_app.py LABELS e2e)
endif()
