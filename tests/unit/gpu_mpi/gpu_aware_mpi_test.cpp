// GPU-aware MPI detection (a singleton MPI process: the query needs MPI_Init)
// and the staged / direct MPI view of a device buffer.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "gpu/buffers.hpp"
#include "gpu/device.hpp"
#include "gpu/gpu_aware_mpi.hpp"

namespace nestfast::gpu {
namespace {

class SingletonMpi : public ::testing::Environment {
 public:
  void SetUp() override {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) MPI_Init(nullptr, nullptr);
  }
  void TearDown() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
};

[[maybe_unused]] ::testing::Environment* const mpi_environment =
    ::testing::AddGlobalTestEnvironment(new SingletonMpi);

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(GpuAwareMpi, TheLibraryAnswersAndSaysHow) {
  unsetenv("NESTFAST_GPU_AWARE_MPI");
  const GpuAwareMpi answer = query_gpu_aware_mpi();
  EXPECT_FALSE(answer.how.empty());
  if (backend_name() == "none") {
    EXPECT_FALSE(answer.gpu_aware) << answer.how;
  }
  EXPECT_EQ(choose_mpi_device_mode(answer), answer.gpu_aware ? MpiDeviceMode::direct : MpiDeviceMode::staged);
  std::cout << "GPU-aware MPI: " << answer.gpu_aware << " (" << answer.how << ")\n";
}

TEST(GpuAwareMpi, EnvironmentOverridesTheLibrary) {
  {
    const ScopedEnv force("NESTFAST_GPU_AWARE_MPI", "1");
    const GpuAwareMpi answer = query_gpu_aware_mpi();
    EXPECT_TRUE(answer.gpu_aware);
    EXPECT_NE(answer.how.find("NESTFAST_GPU_AWARE_MPI=1"), std::string::npos) << answer.how;
  }
  {
    const ScopedEnv force("NESTFAST_GPU_AWARE_MPI", "0");
    EXPECT_FALSE(query_gpu_aware_mpi().gpu_aware);
  }
  const ScopedEnv bad("NESTFAST_GPU_AWARE_MPI", "yes");
  EXPECT_THROW(query_gpu_aware_mpi(), std::invalid_argument);
}

TEST(GpuAwareMpi, ModeNames) {
  EXPECT_STREQ(to_string(MpiDeviceMode::direct), "direct");
  EXPECT_STREQ(to_string(MpiDeviceMode::staged), "staged");
}

// Sends a device buffer to this same rank through MPI in the given mode and
// checks every byte arrives in the receiving device buffer.
void self_exchange(MpiDeviceMode mode) {
  const std::uint64_t bytes = 1 << 20;
  std::vector<unsigned char> host(bytes);
  for (std::uint64_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>(i * 131 + 7);
  DeviceBuffer send(bytes), receive(bytes);
  send.copy_from_host(host.data(), bytes);
  receive.fill_zero();
  const MpiDeviceBuffer send_view(send.data(), bytes, mode), receive_view(receive.data(), bytes, mode);
  EXPECT_EQ(send_view.mode(), mode);
  const std::uint64_t half = bytes / 2;
  send_view.prepare_send(half, bytes - half);
  MPI_Request requests[2];
  MPI_Irecv(receive_view.for_mpi(half), static_cast<int>(bytes - half), MPI_BYTE, 0, 5, MPI_COMM_SELF, &requests[0]);
  MPI_Isend(send_view.for_mpi(half), static_cast<int>(bytes - half), MPI_BYTE, 0, 5, MPI_COMM_SELF, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  receive_view.finish_receive(half, bytes - half);
  std::vector<unsigned char> back(bytes);
  receive.copy_to_host(back.data(), bytes);
  for (std::uint64_t i = 0; i < half; ++i) ASSERT_EQ(back[i], 0) << "byte " << i << " was not to be sent";
  EXPECT_EQ(0, std::memcmp(back.data() + half, host.data() + half, bytes - half));
  EXPECT_THROW(send_view.prepare_send(half, bytes), std::out_of_range);
}

TEST(GpuAwareMpi, StagedExchangeThroughPinnedMemoryDeliversEveryByte) {
  if (device_count() == 0) GTEST_SKIP() << "no GPU device present (backend: " << backend_name() << ")";
  self_exchange(MpiDeviceMode::staged);
}

TEST(GpuAwareMpi, DirectExchangeDeliversEveryByteWhenTheLibraryIsGpuAware) {
  if (device_count() == 0) GTEST_SKIP() << "no GPU device present (backend: " << backend_name() << ")";
  unsetenv("NESTFAST_GPU_AWARE_MPI");
  const GpuAwareMpi answer = query_gpu_aware_mpi();
  if (!answer.gpu_aware) GTEST_SKIP() << "this MPI is not GPU-aware: " << answer.how;
  self_exchange(MpiDeviceMode::direct);
}

TEST(GpuAwareMpi, StagedViewWithoutABackEndSaysSo) {
  if (backend_name() != "none") GTEST_SKIP() << "this build has the " << backend_name() << " back-end";
  std::vector<unsigned char> not_device(16);
  EXPECT_THROW(MpiDeviceBuffer(not_device.data(), 16, MpiDeviceMode::staged), std::runtime_error);
}

}  // namespace
}  // namespace nestfast::gpu
