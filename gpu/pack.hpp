#pragma once
// Pack and unpack for alltoallv staging on device buffers: gather many
// (offset, length) byte ranges of one buffer into a contiguous buffer, and
// scatter a contiguous buffer back into ranges. comm/exec builds the FAST
// plan's copy lists once and replays them every iteration.
//
// Everything here is usable from plain host C++: no GPU runtime header is
// included. A build without a GPU back-end still has the host functions;
// DeviceCopyPlan then throws std::runtime_error when constructed.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace nestfast::gpu {

// A scattered piece of a buffer.
struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

// One copy: bytes [src_offset, src_offset + length) of the source go to
// [dst_offset, dst_offset + length) of the destination.
struct CopyRange {
  std::uint64_t src_offset = 0;
  std::uint64_t dst_offset = 0;
  std::uint64_t length = 0;
};

// Sum of the lengths.
std::uint64_t total_length(std::span<const ByteRange> ranges);

// Copies that gather `ranges` of a source into one contiguous buffer, in list order.
std::vector<CopyRange> pack_copies(std::span<const ByteRange> ranges);

// Copies that scatter a contiguous buffer (in list order) into `ranges` of a destination.
std::vector<CopyRange> unpack_copies(std::span<const ByteRange> ranges);

// Throws std::invalid_argument naming the first bad copy when a copy reaches past
// src_bytes or dst_bytes, or when two copies write overlapping destination bytes
// (the result would depend on the order the device runs them in).
void check_copies(std::span<const CopyRange> copies, std::uint64_t src_bytes, std::uint64_t dst_bytes);

// Host reference with the device kernel's semantics (and the same kernel body,
// run for every block and thread on the host). Checks the copies first.
void copy_ranges_host(const void* src, std::uint64_t src_bytes, void* dst, std::uint64_t dst_bytes,
                      std::span<const CopyRange> copies);

// A copy list checked and uploaded to the device once, then replayed.
// Zero-length copies are dropped; long copies are split into chunks so one
// launch keeps every multiprocessor busy whatever the length mix.
class DeviceCopyPlan {
 public:
  DeviceCopyPlan(std::span<const CopyRange> copies, std::uint64_t src_bytes, std::uint64_t dst_bytes);
  ~DeviceCopyPlan();
  DeviceCopyPlan(DeviceCopyPlan&&) noexcept;
  DeviceCopyPlan& operator=(DeviceCopyPlan&&) noexcept;
  DeviceCopyPlan(const DeviceCopyPlan&) = delete;
  DeviceCopyPlan& operator=(const DeviceCopyPlan&) = delete;

  // Runs all copies; device_src and device_dst are device pointers to at least
  // src_bytes and dst_bytes, whose copied ranges must not overlap in memory
  // (the copies run concurrently). Returns when the copies are complete, so
  // the destination can go straight to MPI.
  void run(const void* device_src, void* device_dst) const;

  std::uint64_t copied_bytes() const;
  std::uint64_t src_bytes() const;
  std::uint64_t dst_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nestfast::gpu
