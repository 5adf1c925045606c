# KIMI_CUDA=ON: kimi_gpu (the kernels, nvcc) and kimi_gpu_peak (the cuBLAS BF16 peak), included
# by engine/gpu/CMakeLists.txt with _kimi_gpu_sources set; sets _kimi_gpu_component.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND KIMI_NVCC)
  set(CMAKE_CUDA_COMPILER ${KIMI_NVCC})
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  # Hopper (H100/H200), and Blackwell (B200/B300) where this nvcc knows it.
  execute_process(COMMAND ${KIMI_NVCC} --list-gpu-arch OUTPUT_VARIABLE _kimi_nvcc_archs ERROR_QUIET)
  if(_kimi_nvcc_archs MATCHES "compute_100")
    set(CMAKE_CUDA_ARCHITECTURES "90;100")
  else()
    set(CMAKE_CUDA_ARCHITECTURES "90")
  endif()
endif()
enable_language(CUDA)
# CMake 3.25 (Debian 12) predates C++20 support in its nvcc tables: teach it the flag.
if(NOT CMAKE_CUDA20_COMPILE_FEATURES)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
  list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
endif()
set(CMAKE_CUDA_STANDARD 20)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(_kimi_cuda_flags -Xcompiler=-Wall,-Wextra,-Werror -Werror all-warnings)
find_package(CUDAToolkit REQUIRED)
message(STATUS "KIMI_CUDA: building engine/gpu for CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}")

add_library(kimi_gpu STATIC ${_kimi_gpu_sources})
target_link_libraries(kimi_gpu PUBLIC kimi_core kimi_io CUDA::cudart PRIVATE kimi_warnings)
target_compile_options(kimi_gpu PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${_kimi_cuda_flags} -lineinfo>)

add_library(kimi_gpu_peak STATIC peak_matmul.cu)
target_link_libraries(kimi_gpu_peak PUBLIC kimi_gpu PRIVATE CUDA::cublas kimi_warnings)
target_compile_options(kimi_gpu_peak PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${_kimi_cuda_flags}>)

set(_kimi_gpu_component cuda)
