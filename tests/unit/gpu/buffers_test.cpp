#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <vector>

#include "gpu/buffers.hpp"
#include "gpu/device.hpp"

namespace nestfast::gpu {
namespace {

TEST(GpuBuffers, DeviceRoundTripAndMove) {
  if (device_count() == 0) GTEST_SKIP() << "no GPU device present (backend: " << backend_name() << ")";
  std::vector<int> host(1000);
  std::iota(host.begin(), host.end(), -500);
  DeviceBuffer buffer(host.size() * sizeof(int));
  buffer.copy_from_host(host.data(), host.size() * sizeof(int));
  DeviceBuffer moved = std::move(buffer);
  EXPECT_EQ(buffer.data(), nullptr);
  std::vector<int> back(host.size());
  moved.copy_to_host(back.data(), back.size() * sizeof(int));
  EXPECT_EQ(back, host);
  EXPECT_THROW(moved.copy_to_host(back.data(), sizeof(int), moved.size()), std::out_of_range);
  moved.fill_zero();
  moved.copy_to_host(back.data(), back.size() * sizeof(int));
  EXPECT_EQ(std::accumulate(back.begin(), back.end(), 0), 0);

  PinnedHostBuffer pinned(host.size() * sizeof(int));
  copy_device_to_host(pinned.data(), moved.data(), pinned.size());
  EXPECT_EQ(static_cast<int*>(pinned.data())[7], 0);
}

TEST(GpuBuffers, WithoutABackEndConstructionSaysSo) {
  if (backend_name() != "none") GTEST_SKIP() << "this build has the " << backend_name() << " back-end";
  EXPECT_THROW(DeviceBuffer(16), std::runtime_error);
  EXPECT_THROW(PinnedHostBuffer(16), std::runtime_error);
  EXPECT_THROW(require_backend("this test"), std::runtime_error);
}

}  // namespace
}  // namespace nestfast::gpu
