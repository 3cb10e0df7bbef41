// Device and pinned host buffers on the CUDA or HIP runtime.
#include <stdexcept>
#include <string>
#include <utility>

#include "gpu/buffers.hpp"
#include "gpu/portable.hpp"

namespace nestfast::gpu {
namespace {

void check_range(std::uint64_t offset, std::uint64_t bytes, std::uint64_t size) {
  if (bytes > size || offset > size - bytes) {
    throw std::out_of_range("device buffer range [" + std::to_string(offset) + ", +" + std::to_string(bytes) +
                            ") leaves the " + std::to_string(size) + "-byte buffer");
  }
}

}  // namespace

DeviceBuffer::DeviceBuffer(std::uint64_t bytes) : size_(bytes) {
  if (bytes > 0) NESTFAST_GPU_CHECK(gpuMalloc(&data_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) (void)gpuFree(data_);  // a destructor must not throw
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) (void)gpuFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void DeviceBuffer::copy_from_host(const void* host, std::uint64_t bytes, std::uint64_t offset) {
  check_range(offset, bytes, size_);
  if (bytes == 0) return;
  NESTFAST_GPU_CHECK(gpuMemcpy(static_cast<char*>(data_) + offset, host, bytes, gpuMemcpyHostToDevice));
}

void DeviceBuffer::copy_to_host(void* host, std::uint64_t bytes, std::uint64_t offset) const {
  check_range(offset, bytes, size_);
  if (bytes == 0) return;
  NESTFAST_GPU_CHECK(gpuMemcpy(host, static_cast<const char*>(data_) + offset, bytes, gpuMemcpyDeviceToHost));
}

void DeviceBuffer::fill_zero() {
  if (size_ > 0) NESTFAST_GPU_CHECK(gpuMemset(data_, 0, size_));
}

PinnedHostBuffer::PinnedHostBuffer(std::uint64_t bytes) : size_(bytes) {
  if (bytes > 0) NESTFAST_GPU_CHECK(gpuMallocHost(&data_, bytes));
}

PinnedHostBuffer::~PinnedHostBuffer() {
  if (data_ != nullptr) (void)gpuFreeHost(data_);
}

PinnedHostBuffer::PinnedHostBuffer(PinnedHostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

PinnedHostBuffer& PinnedHostBuffer::operator=(PinnedHostBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) (void)gpuFreeHost(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void copy_device_to_host(void* host, const void* device, std::uint64_t bytes) {
  if (bytes > 0) NESTFAST_GPU_CHECK(gpuMemcpy(host, device, bytes, gpuMemcpyDeviceToHost));
}

void copy_host_to_device(void* device, const void* host, std::uint64_t bytes) {
  if (bytes > 0) NESTFAST_GPU_CHECK(gpuMemcpy(device, host, bytes, gpuMemcpyHostToDevice));
}

void synchronize_device() { NESTFAST_GPU_CHECK(gpuDeviceSynchronize()); }

}  // namespace nestfast::gpu
