#pragma once
// The bytes every benchmark and test sends, so that the receiver can check
// each one without any other message: block (src -> dst) carries, at byte
// offset o, byte (o % 8) (little-endian) of word(seed, src, dst, o / 8), where
// word = splitmix64 chained over seed, src, dst and the word index.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/plan/seeded_hash.hpp"

namespace nestfast::comm {

// The 64-bit validation word number `index` of the block src -> dst.
std::uint64_t validation_word(std::uint64_t seed, int src, int dst, std::uint64_t index);

// Writes bytes [0, bytes) of block src -> dst into `out`.
void fill_block(std::byte* out, std::uint64_t bytes, std::uint64_t seed, int src, int dst);

// Writes the bitwise complement of the expected block, so that every byte the
// exchange fails to write is counted as wrong.
void poison_block(std::byte* out, std::uint64_t bytes, std::uint64_t seed, int src, int dst);

struct BadByte {
  int src = 0;
  int dst = 0;
  std::uint64_t offset = 0;  // byte offset inside the block src -> dst
};

struct BlockCheck {
  std::uint64_t wrong = 0;      // bytes that differ from the expected ones
  std::vector<BadByte> first;   // the first few of them, in offset order
};

// Compares block src -> dst as received; records at most `keep` bad bytes in `check.first`.
void check_block(const std::byte* received, std::uint64_t bytes, std::uint64_t seed, int src, int dst,
                 BlockCheck& check, std::size_t keep);

}  // namespace nestfast::comm
