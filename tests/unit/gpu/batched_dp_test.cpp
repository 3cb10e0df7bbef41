// The batched DP: the flat oracle's costs, the CPU reference against brute
// force, the host emulation of the kernel against the CPU DP on >= 1000
// random instances, and (with a device) the kernel itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "gpu/batched_dp.hpp"
#include "gpu/device.hpp"
#include "gpu/random_dp_instances.hpp"

namespace nestfast::gpu {
namespace {

using search::kDpInfinity;

double& cell(FlatDpInstance& instance, int column, int layer) {
  return instance.layer_values[static_cast<std::size_t>(column * instance.layers + layer)];
}

// Every partition of the layers into the instance's stages.
double brute_force(const FlatDpInstance& instance, const FlatStageOracle& oracle) {
  double best = kDpInfinity;
  std::vector<int> bounds(static_cast<std::size_t>(instance.stages) + 1, 0);
  bounds.back() = instance.layers;
  std::function<void(int, double)> place = [&](int stage, double worst) {
    if (stage == instance.stages) {
      if (worst < best) best = worst;
      return;
    }
    const int a = bounds[static_cast<std::size_t>(stage)];
    const int remaining = instance.stages - stage - 1;
    const int first_b = stage == instance.stages - 1 ? instance.layers : a + 1;
    for (int b = first_b; b <= instance.layers - remaining; ++b) {
      if (instance.param_cap < kDpInfinity && !(oracle.params(a, b) < instance.param_cap)) break;
      const double t = oracle.time(a, b, stage);
      if (t >= kDpInfinity) break;
      bounds[static_cast<std::size_t>(stage) + 1] = b;
      place(stage + 1, std::max(worst, t));
    }
  };
  place(0, 0.0);
  return best < instance.bottleneck_limit ? best : kDpInfinity;
}

void expect_same(const FlatDpResult& got, const FlatDpResult& want, std::size_t index) {
  ASSERT_EQ(got.bottleneck, want.bottleneck) << "instance " << index;  // bit-identical, not close
  ASSERT_EQ(got.boundaries, want.boundaries) << "instance " << index;
  ASSERT_EQ(got.counters.states, want.counters.states) << "instance " << index;
  ASSERT_EQ(got.counters.transitions, want.counters.transitions) << "instance " << index;
  ASSERT_EQ(got.counters.pruned_memory, want.counters.pruned_memory) << "instance " << index;
  ASSERT_EQ(got.counters.pruned_params, want.counters.pruned_params) << "instance " << index;
  ASSERT_EQ(got.counters.pruned_bound, want.counters.pruned_bound) << "instance " << index;
}

TEST(GpuBatchedDp, FlatOraclePricesAStageByHand) {
  FlatDpInstance instance;
  instance.layers = 3;
  instance.stages = 2;
  instance.levels = 1;
  instance.layer_values.assign(static_cast<std::size_t>(kLayerColumns * 3), 0.0);
  for (int layer = 0; layer < 3; ++layer) {
    cell(instance, kTimeColumn + 0, layer) = 1.0 + layer;  // 1 2 3
    cell(instance, kTimeColumn + 1, layer) = 5.0;  // selective: not allowed below, but in the floor
    cell(instance, kTimeColumn + 2, layer) = 10.0;
    cell(instance, kStateColumn, layer) = 4.0;
    cell(instance, kStashColumn + 0, layer) = 3.0;
    cell(instance, kStashColumn + 2, layer) = 1.0;
    cell(instance, kSyncColumn, layer) = 0.5;
    cell(instance, kWorkingColumn, layer) = layer == 1 ? 7.0 : 2.0;
  }
  instance.boundary_s = {0.0, 0.25, 0.75};
  instance.rank_level = {-1, 0};
  instance.stash_depth = {2.0, 1.0};
  instance.hbm_bytes = 20.0;
  instance.mode_mask = 0b101;  // none and full
  const HostStageOracle host(instance);
  const FlatStageOracle& oracle = host.oracle();
  // Layers [1, 3) on rank 1: state 8, stash 1 * 6, working max 7 -> 21 > 20 under none;
  // under full: 8 + 1 * 2 + 7 = 17 fits, time 20 + incoming 0.25.
  EXPECT_DOUBLE_EQ(oracle.memory(1, 3, 1, 0), 21.0);
  EXPECT_DOUBLE_EQ(oracle.memory(1, 3, 1, 2), 17.0);
  EXPECT_DOUBLE_EQ(oracle.time(1, 3, 1), 20.25);
  EXPECT_DOUBLE_EQ(oracle.time(2, 3, 1), 3.75);  // 4 + 3 + 2 = 9 fits without recompute
  EXPECT_DOUBLE_EQ(oracle.time(0, 1, 0), 1.0);   // rank 0 has no incoming boundary
  EXPECT_DOUBLE_EQ(oracle.params(0, 3), 1.5);
  EXPECT_DOUBLE_EQ(oracle.floor(0, 3), 6.0);  // the least time of any mode per layer: 1 + 2 + 3
  EXPECT_DOUBLE_EQ(oracle.floor(1, 3), 5.0);
  const FlatDpResult result = solve_flat_dp_cpu(instance);
  // Splits: [0,1)+[1,3) -> max(1, 20.25); [0,2)+[2,3): rank 0 [0,2) memory 8+2*6+7=27 none, 8+2*2+7=19 full -> 20; max(20, 3.75).
  EXPECT_DOUBLE_EQ(result.bottleneck, 20.0);
  EXPECT_EQ(result.boundaries, (std::vector<int>{0, 2, 3}));
}

TEST(GpuBatchedDp, CpuReferenceMatchesBruteForce) {
  std::mt19937 random(11);
  int feasible = 0;
  for (int k = 0; k < 400; ++k) {
    const FlatDpInstance instance = random_flat_dp_instance(random, 9);
    const HostStageOracle host(instance);
    const FlatDpResult result = solve_flat_dp_cpu(instance);
    ASSERT_EQ(result.bottleneck, brute_force(instance, host.oracle())) << "instance " << k;
    if (result.bottleneck < kDpInfinity) {
      ++feasible;
      double worst = 0;
      for (int stage = 0; stage < instance.stages; ++stage) {
        worst = std::max(worst, host.oracle().time(result.boundaries[static_cast<std::size_t>(stage)],
                                                   result.boundaries[static_cast<std::size_t>(stage) + 1], stage));
      }
      ASSERT_EQ(worst, result.bottleneck) << "instance " << k;
    }
  }
  // The generator must exercise both outcomes for this to mean anything.
  EXPECT_GT(feasible, 100);
  EXPECT_LT(feasible, 400);
}

TEST(GpuBatchedDp, HostEmulationOfTheKernelEqualsTheCpuDpOnRandomInstances) {
  std::mt19937 random(2026);
  std::vector<FlatDpInstance> instances;
  for (int k = 0; k < 1200; ++k) instances.push_back(random_flat_dp_instance(random, k % 10 == 0 ? 130 : 40));
  const std::vector<FlatDpResult> batch = solve_flat_dp_batch_emulated(instances);
  ASSERT_EQ(batch.size(), instances.size());
  std::size_t feasible = 0;
  for (std::size_t k = 0; k < instances.size(); ++k) {
    const FlatDpResult cpu = solve_flat_dp_cpu(instances[k]);
    expect_same(batch[k], cpu, k);
    if (cpu.bottleneck < kDpInfinity) ++feasible;
  }
  EXPECT_GT(feasible, instances.size() / 4);
  EXPECT_LT(feasible, instances.size());
}

TEST(GpuBatchedDp, RejectsMalformedInstancesNamingTheField) {
  std::mt19937 random(3);
  std::vector<FlatDpInstance> instances = {random_flat_dp_instance(random, 10), random_flat_dp_instance(random, 10)};
  instances[1].stash_depth.push_back(1.0);
  try {
    (void)solve_flat_dp_batch_emulated(instances);
    FAIL() << "a malformed instance was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("DP instance 1: stash_depth"), std::string::npos) << error.what();
  }
  instances[1] = random_flat_dp_instance(random, 10);
  instances[1].layer_values[0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW((void)solve_flat_dp_batch_emulated(instances), std::invalid_argument);
  instances[1] = random_flat_dp_instance(random, 10);
  instances[1].rank_level[0] = instances[1].levels;
  EXPECT_THROW((void)solve_flat_dp_cpu(instances[1]), std::invalid_argument);
}

TEST(GpuBatchedDp, DeviceKernelEqualsTheCpuDpOnRandomInstances) {
  if (device_count() == 0) GTEST_SKIP() << "no GPU device present (backend: " << backend_name() << ")";
  std::mt19937 random(77);
  std::vector<FlatDpInstance> instances;
  for (int k = 0; k < 3000; ++k) instances.push_back(random_flat_dp_instance(random, k % 10 == 0 ? 200 : 60));
  const std::vector<FlatDpResult> device = solve_flat_dp_batch(instances);
  ASSERT_EQ(device.size(), instances.size());
  for (std::size_t k = 0; k < instances.size(); ++k) expect_same(device[k], solve_flat_dp_cpu(instances[k]), k);
}

TEST(GpuBatchedDp, DeviceBatchWithoutABackEndSaysSo) {
  if (backend_name() != "none") GTEST_SKIP() << "this build has the " << backend_name() << " back-end";
  std::mt19937 random(5);
  const std::vector<FlatDpInstance> instances = {random_flat_dp_instance(random, 5)};
  EXPECT_THROW((void)solve_flat_dp_batch(instances), std::runtime_error);
}

}  // namespace
}  // namespace nestfast::gpu
