# samples/cuda: the CUDA request pipeline. Built only when nvcc is
# found; it builds without a GPU or driver and then exits 3 with a message.
include(CheckLanguage)
if(NOT CMAKE_CUDA_COMPILER AND EXISTS ${LATPROF_CUDA_ROOT}/bin/nvcc)
  set(CMAKE_CUDA_COMPILER ${LATPROF_CUDA_ROOT}/bin/nvcc)
endif()
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(STATUS "latprof: nvcc not found: samples/cuda is not built")
  return()
endif()
enable_language(CUDA)
add_executable(cuda_pipeline ${CMAKE_CURRENT_LIST_DIR}/cuda/cuda_pipeline.cu)
# Shared cudart: the modules table then shows the app used CUDA even when
# no driver ever loaded (the honest-failure line relies on it).
# 75 = oldest CUDA 13 target; PTX of 75 is JIT-compiled on newer GPUs, 90 native for H100/H200.
set_target_properties(cuda_pipeline PROPERTIES
  CUDA_RUNTIME_LIBRARY Shared
  CUDA_ARCHITECTURES "75;90"
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/samples)
# The project's warning flags are gcc's; nvcc gets them through -Xcompiler.
set_property(TARGET cuda_pipeline PROPERTY COMPILE_OPTIONS -Xcompiler=-Wall,-Wextra)
target_include_directories(cuda_pipeline PRIVATE ${NVTX3_INCLUDE})
target_link_libraries(cuda_pipeline PRIVATE ${CMAKE_DL_LIBS})

# GPU work whose counts and cudaEvent timings the program prints itself:
# the second source of tests/gpu/truth.py.
add_executable(cuda_truth ${CMAKE_CURRENT_LIST_DIR}/cuda/cuda_truth.cu)
set_target_properties(cuda_truth PROPERTIES
  CUDA_RUNTIME_LIBRARY Shared
  CUDA_ARCHITECTURES "75;90"
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/samples)
set_property(TARGET cuda_truth PROPERTY COMPILE_OPTIONS -Xcompiler=-Wall,-Wextra)
target_include_directories(cuda_truth PRIVATE ${NVTX3_INCLUDE})
