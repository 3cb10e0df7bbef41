// Host-only build: no GPU back-end was found at configure time.
#include "gpu/device.hpp"

#include <stdexcept>

#if !defined(NESTFAST_GPU_CUDA) && !defined(NESTFAST_GPU_HIP)
namespace nestfast::gpu {

std::string backend_name() { return "none"; }
int device_count() noexcept { return 0; }
bool run_self_test() { throw std::runtime_error("this nestfast build has no GPU back-end (configure with nvcc or a HIP compiler)"); }

}  // namespace nestfast::gpu
#endif
