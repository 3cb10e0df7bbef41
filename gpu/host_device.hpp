#pragma once
// NESTFAST_HD marks a function that is compiled for the host and, under nvcc
// or a HIP compiler, for the device too. Kernel bodies written with it run
// unchanged in the host emulation tests that CI runs without a GPU.
#include "solver/cluster/host_device.hpp"

// True while compiling the device side of a translation unit.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define NESTFAST_DEVICE_PASS 1
#else
#define NESTFAST_DEVICE_PASS 0
#endif
