// Copy lists for alltoallv staging: building, checking, the host reference,
// and the device plan (upload once, replay). Only the kernel launch itself
// lives in the back-end's copy_kernel.cu.
#include "gpu/pack.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "gpu/buffers.hpp"
#include "gpu/copy_kernel.hpp"
#include "gpu/device.hpp"

namespace nestfast::gpu {

std::uint64_t total_length(std::span<const ByteRange> ranges) {
  std::uint64_t total = 0;
  for (const ByteRange& range : ranges) total += range.length;
  return total;
}

std::vector<CopyRange> pack_copies(std::span<const ByteRange> ranges) {
  std::vector<CopyRange> copies;
  copies.reserve(ranges.size());
  std::uint64_t packed = 0;
  for (const ByteRange& range : ranges) {
    copies.push_back({range.offset, packed, range.length});
    packed += range.length;
  }
  return copies;
}

std::vector<CopyRange> unpack_copies(std::span<const ByteRange> ranges) {
  std::vector<CopyRange> copies;
  copies.reserve(ranges.size());
  std::uint64_t packed = 0;
  for (const ByteRange& range : ranges) {
    copies.push_back({packed, range.offset, range.length});
    packed += range.length;
  }
  return copies;
}

namespace {

bool fits(std::uint64_t offset, std::uint64_t length, std::uint64_t bytes) {
  return length <= bytes && offset <= bytes - length;
}

std::string describe(std::size_t index, const CopyRange& copy) {
  return "copy " + std::to_string(index) + " (src_offset " + std::to_string(copy.src_offset) + ", dst_offset " +
         std::to_string(copy.dst_offset) + ", length " + std::to_string(copy.length) + ")";
}

}  // namespace

void check_copies(std::span<const CopyRange> copies, std::uint64_t src_bytes, std::uint64_t dst_bytes) {
  for (std::size_t i = 0; i < copies.size(); ++i) {
    if (!fits(copies[i].src_offset, copies[i].length, src_bytes)) {
      throw std::invalid_argument(describe(i, copies[i]) + " reads past the " + std::to_string(src_bytes) +
                                  "-byte source");
    }
    if (!fits(copies[i].dst_offset, copies[i].length, dst_bytes)) {
      throw std::invalid_argument(describe(i, copies[i]) + " writes past the " + std::to_string(dst_bytes) +
                                  "-byte destination");
    }
  }
  std::vector<std::size_t> order(copies.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::erase_if(order, [&](std::size_t i) { return copies[i].length == 0; });
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return copies[a].dst_offset < copies[b].dst_offset; });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const CopyRange& before = copies[order[k - 1]];
    if (before.dst_offset + before.length > copies[order[k]].dst_offset) {
      throw std::invalid_argument(describe(order[k - 1], before) + " and " + describe(order[k], copies[order[k]]) +
                                  " write overlapping destination bytes");
    }
  }
}

namespace detail {

std::vector<CopyRange> split_copies(std::span<const CopyRange> copies, std::uint64_t max_chunk) {
  std::vector<CopyRange> chunks;
  for (const CopyRange& copy : copies) {
    for (std::uint64_t done = 0; done < copy.length; done += max_chunk) {
      chunks.push_back({copy.src_offset + done, copy.dst_offset + done, std::min(max_chunk, copy.length - done)});
    }
  }
  return chunks;
}

}  // namespace detail

void copy_ranges_host(const void* src, std::uint64_t src_bytes, void* dst, std::uint64_t dst_bytes,
                      std::span<const CopyRange> copies) {
  check_copies(copies, src_bytes, dst_bytes);
  const std::vector<CopyRange> chunks = detail::split_copies(copies, detail::kCopyChunkBytes);
  const unsigned blocks = detail::copy_grid_blocks(chunks.size());
  for (unsigned block = 0; block < blocks; ++block) {
    for (unsigned thread = 0; thread < detail::kCopyThreadsPerBlock; ++thread) {
      detail::copy_chunks_block(chunks.data(), chunks.size(), static_cast<const unsigned char*>(src),
                                static_cast<unsigned char*>(dst), block, blocks, thread,
                                detail::kCopyThreadsPerBlock);
    }
  }
}

struct DeviceCopyPlan::Impl {
  DeviceBuffer chunks;
  std::uint64_t chunk_count = 0;
  std::uint64_t copied_bytes = 0;
  std::uint64_t src_bytes = 0;
  std::uint64_t dst_bytes = 0;
};

DeviceCopyPlan::DeviceCopyPlan(std::span<const CopyRange> copies, std::uint64_t src_bytes, std::uint64_t dst_bytes)
    : impl_(std::make_unique<Impl>()) {
  require_backend("a device copy plan");
  check_copies(copies, src_bytes, dst_bytes);
  const std::vector<CopyRange> chunks = detail::split_copies(copies, detail::kCopyChunkBytes);
  impl_->chunk_count = chunks.size();
  impl_->src_bytes = src_bytes;
  impl_->dst_bytes = dst_bytes;
  for (const CopyRange& chunk : chunks) impl_->copied_bytes += chunk.length;
  if (!chunks.empty()) {
    impl_->chunks = DeviceBuffer(chunks.size() * sizeof(CopyRange));
    impl_->chunks.copy_from_host(chunks.data(), chunks.size() * sizeof(CopyRange));
  }
}

DeviceCopyPlan::~DeviceCopyPlan() = default;
DeviceCopyPlan::DeviceCopyPlan(DeviceCopyPlan&&) noexcept = default;
DeviceCopyPlan& DeviceCopyPlan::operator=(DeviceCopyPlan&&) noexcept = default;

void DeviceCopyPlan::run(const void* device_src, void* device_dst) const {
  if (impl_->chunk_count == 0) return;
  detail::launch_copy_chunks(static_cast<const CopyRange*>(impl_->chunks.data()), impl_->chunk_count, device_src,
                             device_dst);
}

std::uint64_t DeviceCopyPlan::copied_bytes() const { return impl_->copied_bytes; }
std::uint64_t DeviceCopyPlan::src_bytes() const { return impl_->src_bytes; }
std::uint64_t DeviceCopyPlan::dst_bytes() const { return impl_->dst_bytes; }

}  // namespace nestfast::gpu
