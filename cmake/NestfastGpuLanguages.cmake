# CUDA and HIP are optional: each is enabled when its compiler exists, and the
# gpu/ kernels are then compiled for it. Without either, gpu/ builds its host
# fallback only.
include(CheckLanguage)

option(NESTFAST_ENABLE_CUDA "Compile gpu/ kernels with CUDA when nvcc exists" ON)
option(NESTFAST_ENABLE_HIP "Compile gpu/ kernels with HIP when a HIP compiler exists" OFF)

set(NESTFAST_HAVE_CUDA OFF)
set(NESTFAST_HAVE_HIP OFF)

if(NESTFAST_ENABLE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)  # A100, H100/H200
    endif()
    # CMake 3.25 does not know nvcc 13's C++20 flag.
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 20)
    set(NESTFAST_HAVE_CUDA ON)
  endif()
endif()

if(NESTFAST_ENABLE_HIP)
  include(NestfastHipToolchain)
  nestfast_prepare_hip_toolchain()
  if(CMAKE_HIP_COMPILER)
    if(NOT DEFINED CMAKE_HIP_ARCHITECTURES)
      # MI250X. MI300X is gfx942 and needs ROCm >= 6 (Debian 12's HIP 5.2
      # cannot): -DCMAKE_HIP_ARCHITECTURES="gfx90a;gfx942" on such a cluster.
      set(CMAKE_HIP_ARCHITECTURES gfx90a)
    endif()
    enable_language(HIP)
    set(CMAKE_HIP_STANDARD 20)
    set(NESTFAST_HAVE_HIP ON)
  endif()
endif()
message(STATUS "nestfast GPU back-ends: CUDA=${NESTFAST_HAVE_CUDA} HIP=${NESTFAST_HAVE_HIP}")
