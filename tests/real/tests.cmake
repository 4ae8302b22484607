# Real programs from Debian and PyPI packages (scripts/setup.sh installs
# them), recorded as a new user would; each case asserts latprof's verdicts
# and runs in under 60 s. Label `real` (the default tier of scripts/test.sh).
# A missing package skips with its name.
function(lp_real_test name script)
  lp_py_test(${name} ${script} LABELS real TIMEOUT 120)
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
    "PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/lib:${CMAKE_CURRENT_LIST_DIR}")
  set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
endfunction()

lp_real_test(real_py_gil test_py_gil.py)
lp_real_test(real_ort_spin test_ort_spin.py)
lp_real_test(real_pigz test_pigz.py)
lp_real_test(real_xz test_xz.py)
lp_real_test(real_memcached test_memcached.py)
lp_real_test(real_memcached_killed test_memcached_killed.py)
lp_real_test(real_postgres test_postgres.py)
lp_real_test(real_postgres_runq test_postgres_runq.py)
lp_real_test(real_memcached_runq test_memcached_runq.py)
lp_real_test(real_py_frames test_py_frames.py)
lp_real_test(real_py_pool_ext test_py_pool_ext.py)
lp_real_test(real_py_tail test_py_tail.py)
lp_real_test(real_rust_mutex test_rust_mutex.py)
lp_real_test(real_mp_lock test_mp_lock.py)
lp_real_test(real_java_monitor test_java_monitor.py)
lp_real_test(real_java_lock test_java_lock.py)
lp_real_test(real_node_frames test_node_frames.py)
lp_real_test(real_mariadb_futex test_mariadb_futex.py)
