# Fuzzing. Each target's inputs live in tests/fuzz/<target>/:
# the seed corpus plus every input that ever crashed it (regressions).
#  - Every build replays them through the target (label unit): fuzz_replay.c
#    calls the same LLVMFuzzerTestOneInput, so a fixed crash stays fixed.
#  - -DLATPROF_FUZZ=ON (clang) builds the libFuzzer binaries; label fuzz runs
#    each for LP_FUZZ_SECONDS (environment at ctest time, default 60).
set(lp_fuzz_src ${CMAKE_CURRENT_LIST_DIR}/../fuzz)
set(lp_fuzz_targets import expect kineto)
set(lp_fuzz_libs_import latprof_analyze)
set(lp_fuzz_libs_kineto latprof_analyze) # Kineto trace import
set(lp_fuzz_libs_expect latprof_analyze)
if(TARGET latprof_cupti_tr)
  list(APPEND lp_fuzz_targets cupti)
  # the fuzzer walks buffers with the real cuptiActivityGetNextRecord too
  set(lp_fuzz_libs_cupti latprof_cupti_tr latprof_core ${CUPTI_LIB})
endif()
# fuzz_cupti rewrites the name pointers of kernel/device records to strings
# of its own before translating (CUPTI guarantees them; random bytes would
# crash by contract). Its seeds are real buffers: fuzz_cupti_seed writes
# them from tests/cuda's buffer construction (fuzz_cupti_seed tests/fuzz/cupti).
if(TARGET latprof_cupti_tr)
  add_executable(fuzz_cupti_seed ${lp_fuzz_src}/fuzz_cupti_seed.c)
  target_link_libraries(fuzz_cupti_seed PRIVATE latprof_cupti_tr latprof_analyze ${CUPTI_LIB})
  target_include_directories(fuzz_cupti_seed PRIVATE ${PROJECT_SOURCE_DIR}/tests/lib)
endif()
set(lp_fuzz_no_timed_run)

foreach(t ${lp_fuzz_targets})
  if(LATPROF_FUZZ)
    add_executable(fuzz_${t} ${lp_fuzz_src}/fuzz_${t}.c)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(fuzz_${t} PRIVATE ${lp_fuzz_libs_${t}})
    set(work ${CMAKE_BINARY_DIR}/tests/fuzz/${t}-corpus)
    file(MAKE_DIRECTORY ${work})
    # New inputs go to the build tree's corpus; the checked-in one is read only.
    add_test(NAME fuzz_${t} COMMAND sh -c
      "exec \"$0\" -max_total_time=\${LP_FUZZ_SECONDS:-60} -timeout=10 -rss_limit_mb=2048 \
-print_final_stats=1 -artifact_prefix=${CMAKE_BINARY_DIR}/tests/fuzz/${t}- \"$1\" \"$2\""
      $<TARGET_FILE:fuzz_${t}> ${work} ${lp_fuzz_src}/${t})
    set_tests_properties(fuzz_${t} PROPERTIES LABELS fuzz TIMEOUT 900)
    if(t IN_LIST lp_fuzz_no_timed_run)
      set_tests_properties(fuzz_${t} PROPERTIES DISABLED ON)
    endif()
  endif()
  add_executable(fuzz_replay_${t} ${lp_fuzz_src}/fuzz_replay.c ${lp_fuzz_src}/fuzz_${t}.c)
  if(LATPROF_FUZZ)
    target_link_options(fuzz_replay_${t} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  target_link_libraries(fuzz_replay_${t} PRIVATE ${lp_fuzz_libs_${t}})
  add_test(NAME fuzz_replay_${t} COMMAND fuzz_replay_${t} ${lp_fuzz_src}/${t})
  set_tests_properties(fuzz_replay_${t} PROPERTIES LABELS "unit;sanitize" TIMEOUT 300)
endforeach()
