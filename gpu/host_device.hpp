#pragma once
// NESTFAST_HD marks a function that is compiled for the host and, under nvcc
// or a HIP compiler, for the device too. Kernel bodies written with it run
// unchanged in the host emulation tests that CI runs without a GPU.
#if defined(__HIP__)
#include <hip/hip_runtime.h>  // clang's HIP mode declares __host__/__device__ here
#endif

// solver/search/level_dp_kernel.hpp defines the same macro the same way.
#ifndef NESTFAST_HD
#if defined(__CUDACC__) || defined(__HIP__)
#define NESTFAST_HD __host__ __device__
#else
#define NESTFAST_HD
#endif
#endif

// True while compiling the device side of a translation unit.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define NESTFAST_DEVICE_PASS 1
#else
#define NESTFAST_DEVICE_PASS 0
#endif
