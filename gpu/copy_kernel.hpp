#pragma once
// Internal to gpu/: the copy kernel's body, its launch shape, and the launch
// entry point that only a back-end build implements. The body is a
// NESTFAST_HD function so the host emulation (copy_ranges_host) runs exactly
// the code the device runs.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "gpu/host_device.hpp"
#include "gpu/pack.hpp"

namespace nestfast::gpu::detail {

// Copies are cut into chunks of at most this many bytes; one block copies one
// chunk at a time, so long and short copies spread evenly over the grid.
inline constexpr std::uint64_t kCopyChunkBytes = 64 * 1024;
inline constexpr unsigned kCopyThreadsPerBlock = 256;
inline constexpr unsigned kCopyMaxBlocks = 4096;

// Splits every copy into chunks of at most max_chunk bytes; drops empty copies.
std::vector<CopyRange> split_copies(std::span<const CopyRange> copies, std::uint64_t max_chunk);

// 16 bytes moved as one load and one store on the device.
struct alignas(16) Word16 {
  std::uint64_t low;
  std::uint64_t high;
};

NESTFAST_HD inline void copy_word(unsigned char* to, const unsigned char* from) {
#if NESTFAST_DEVICE_PASS
  *reinterpret_cast<Word16*>(to) = *reinterpret_cast<const Word16*>(from);
#else
  std::memcpy(to, from, sizeof(Word16));  // the host may not alias char storage as Word16
#endif
}

// The part of one chunk that thread `thread` of `threads` copies. Threads
// touch disjoint bytes, so running them one after another (the host
// emulation) gives the same result as running them together.
NESTFAST_HD inline void copy_chunk(const CopyRange& chunk, const unsigned char* src, unsigned char* dst,
                                   unsigned thread, unsigned threads) {
  const unsigned char* from = src + chunk.src_offset;
  unsigned char* to = dst + chunk.dst_offset;
  const std::uint64_t length = chunk.length;
  const std::uint64_t from_misalignment = reinterpret_cast<std::uintptr_t>(from) % sizeof(Word16);
  const std::uint64_t to_misalignment = reinterpret_cast<std::uintptr_t>(to) % sizeof(Word16);
  std::uint64_t head = length;  // bytes copied one by one before the 16-byte words
  std::uint64_t words = 0;
  if (from_misalignment == to_misalignment) {
    const std::uint64_t to_boundary = from_misalignment == 0 ? 0 : sizeof(Word16) - from_misalignment;
    head = to_boundary < length ? to_boundary : length;
    words = (length - head) / sizeof(Word16);
  }
  for (std::uint64_t i = thread; i < head; i += threads) to[i] = from[i];
  for (std::uint64_t w = thread; w < words; w += threads) {
    copy_word(to + head + w * sizeof(Word16), from + head + w * sizeof(Word16));
  }
  for (std::uint64_t i = head + words * sizeof(Word16) + thread; i < length; i += threads) to[i] = from[i];
}

// What block `block` of `blocks` does: chunks block, block + blocks, ...
NESTFAST_HD inline void copy_chunks_block(const CopyRange* chunks, std::uint64_t chunk_count, const unsigned char* src,
                                          unsigned char* dst, unsigned block, unsigned blocks, unsigned thread,
                                          unsigned threads) {
  for (std::uint64_t c = block; c < chunk_count; c += blocks) copy_chunk(chunks[c], src, dst, thread, threads);
}

inline unsigned copy_grid_blocks(std::uint64_t chunk_count) {
  return static_cast<unsigned>(chunk_count < kCopyMaxBlocks ? chunk_count : kCopyMaxBlocks);
}

// Launches the copy kernel over device-resident chunks and waits for it.
// Implemented by the back-end (copy_kernel.cu); throws without one.
void launch_copy_chunks(const CopyRange* device_chunks, std::uint64_t chunk_count, const void* device_src,
                        void* device_dst);

}  // namespace nestfast::gpu::detail
