// Collective cost formulas against values worked out by hand (see each
// comment), on a three-level cluster with oversubscribed upper levels.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "solver/cluster/collectives.hpp"
#include "solver/cluster/gpu_throughput.hpp"

namespace nestfast {
namespace {

ClusterSpec three_levels() {
  ClusterSpec cluster;
  cluster.name = "hand";
  cluster.gpu.name = "hand-gpu";
  cluster.gpu.hbm_bytes = 80ull << 30;
  cluster.gpu.hbm_bandwidth_Bps = 2e12;
  cluster.gpu.hbm_efficiency = 0.5;
  cluster.gpu.peak_flops_bf16 = 1e14;
  cluster.gpu.matmul_efficiency = {{1e9, 0.5}, {1e11, 0.9}};
  cluster.gpu.fused_attention_efficiency_forward = 0.6;
  cluster.gpu.fused_attention_efficiency_backward = 0.5;
  cluster.levels = {{"node", 8, 100e9, 1e-6, 1, 1, {}},    // 100 GB/s
                    {"rack", 4, 25e9, 5e-6, 2, 1, {}},     // 12.5 GB/s effective
                    {"spine", 0, 25e9, 1e-5, 4, 1, {}}};   // 6.25 GB/s effective
  return cluster;
}

constexpr double kTolerance = 1e-12;

TEST(Collectives, GroupShapeSizeAndLevel) {
  EXPECT_EQ((GroupShape{{8, 4, 1}}).size(), 32);
  EXPECT_EQ((GroupShape{{8, 4, 1}}).level(), 1);
  EXPECT_EQ((GroupShape{{1, 1, 3}}).level(), 2);
  EXPECT_EQ((GroupShape{{1, 1, 1}}).level(), 0);
  EXPECT_TRUE((GroupShape{{1, 1}}).trivial());
}

TEST(Collectives, FlatAllReducePicksTheCheaperAlgorithm) {
  const ClusterSpec c = three_levels();
  // ring 14 alpha + 2*7/8*1e9/1e11 = 0.017514; halving-doubling 6 alpha + 0.0175 = 0.017506
  EXPECT_NEAR(flat_all_reduce_time(c.levels[0], 8, 1e9), 0.017506, kTolerance);
  // n = 3: ring 4 alpha vs halving-doubling 2*ceil(log2 3) = 4 alpha: 4e-6 + 2*2/3*3e9/1e11
  EXPECT_NEAR(flat_all_reduce_time(c.levels[0], 3, 3e9), 4e-6 + 0.04, kTolerance);
  EXPECT_EQ(flat_all_reduce_time(c.levels[0], 1, 1e9), 0.0);
}

TEST(Collectives, FlatAllGatherUsesOversubscribedBandwidth) {
  const ClusterSpec c = three_levels();
  // min(ring 3, log 2) alpha + 3/4 * 1e9 / 12.5e9
  EXPECT_NEAR(flat_all_gather_time(c.levels[1], 4, 1e9), 10e-6 + 0.06, kTolerance);
  // n = 3: ring 2 = ceil(log2 3) = 2 steps
  EXPECT_NEAR(flat_all_gather_time(c.levels[1], 3, 3e9), 10e-6 + 2.0 / 3 * 3e9 / 12.5e9, kTolerance);
}

// A reduce-scatter plus an all-gather of the same buffer (sequence
// parallelism's pair, ZeRO's gradient scatter and weight gather) costs what
// the all-reduce it replaces costs, on one level and across levels.
TEST(Collectives, ReduceScatterPlusAllGatherCostsOneAllReduce) {
  const ClusterSpec c = three_levels();
  for (int n : {2, 3, 8, 33, 1000}) {
    EXPECT_NEAR(2 * flat_all_gather_time(c.levels[2], n, 7e8), flat_all_reduce_time(c.levels[2], n, 7e8), kTolerance) << n;
  }
  for (const GroupShape& group : {GroupShape{{8, 4, 1}}, GroupShape{{1, 4, 16}}, GroupShape{{2, 1, 512}}}) {
    EXPECT_NEAR(reduce_scatter_time(c, group, 3e9) + all_gather_time(c, group, 3e9), all_reduce_time(c, group, 3e9),
                kTolerance);
  }
  // 1,024 replicas, one per node of a rack of 4 and 256 racks: the latency
  // term is 2 + 8 steps per half (log2), not 3 + 255 (ring).
  const GroupShape replicas{{1, 4, 256}};
  EXPECT_NEAR(all_gather_time(c, replicas, 4e9), 2 * 5e-6 + 3.0 / 4 * 4e9 / 12.5e9 + 8 * 1e-5 + 255.0 / 256 * 1e9 / 6.25e9,
              kTolerance);
}

TEST(Collectives, HierarchicalAllReduceAcrossTwoLevels) {
  const ClusterSpec c = three_levels();
  // level 0 reduce-scatter + all-gather: 2 * (3e-6 + 7/8 * 1e9/1e11) = 0.017506
  // level 1 all-reduce of 1e9/8 among 4: min(ring 30e-6, hd 20e-6) + 2*3/4*1.25e8/12.5e9 = 0.01502
  EXPECT_NEAR(all_reduce_time(c, GroupShape{{8, 4, 1}}, 1e9), 0.017506 + 0.01502, kTolerance);
  // Levels without fan-out are skipped: one device on each of 4 nodes of a rack.
  EXPECT_NEAR(all_reduce_time(c, GroupShape{{1, 4, 1}}, 1e9), 20e-6 + 2 * 0.75 * 1e9 / 12.5e9, kTolerance);
}

TEST(Collectives, HierarchicalAllGatherAndReduceScatter) {
  const ClusterSpec c = three_levels();
  // level 0: 3e-6 (log2 8 < 7) + 7/8*1e9/1e11 = 0.008753; level 1 on 1.25e8: 10e-6 + 3/4*1.25e8/12.5e9 = 0.00751
  EXPECT_NEAR(all_gather_time(c, GroupShape{{8, 4, 1}}, 1e9), 0.008753 + 0.00751, kTolerance);
  EXPECT_NEAR(reduce_scatter_time(c, GroupShape{{8, 4, 1}}, 1e9), 0.008753 + 0.00751, kTolerance);
  EXPECT_EQ(all_gather_time(c, GroupShape{{1, 1, 1}}, 1e9), 0.0);
}

TEST(Collectives, PointToPointPerLevel) {
  const ClusterSpec c = three_levels();
  EXPECT_NEAR(p2p_time(c, 0, 1e8), 1e-6 + 1e-3, kTolerance);
  EXPECT_NEAR(p2p_time(c, 2, 1e8), 1e-5 + 0.016, kTolerance);
}

TEST(Collectives, AllToAllFanoutAndFastUniform) {
  const ClusterSpec c = three_levels();
  const GroupShape group{{4, 2, 1}};  // 4 members per node, 2 nodes of one rack
  // 8e8 bytes per device: 3/8 stay on the node (3e8), 4/8 cross at level 1 (4e8 / 12.5e9 = 0.032 s).
  // fan-out: 7 alpha_1 + max(0.032, 3e8/1e11)
  EXPECT_NEAR(all_to_all_fanout_time(c, group, 8e8, 1.0), 35e-6 + 0.032, kTolerance);
  // FAST: 3 alpha_0 + 1 alpha_1 + max(0.032, (3e8 + 3e8 forwarded) / 1e11)
  EXPECT_NEAR(all_to_all_fast_time(c, group, 8e8, 1.0), 8e-6 + 0.032, kTolerance);
}

TEST(Collectives, AllToAllSkewHurtsFanoutMoreThanFast) {
  const ClusterSpec c = three_levels();
  const GroupShape group{{4, 2, 1}};
  // fan-out: the hot device's NIC carries 2x: 35e-6 + 2 * 0.032
  EXPECT_NEAR(all_to_all_fanout_time(c, group, 8e8, 2.0), 35e-6 + 0.064, kTolerance);
  // FAST spreads the node's load over 4 NICs: (3 + 2) / 4 * 0.032 = 0.04 (> 2 * 0.006 on NVLink)
  EXPECT_NEAR(all_to_all_fast_time(c, group, 8e8, 2.0), 8e-6 + 0.04, kTolerance);
}

TEST(Collectives, AllToAllAcrossRacksPaysEachLevel) {
  const ClusterSpec c = three_levels();
  const GroupShape group{{2, 2, 2}};  // n = 8: 1 peer on the node, 2 in the rack, 4 beyond
  // bytes 8e8: level 1 share 2/8 = 2e8 / 12.5e9 = 0.016; level 2 share 4/8 = 4e8 / 6.25e9 = 0.064
  EXPECT_NEAR(all_to_all_fanout_time(c, group, 8e8, 1.0), 7 * 1e-5 + 0.08, kTolerance);
}

// The price of a given matrix is the same model: on uniform traffic it is the
// uniform price, on any other it reads the loads off the matrix.
TEST(Collectives, AllToAllFastPriceOfAUniformMatrixIsTheUniformPrice) {
  const ClusterSpec c = three_levels();
  for (const GroupShape& group : {GroupShape{{4, 2, 1}}, GroupShape{{2, 2, 2}}, GroupShape{{1, 4, 2}}}) {
    const int n = group.size();
    const std::vector<std::uint64_t> matrix(static_cast<std::size_t>(n * n), 100'000'000);  // 1e8 to every member
    EXPECT_NEAR(all_to_all_fast_time(c, group, matrix), all_to_all_fast_time(c, group, n * 1e8, 1.0), kTolerance)
        << group.fanout[0] << "x" << group.fanout[1] << "x" << group.fanout[2];
  }
}

TEST(Collectives, AllToAllFastPriceOfAHotReceiver) {
  const ClusterSpec c = three_levels();
  // 2 nodes of 2 (members 0, 1 | 2, 3) in one rack; 0, 1 and 3 send 1e9 each to 2.
  std::vector<std::uint64_t> matrix(16, 0);
  matrix[0 * 4 + 2] = matrix[1 * 4 + 2] = matrix[3 * 4 + 2] = 1'000'000'000;
  // NIC: node 0 sends 2e9 over its 2 NICs at 12.5 GB/s = 0.08 s. Scale-up: member 2
  // receives 1e9 from 3 and the 1e9 that came in on 3's rail (2e9 / 100 GB/s = 0.02 s),
  // member 3 sends as much. Latency: 1 alpha_0 + 1 alpha_1.
  EXPECT_NEAR(all_to_all_fast_time(c, GroupShape{{2, 2, 1}}, matrix), 6e-6 + 0.08, kTolerance);
}

TEST(Collectives, AllToAllFastPriceTakesEachNodePairAtItsLevel) {
  const ClusterSpec c = three_levels();
  const GroupShape group{{1, 2, 2}};  // 4 nodes of one member, racks of 2
  std::vector<std::uint64_t> matrix(16, 0);
  matrix[0 * 4 + 1] = 1'000'000'000;  // same rack: 1e9 / 12.5 GB/s
  EXPECT_NEAR(all_to_all_fast_time(c, group, matrix), 3e-5 + 0.08, kTolerance);  // 3 stages at the spine's alpha
  matrix[0 * 4 + 1] = 0;
  matrix[0 * 4 + 3] = 1'000'000'000;  // across the spine: 1e9 / 6.25 GB/s
  EXPECT_NEAR(all_to_all_fast_time(c, group, matrix), 3e-5 + 0.16, kTolerance);
  EXPECT_THROW(all_to_all_fast_time(c, group, std::vector<std::uint64_t>(15)), std::invalid_argument);
}

// DeepEP: one rail copy per (token, destination node), then NVLink copies
// per destination member; latency 2 (alpha_top + alpha_0).
TEST(Collectives, AllToAllDeepEpSendsOncePerNodeThenPerMember) {
  const ClusterSpec c = three_levels();
  const GroupShape group{{4, 2, 1}};  // 4 members per node, 2 nodes of one rack
  const DeepEpRouting routing{{0.9, 0.6}, 0.3};
  // Rail: 1e8 * 0.6 = 6e7 to node 1 at 12.5 GB/s = 4.8e-3 s. NVLink: own node
  // 1e8 * 3 * 0.3 = 9e7, forwarded 6e7 arrivals * 3 * 0.3 / mean hit 0.75 =
  // 7.2e7, (9e7 + 7.2e7) / 100 GB/s = 1.62e-3 s. Latency 2 (5 + 1) us.
  EXPECT_NEAR(all_to_all_deepep_time(c, group, 1e8, routing, 1.0), 12e-6 + 4.8e-3, kTolerance);
  // A hot receiver: its node's rails carry (3 + 2) / 4 of the mean, its
  // NVLink twice the mean (3.24e-3 s).
  EXPECT_NEAR(all_to_all_deepep_time(c, group, 1e8, routing, 2.0), 12e-6 + 6e-3, kTolerance);
}

TEST(Collectives, AllToAllDeepEpInsideANodeIsNvlinkOnly) {
  const ClusterSpec c = three_levels();
  // 1e8 * 3 members * 0.3 = 9e7 over NVLink at 100 GB/s; latency 2 alpha_0.
  EXPECT_NEAR(all_to_all_deepep_time(c, GroupShape{{4, 1, 1}}, 1e8, DeepEpRouting{{1.0}, 0.3}, 1.0), 2e-6 + 9e-4,
              kTolerance);
}

TEST(Collectives, AllToAllDeepEpPaysEachNodeAtItsLevel) {
  const ClusterSpec c = three_levels();
  const GroupShape group{{2, 2, 2}};  // 4 nodes of 2, racks of 2 nodes
  const DeepEpRouting routing{{1.0, 0.5, 0.5, 0.5}, 0.25};
  // Rail: node 1 in the rack 5e7 / 12.5 GB/s = 4e-3, nodes 2 and 3 across the
  // spine 2 * 5e7 / 6.25 GB/s = 1.6e-2. NVLink: 2.5e7 own + 1.5e8 * 0.25 /
  // 0.625 = 6e7 forwarded, 8.5e-4 s. Latency 2 (10 + 1) us.
  EXPECT_NEAR(all_to_all_deepep_time(c, group, 1e8, routing, 1.0), 22e-6 + 0.02, kTolerance);
  EXPECT_THROW(all_to_all_deepep_time(c, group, 1e8, DeepEpRouting{{1.0, 0.5}, 0.25}, 1.0), std::invalid_argument);
}

TEST(GpuThroughput, EfficiencyCurveInterpolatesInLogFlops) {
  const ClusterSpec c = three_levels();
  EXPECT_NEAR(matmul_efficiency(c.gpu, 1e10), 0.7, kTolerance);
  EXPECT_NEAR(matmul_efficiency(c.gpu, 1e8), 0.5, kTolerance);
  EXPECT_NEAR(matmul_efficiency(c.gpu, 1e12), 0.9, kTolerance);
  EXPECT_NEAR(matmul_time(c.gpu, 1e10), 1e10 / (1e14 * 0.7), kTolerance);
  EXPECT_NEAR(hbm_time(c.gpu, 1e9), 1e9 / 1e12, kTolerance);
}

TEST(GpuThroughput, BadSpecsNameTheKey) {
  ClusterSpec c = three_levels();
  c.levels[1].bandwidth_Bps = 0;
  try {
    validate_cluster(c);
    FAIL() << "zero bandwidth accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string_view(error.what()).find("levels[1] (rack).bandwidth_Bps"), std::string_view::npos) << error.what();
  }
  c = three_levels();
  c.levels[0].latency_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(validate_cluster(c), std::invalid_argument);
  c = three_levels();
  c.levels[2].oversubscription = 0.5;
  EXPECT_THROW(validate_cluster(c), std::invalid_argument);
  c = three_levels();
  c.gpu.peak_flops_bf16 = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(validate_cluster(c), std::invalid_argument);
  c = three_levels();
  c.gpu.matmul_efficiency = {{1e10, 0.5}, {1e9, 0.9}};
  EXPECT_THROW(validate_cluster(c), std::invalid_argument);
}

}  // namespace
}  // namespace nestfast
