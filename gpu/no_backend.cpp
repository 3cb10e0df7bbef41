// The build without a GPU back-end (neither nvcc nor a HIP compiler was found
// or enabled): every device entry point says so instead of failing to link.
#if !defined(NESTFAST_GPU_CUDA) && !defined(NESTFAST_GPU_HIP)
#include <stdexcept>
#include <string>

#include "gpu/batched_dp_kernel.hpp"
#include "gpu/buffers.hpp"
#include "gpu/copy_kernel.hpp"
#include "gpu/device.hpp"

namespace nestfast::gpu {

std::string backend_name() { return "none"; }
int device_count() noexcept { return 0; }

void require_backend(const char* what) {
  throw std::runtime_error(std::string(what) +
                           " needs a GPU, but this nestfast build has no GPU back-end "
                           "(configure where nvcc or a HIP compiler exists)");
}

bool run_self_test() {
  require_backend("the device self-test");
  return false;
}

DeviceBuffer::DeviceBuffer(std::uint64_t) { require_backend("a device buffer"); }
DeviceBuffer::~DeviceBuffer() = default;
DeviceBuffer::DeviceBuffer(DeviceBuffer&&) noexcept = default;
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&&) noexcept = default;
void DeviceBuffer::copy_from_host(const void*, std::uint64_t, std::uint64_t) { require_backend("a device copy"); }
void DeviceBuffer::copy_to_host(void*, std::uint64_t, std::uint64_t) const { require_backend("a device copy"); }
void DeviceBuffer::fill_zero() { require_backend("a device fill"); }

PinnedHostBuffer::PinnedHostBuffer(std::uint64_t) { require_backend("a pinned host buffer"); }
PinnedHostBuffer::~PinnedHostBuffer() = default;
PinnedHostBuffer::PinnedHostBuffer(PinnedHostBuffer&&) noexcept = default;
PinnedHostBuffer& PinnedHostBuffer::operator=(PinnedHostBuffer&&) noexcept = default;

void copy_device_to_host(void*, const void*, std::uint64_t) { require_backend("a device copy"); }
void copy_host_to_device(void*, const void*, std::uint64_t) { require_backend("a device copy"); }
void synchronize_device() { require_backend("a device synchronisation"); }

namespace detail {
void launch_copy_chunks(const CopyRange*, std::uint64_t, const void*, void*) { require_backend("the copy kernel"); }
void launch_batched_dp(const PackedDpBatch&, std::vector<DpBatchOutput>&, std::vector<int>&) {
  require_backend("the batched DP kernel");
}
}  // namespace detail

}  // namespace nestfast::gpu
#endif
