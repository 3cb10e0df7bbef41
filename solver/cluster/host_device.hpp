#pragma once
// NESTFAST_HD marks a function that is compiled for the host and, under nvcc
// or a HIP compiler, for the device too: the cost formulas the DP needs are
// written once and run unchanged on the CPU and in the gpu/ batch kernel.
#if defined(__HIP__)
#include <hip/hip_runtime.h>  // clang's HIP mode declares __host__/__device__ here
#endif

#ifndef NESTFAST_HD
#if defined(__CUDACC__) || defined(__HIP__)
#define NESTFAST_HD __host__ __device__
#else
#define NESTFAST_HD
#endif
#endif
