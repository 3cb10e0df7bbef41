#include "comm/exec/validation_words.hpp"

#include <cstring>

namespace nestfast::comm {

namespace {

constexpr std::uint64_t kWordBytes = 8;

// The key of a block: two chained mixes, so that (src, dst) and (dst, src) differ.
std::uint64_t block_key(std::uint64_t seed, int src, int dst) {
  const std::uint64_t after_src = splitmix64(seed ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)));
  return splitmix64(after_src ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(dst)) << 32));
}

std::uint64_t word_of_key(std::uint64_t key, std::uint64_t index) { return splitmix64(key + index); }

// Little-endian bytes of a word, independent of the host's byte order.
void store_word(std::byte* out, std::uint64_t word, std::uint64_t count) {
  for (std::uint64_t b = 0; b < count; ++b) out[b] = static_cast<std::byte>((word >> (8 * b)) & 0xffU);
}

template <bool kComplement>
void write_block(std::byte* out, std::uint64_t bytes, std::uint64_t seed, int src, int dst) {
  const std::uint64_t key = block_key(seed, src, dst);
  const std::uint64_t words = bytes / kWordBytes;
  for (std::uint64_t i = 0; i < words; ++i) {
    const std::uint64_t word = word_of_key(key, i);
    store_word(out + i * kWordBytes, kComplement ? ~word : word, kWordBytes);
  }
  const std::uint64_t tail = bytes % kWordBytes;
  if (tail != 0) {
    const std::uint64_t word = word_of_key(key, words);
    store_word(out + words * kWordBytes, kComplement ? ~word : word, tail);
  }
}

}  // namespace

std::uint64_t validation_word(std::uint64_t seed, int src, int dst, std::uint64_t index) {
  return word_of_key(block_key(seed, src, dst), index);
}

void fill_block(std::byte* out, std::uint64_t bytes, std::uint64_t seed, int src, int dst) {
  write_block<false>(out, bytes, seed, src, dst);
}

void poison_block(std::byte* out, std::uint64_t bytes, std::uint64_t seed, int src, int dst) {
  write_block<true>(out, bytes, seed, src, dst);
}

void check_block(const std::byte* received, std::uint64_t bytes, std::uint64_t seed, int src, int dst,
                 BlockCheck& check, std::size_t keep) {
  const std::uint64_t key = block_key(seed, src, dst);
  const std::uint64_t words = (bytes + kWordBytes - 1) / kWordBytes;
  std::byte expected[kWordBytes];
  for (std::uint64_t i = 0; i < words; ++i) {
    const std::uint64_t begin = i * kWordBytes;
    const std::uint64_t count = bytes - begin < kWordBytes ? bytes - begin : kWordBytes;
    store_word(expected, word_of_key(key, i), count);
    if (std::memcmp(expected, received + begin, count) == 0) continue;
    for (std::uint64_t b = 0; b < count; ++b) {
      if (expected[b] == received[begin + b]) continue;
      ++check.wrong;
      if (check.first.size() < keep) check.first.push_back({src, dst, begin + b});
    }
  }
}

}  // namespace nestfast::comm
