// HIP build of the portable kernel source.
#include "gpu/device_kernels.cu"
