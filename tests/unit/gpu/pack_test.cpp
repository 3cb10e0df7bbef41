// Copy lists for alltoallv staging: builders, checks, the host emulation of
// the copy kernel against plain memcpy, and (with a device) the kernel itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "gpu/buffers.hpp"
#include "gpu/device.hpp"
#include "gpu/pack.hpp"

namespace nestfast::gpu {
namespace {

std::vector<unsigned char> pattern(std::size_t bytes, unsigned seed) {
  std::vector<unsigned char> data(bytes);
  std::mt19937 random(seed);
  for (auto& byte : data) byte = static_cast<unsigned char>(random());
  return data;
}

// Random disjoint destination ranges (shuffled), arbitrary source ranges:
// lengths from 0 to a few chunks, offsets at every alignment.
std::vector<CopyRange> random_copies(std::mt19937& random, std::uint64_t src_bytes, std::uint64_t dst_bytes,
                                     int count) {
  std::vector<CopyRange> copies;
  std::uniform_int_distribution<std::uint64_t> gap(0, 40);
  std::uniform_int_distribution<int> kind(0, 9);
  std::uint64_t cursor = 0;
  for (int i = 0; i < count; ++i) {
    const std::uint64_t length = kind(random) == 0   ? 0
                                 : kind(random) < 3  ? std::uniform_int_distribution<std::uint64_t>(1, 200000)(random)
                                                     : std::uniform_int_distribution<std::uint64_t>(1, 300)(random);
    cursor += gap(random);
    if (cursor + length > dst_bytes || length > src_bytes) break;
    const std::uint64_t src_offset = std::uniform_int_distribution<std::uint64_t>(0, src_bytes - length)(random);
    copies.push_back({src_offset, cursor, length});
    cursor += length;
  }
  std::shuffle(copies.begin(), copies.end(), random);
  return copies;
}

std::vector<unsigned char> reference_copy(const std::vector<unsigned char>& src, std::vector<unsigned char> dst,
                                          const std::vector<CopyRange>& copies) {
  for (const CopyRange& copy : copies) {
    if (copy.length > 0) std::memcpy(dst.data() + copy.dst_offset, src.data() + copy.src_offset, copy.length);
  }
  return dst;
}

TEST(GpuPack, PackAndUnpackCopiesLayRangesOutContiguously) {
  const std::vector<ByteRange> ranges = {{100, 5}, {0, 0}, {7, 3}, {50, 10}};
  EXPECT_EQ(total_length(ranges), 18u);
  const std::vector<CopyRange> pack = pack_copies(ranges);
  ASSERT_EQ(pack.size(), 4u);
  EXPECT_EQ(pack[0].src_offset, 100u);
  EXPECT_EQ(pack[0].dst_offset, 0u);
  EXPECT_EQ(pack[2].src_offset, 7u);
  EXPECT_EQ(pack[2].dst_offset, 5u);
  EXPECT_EQ(pack[3].dst_offset, 8u);
  const std::vector<CopyRange> unpack = unpack_copies(ranges);
  EXPECT_EQ(unpack[3].src_offset, 8u);
  EXPECT_EQ(unpack[3].dst_offset, 50u);
  EXPECT_EQ(unpack[3].length, 10u);
}

TEST(GpuPack, PackThenUnpackRestoresTheRanges) {
  std::mt19937 random(7);
  const auto original = pattern(300000, 1);
  for (int round = 0; round < 20; ++round) {
    // Disjoint ranges of the original, in shuffled order.
    std::vector<CopyRange> as_copies = random_copies(random, original.size(), original.size(), 200);
    std::vector<ByteRange> ranges;
    for (const CopyRange& copy : as_copies) ranges.push_back({copy.dst_offset, copy.length});
    std::vector<unsigned char> packed(total_length(ranges));
    copy_ranges_host(original.data(), original.size(), packed.data(), packed.size(), pack_copies(ranges));
    std::vector<unsigned char> restored(original.size(), 0);
    copy_ranges_host(packed.data(), packed.size(), restored.data(), restored.size(), unpack_copies(ranges));
    for (const ByteRange& range : ranges) {
      ASSERT_EQ(0, std::memcmp(restored.data() + range.offset, original.data() + range.offset, range.length));
    }
  }
}

TEST(GpuPack, HostEmulationOfTheKernelMatchesMemcpy) {
  std::mt19937 random(2024);
  for (int round = 0; round < 50; ++round) {
    const std::uint64_t src_bytes = std::uniform_int_distribution<std::uint64_t>(1, 400000)(random);
    const std::uint64_t dst_bytes = std::uniform_int_distribution<std::uint64_t>(1, 400000)(random);
    const auto src = pattern(src_bytes, static_cast<unsigned>(round));
    const auto before = pattern(dst_bytes, static_cast<unsigned>(round) + 1000);
    const std::vector<CopyRange> copies = random_copies(random, src_bytes, dst_bytes, 100);
    std::vector<unsigned char> dst = before;
    copy_ranges_host(src.data(), src_bytes, dst.data(), dst_bytes, copies);
    ASSERT_EQ(dst, reference_copy(src, before, copies)) << "round " << round;
  }
}

TEST(GpuPack, RejectsCopiesOutOfBoundsOrOverlapping) {
  std::vector<unsigned char> src(100), dst(100);
  const std::vector<CopyRange> past_source = {{90, 0, 11}};
  EXPECT_THROW(check_copies(past_source, 100, 100), std::invalid_argument);
  const std::vector<CopyRange> past_destination = {{0, 95, 6}};
  EXPECT_THROW(copy_ranges_host(src.data(), 100, dst.data(), 100, past_destination), std::invalid_argument);
  const std::vector<CopyRange> huge_offset = {{~std::uint64_t{0}, 0, 2}};
  EXPECT_THROW(check_copies(huge_offset, 100, 100), std::invalid_argument);
  const std::vector<CopyRange> overlapping = {{0, 10, 10}, {50, 19, 5}};
  try {
    check_copies(overlapping, 100, 100);
    FAIL() << "overlapping destinations were accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("overlapping"), std::string::npos) << error.what();
  }
  const std::vector<CopyRange> touching_and_empty = {{0, 10, 10}, {50, 20, 5}, {0, 15, 0}};
  EXPECT_NO_THROW(check_copies(touching_and_empty, 100, 100));
}

TEST(GpuPack, DeviceCopyPlanMatchesTheHostReference) {
  if (device_count() == 0) GTEST_SKIP() << "no GPU device present (backend: " << backend_name() << ")";
  std::mt19937 random(99);
  for (int round = 0; round < 20; ++round) {
    const std::uint64_t src_bytes = std::uniform_int_distribution<std::uint64_t>(1, 2000000)(random);
    const std::uint64_t dst_bytes = std::uniform_int_distribution<std::uint64_t>(1, 2000000)(random);
    const auto src = pattern(src_bytes, static_cast<unsigned>(round));
    const auto before = pattern(dst_bytes, static_cast<unsigned>(round) + 1000);
    const std::vector<CopyRange> copies = random_copies(random, src_bytes, dst_bytes, 300);
    DeviceBuffer device_src(src_bytes), device_dst(dst_bytes);
    device_src.copy_from_host(src.data(), src_bytes);
    device_dst.copy_from_host(before.data(), dst_bytes);
    const DeviceCopyPlan plan(copies, src_bytes, dst_bytes);
    plan.run(device_src.data(), device_dst.data());
    std::vector<unsigned char> dst(dst_bytes);
    device_dst.copy_to_host(dst.data(), dst_bytes);
    ASSERT_EQ(dst, reference_copy(src, before, copies)) << "round " << round;
  }
}

TEST(GpuPack, DeviceCopyPlanWithoutABackEndSaysSo) {
  if (backend_name() != "none") GTEST_SKIP() << "this build has the " << backend_name() << " back-end";
  const std::vector<CopyRange> copies = {{0, 0, 1}};
  try {
    DeviceCopyPlan plan(copies, 1, 1);
    FAIL() << "a device plan was built without a GPU back-end";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("no GPU back-end"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace nestfast::gpu
