#pragma once
// The project's one seeded mixer, random stream and byte hash. Header-only
// and free of dependencies, so every layer that must agree bit for bit across
// ranks and platforms uses the same code: workloads (comm/workload), the
// validation words every benchmark sends (comm/exec), plan fingerprints and
// the plan verifier (comm/plan), job and checkpoint fingerprints (io, jobs).
//  - splitmix64: the SplitMix64 generator's output function (Steele, Lea and
//    Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014),
//    applied to x + golden gamma: a bijective mix of 64 bits.
//  - SplitMix64Stream: draw k of a stream is splitmix64(state + k * gamma),
//    so it depends only on the initial state and k.
//  - Fnv1a64: FNV-1a, 64-bit (offset basis 14695981039346656037, prime
//    1099511628211), over bytes; a word is hashed as its 8 little-endian
//    bytes, so the value does not depend on the host's byte order.
#include <cstdint>
#include <string_view>

namespace nestfast::comm {

inline constexpr std::uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ULL;

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += kGoldenGamma;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class SplitMix64Stream {
 public:
  explicit constexpr SplitMix64Stream(std::uint64_t state) : state_(state) {}
  constexpr std::uint64_t next() { return splitmix64(state_ += kGoldenGamma); }
  // Uniform in [0, 1) from the top 53 bits.
  constexpr double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // In [0, n) for n > 0 (modulo: the bias is below n / 2^64).
  constexpr std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t state_;
};

class Fnv1a64 {
 public:
  constexpr Fnv1a64& add_byte(std::uint8_t byte) {
    state_ = (state_ ^ byte) * 1099511628211ULL;
    return *this;
  }
  constexpr Fnv1a64& add_bytes(std::string_view bytes) {
    for (const char c : bytes) add_byte(static_cast<std::uint8_t>(c));
    return *this;
  }
  constexpr Fnv1a64& add_word(std::uint64_t word) {
    for (int byte = 0; byte < 8; ++byte) add_byte(static_cast<std::uint8_t>(word >> (8 * byte)));
    return *this;
  }
  constexpr std::uint64_t value() const { return state_; }

 private:
  std::uint64_t state_ = 14695981039346656037ULL;
};

}  // namespace nestfast::comm
