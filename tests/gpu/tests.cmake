# GPU checks. tests/gpu/run.sh needs a machine with an NVIDIA GPU
# and is run by hand (see tests/gpu/README.md); here, without a GPU, its
# checker is tested on fnd_gpu's imitation of both sample modes.
if(TARGET fnd_gpu)
  lp_py_test(gpu_checker test_check.py LABELS e2e)
endif()
