// GPU-aware MPI detection and the per-buffer direct / staged data path.
#include "gpu/gpu_aware_mpi.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_Query_cuda_support / MPIX_Query_rocm_support
#endif

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "gpu/buffers.hpp"

namespace nestfast::gpu {
namespace {

// What this MPI library says about this build's back-end.
GpuAwareMpi ask_the_mpi_library() {
#if !defined(NESTFAST_GPU_CUDA) && !defined(NESTFAST_GPU_HIP)
  return {false, "no GPU back-end in this build"};
#elif defined(MPIX_GPU_SUPPORT_CUDA)  // MPICH >= 4
#if defined(NESTFAST_GPU_HIP)
  const int kind = MPIX_GPU_SUPPORT_HIP;
  const std::string name = "MPIX_GPU_query_support(HIP)";
#else
  const int kind = MPIX_GPU_SUPPORT_CUDA;
  const std::string name = "MPIX_GPU_query_support(CUDA)";
#endif
  int supported = 0;
  if (MPIX_GPU_query_support(kind, &supported) != MPI_SUCCESS) return {false, name + " failed"};
  return {supported != 0, name + " = " + std::to_string(supported)};
#elif defined(NESTFAST_GPU_CUDA) && defined(MPIX_CUDA_AWARE_SUPPORT)  // Open MPI
  const int supported = MPIX_Query_cuda_support();
  return {supported != 0, "MPIX_Query_cuda_support() = " + std::to_string(supported)};
#elif defined(NESTFAST_GPU_HIP) && defined(MPIX_ROCM_AWARE_SUPPORT)  // Open MPI >= 5
  const int supported = MPIX_Query_rocm_support();
  return {supported != 0, "MPIX_Query_rocm_support() = " + std::to_string(supported)};
#else
  return {false, "this MPI has no GPU-support query"};
#endif
}

}  // namespace

GpuAwareMpi query_gpu_aware_mpi() {
  GpuAwareMpi answer = ask_the_mpi_library();
  if (const char* forced = std::getenv("NESTFAST_GPU_AWARE_MPI")) {
    const std::string value = forced;
    if (value != "0" && value != "1") {
      throw std::invalid_argument("NESTFAST_GPU_AWARE_MPI must be 0 or 1, got '" + value + "'");
    }
    answer.gpu_aware = value == "1";
    answer.how = "NESTFAST_GPU_AWARE_MPI=" + value + " (the library said: " + answer.how + ")";
  }
  return answer;
}

MpiDeviceMode choose_mpi_device_mode(const GpuAwareMpi& support) {
  return support.gpu_aware ? MpiDeviceMode::direct : MpiDeviceMode::staged;
}

const char* to_string(MpiDeviceMode mode) { return mode == MpiDeviceMode::direct ? "direct" : "staged"; }

struct MpiDeviceBuffer::Impl {
  char* device = nullptr;
  std::uint64_t bytes = 0;
  MpiDeviceMode mode = MpiDeviceMode::staged;
  PinnedHostBuffer mirror;  // staged mode only

  void check_range(std::uint64_t offset, std::uint64_t length) const {
    if (length > bytes || offset > bytes - length) {
      throw std::out_of_range("MPI buffer range [" + std::to_string(offset) + ", +" + std::to_string(length) +
                              ") leaves the " + std::to_string(bytes) + "-byte buffer");
    }
  }
};

MpiDeviceBuffer::MpiDeviceBuffer(void* device, std::uint64_t bytes, MpiDeviceMode mode)
    : impl_(std::make_unique<Impl>()) {
  impl_->device = static_cast<char*>(device);
  impl_->bytes = bytes;
  impl_->mode = mode;
  if (mode == MpiDeviceMode::staged) impl_->mirror = PinnedHostBuffer(bytes);
}

MpiDeviceBuffer::~MpiDeviceBuffer() = default;
MpiDeviceBuffer::MpiDeviceBuffer(MpiDeviceBuffer&&) noexcept = default;
MpiDeviceBuffer& MpiDeviceBuffer::operator=(MpiDeviceBuffer&&) noexcept = default;

void* MpiDeviceBuffer::for_mpi(std::uint64_t offset) const {
  impl_->check_range(offset, 0);
  char* base = impl_->mode == MpiDeviceMode::direct ? impl_->device : static_cast<char*>(impl_->mirror.data());
  return base + offset;
}

void MpiDeviceBuffer::prepare_send(std::uint64_t offset, std::uint64_t length) const {
  impl_->check_range(offset, length);
  if (impl_->mode == MpiDeviceMode::direct) {
    synchronize_device();
  } else {
    copy_device_to_host(static_cast<char*>(impl_->mirror.data()) + offset, impl_->device + offset, length);
  }
}

void MpiDeviceBuffer::finish_receive(std::uint64_t offset, std::uint64_t length) const {
  impl_->check_range(offset, length);
  if (impl_->mode == MpiDeviceMode::staged) {
    copy_host_to_device(impl_->device + offset, static_cast<const char*>(impl_->mirror.data()) + offset, length);
  }
}

MpiDeviceMode MpiDeviceBuffer::mode() const { return impl_->mode; }
std::uint64_t MpiDeviceBuffer::size() const { return impl_->bytes; }

}  // namespace nestfast::gpu
