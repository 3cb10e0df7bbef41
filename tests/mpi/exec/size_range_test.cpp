// The one size parser (--sizes, --bytes-per-rank, --quantum, --auto-threshold
// and a job's validate.sizes): what CLI11's AsSizeValue reads, doubling
// ranges; bad text is a one-line error naming the option and the text.
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
  EXPECT_EQ(parse_size_range("1m:2MB", "--sizes"), (std::vector<std::uint64_t>{1U << 20, 2U << 20}));
  EXPECT_EQ(parse_size_range("1mib:1 MiB", "--sizes"), (std::vector<std::uint64_t>{1U << 20}));
}

TEST(SizeRange, OneSizeReadsEveryUnitSpelling) {
  for (const char* text : {"1M", "1m", "1MB", "1mb", "1MiB", "1mi", "1 MiB", "1048576", "1048576B"}) {
    EXPECT_EQ(parse_size(text, "--bytes-per-rank"), 1U << 20) << text;
  }
  EXPECT_EQ(parse_size("010K", "--quantum"), 10U << 10);  // decimal, never octal
  EXPECT_EQ(parse_size("2T", "--quantum"), 2ULL << 40);
  EXPECT_EQ(parse_size("15E", "--quantum"), 15ULL << 60);
  EXPECT_EQ(parse_size("0", "--quantum", true), 0U);
  EXPECT_THROW(parse_size("0", "--quantum"), std::invalid_argument);
}

TEST(SizeRange, RejectsMalformedZeroAndReversed) {
  for (const char* bad : {"", " ", "x", "1X", "1M:", ":1M", "0:4K", "8K:1K", "1.5M", "-1", "-1M", "+5", "0x10K", "1e3",
                          "1M:2M:4M", "16E", "18446744073709551616", "99999999999999999999G", "1 2K", "K"}) {
    try {
      parse_size_range(bad, "--sizes");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.rfind("--sizes: \"" + std::string(bad) + "\": ", 0), 0U) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
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
