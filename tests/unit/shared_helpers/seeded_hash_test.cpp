// The one seeded mixer and hash against published values: FNV-1a 64 test
// vectors (Fowler, Noll and Vo's reference test suite) and the SplitMix64
// sequence from seed 0 (Vigna's reference splitmix64.c), so a change to
// either is caught before it silently changes workloads, validation words
// or fingerprints.
#include <gtest/gtest.h>

#include "comm/plan/seeded_hash.hpp"

namespace nestfast::comm {
namespace {

TEST(SeededHash, Fnv1a64MatchesTheReferenceVectors) {
  EXPECT_EQ(Fnv1a64().value(), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64().add_bytes("a").value(), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64().add_bytes("foobar").value(), 0x85944171f73967e8ULL);
}

TEST(SeededHash, WordsAreHashedAsTheirLittleEndianBytes) {
  EXPECT_EQ(Fnv1a64().add_word(0x0102030405060708ULL).value(),
            Fnv1a64().add_bytes(std::string_view("\x08\x07\x06\x05\x04\x03\x02\x01", 8)).value());
}

TEST(SeededHash, SplitMix64MatchesTheReferenceSequence) {
  // splitmix64.c with x = 0: next() adds the gamma, then mixes.
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafULL);
  SplitMix64Stream stream(0);  // its draws start one gamma later
  EXPECT_EQ(stream.next(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(stream.next(), 0x06c45d188009454fULL);
}

TEST(SeededHash, UnitDrawsLieInTheHalfOpenInterval) {
  SplitMix64Stream stream(12345);
  for (int i = 0; i < 10000; ++i) {
    const double u = stream.unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    ASSERT_LT(stream.below(7), 7U);
  }
}

}  // namespace
}  // namespace nestfast::comm
