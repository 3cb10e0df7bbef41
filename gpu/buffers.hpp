#pragma once
// RAII device and pinned host buffers, usable from plain host C++ (no GPU
// runtime header here). In a build without a GPU back-end, constructing one
// throws std::runtime_error saying so.
#include <cstdint>

namespace nestfast::gpu {

// Device memory of `bytes` bytes on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::uint64_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  std::uint64_t size() const { return size_; }

  // Blocking copies; throw std::out_of_range when the range leaves the buffer.
  void copy_from_host(const void* host, std::uint64_t bytes, std::uint64_t offset = 0);
  void copy_to_host(void* host, std::uint64_t bytes, std::uint64_t offset = 0) const;
  void fill_zero();

 private:
  void* data_ = nullptr;
  std::uint64_t size_ = 0;
};

// Page-locked host memory (fast DMA, the staging area for non-GPU-aware MPI).
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  explicit PinnedHostBuffer(std::uint64_t bytes);
  ~PinnedHostBuffer();
  PinnedHostBuffer(PinnedHostBuffer&& other) noexcept;
  PinnedHostBuffer& operator=(PinnedHostBuffer&& other) noexcept;
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;

  void* data() const { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  std::uint64_t size_ = 0;
};

// Blocking copies between any two of host / pinned / device memory, and a
// wait for all work queued on the current device.
void copy_device_to_host(void* host, const void* device, std::uint64_t bytes);
void copy_host_to_device(void* device, const void* host, std::uint64_t bytes);
void synchronize_device();

}  // namespace nestfast::gpu
