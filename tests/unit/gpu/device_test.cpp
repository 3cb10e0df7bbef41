#include <gtest/gtest.h>

#include "gpu/device.hpp"

TEST(GpuDevice, BackendMatchesTheBuild) {
#if defined(NESTFAST_GPU_CUDA)
  EXPECT_EQ(nestfast::gpu::backend_name(), "cuda");
#elif defined(NESTFAST_GPU_HIP)
  EXPECT_EQ(nestfast::gpu::backend_name(), "hip");
#else
  EXPECT_EQ(nestfast::gpu::backend_name(), "none");
#endif
  EXPECT_GE(nestfast::gpu::device_count(), 0);
}

TEST(GpuDevice, SelfTestKernelComputesOnTheDevice) {
  if (nestfast::gpu::device_count() == 0) GTEST_SKIP() << "no GPU device present (backend: " << nestfast::gpu::backend_name() << ")";
  EXPECT_TRUE(nestfast::gpu::run_self_test());
}
