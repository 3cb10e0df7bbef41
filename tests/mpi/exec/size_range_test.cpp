// --sizes and validate.sizes: doubling ranges with binary suffixes; bad text
// is a one-line error naming the option.
#include <gtest/gtest.h>

#include <stdexcept>

#include "comm/exec/size_range.hpp"

namespace nestfast::comm {
namespace {

TEST(SizeRange, DoublesFromMinUpToMax) {
  EXPECT_EQ(parse_size_range("1M:8M", "--sizes"),
            (std::vector<std::uint64_t>{1U << 20, 2U << 20, 4U << 20, 8U << 20}));
  EXPECT_EQ(parse_size_range("3:20", "--sizes"), (std::vector<std::uint64_t>{3, 6, 12}));
  EXPECT_EQ(parse_size_range("64KiB", "--sizes"), (std::vector<std::uint64_t>{64U << 10}));
  EXPECT_EQ(parse_size_range("1k:2048B", "--sizes"), (std::vector<std::uint64_t>{1024, 2048}));
  EXPECT_EQ(parse_size_range("1G:1GiB", "--sizes"), (std::vector<std::uint64_t>{1U << 30}));
}

TEST(SizeRange, RejectsMalformedZeroAndReversed) {
  for (const char* bad : {"", "x", "1X", "1M:", ":1M", "0:4K", "8K:1K", "1.5M", "-1", "99999999999999999999G"}) {
    try {
      parse_size_range(bad, "--sizes");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& error) {
      EXPECT_EQ(std::string(error.what()).rfind("--sizes: ", 0), 0U) << error.what();
    }
  }
}

TEST(SizeRange, FormatsWithTheLargestExactSuffix) {
  EXPECT_EQ(format_size(16U << 20), "16M");
  EXPECT_EQ(format_size(1536), "1536");
  EXPECT_EQ(format_size(2048), "2K");
  EXPECT_EQ(format_size(3U << 30), "3G");
}

}  // namespace
}  // namespace nestfast::comm
