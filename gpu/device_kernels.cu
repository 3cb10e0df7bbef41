// Device probe and self-test kernel, one source for CUDA and HIP.
#include "gpu/device.hpp"
#include "gpu/portable.hpp"

#include <vector>

namespace nestfast::gpu {
namespace {

__global__ void write_index_squares(unsigned long long* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = static_cast<unsigned long long>(i) * static_cast<unsigned long long>(i);
}

}  // namespace

std::string backend_name() { return NESTFAST_GPU_BACKEND; }

void require_backend(const char*) {}

int device_count() noexcept {
  int count = 0;
  if (gpuGetDeviceCount(&count) != gpuSuccess) {
    (void)gpuGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return count;
}

bool run_self_test() {
  constexpr int n = 1000;
  unsigned long long* device_out = nullptr;
  NESTFAST_GPU_CHECK(gpuMalloc(&device_out, n * sizeof(unsigned long long)));
  write_index_squares<<<(n + 255) / 256, 256>>>(device_out, n);
  std::vector<unsigned long long> host(n);
  const gpuError_t launch = gpuGetLastError();
  const gpuError_t copy = gpuMemcpy(host.data(), device_out, n * sizeof(unsigned long long), gpuMemcpyDeviceToHost);
  NESTFAST_GPU_CHECK(gpuFree(device_out));
  NESTFAST_GPU_CHECK(launch);
  NESTFAST_GPU_CHECK(copy);
  for (int i = 0; i < n; ++i) {
    if (host[i] != static_cast<unsigned long long>(i) * static_cast<unsigned long long>(i)) return false;
  }
  return true;
}

}  // namespace nestfast::gpu
