// FAST's compiled program has the shape comm.md section 2 asks for: per step
// at most one rail receive and one rail send, node traffic on node_comm only,
// no empty message, at most stages + 2 steps; and skewed workloads (which make
// the intra-server balance move data) still deliver every byte, with and
// without quantisation, and through auto when it picks fast.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "comm/exec/algo_auto.hpp"
#include "comm/exec/algo_fast.hpp"
#include "comm/exec/counts_exchange.hpp"
#include "comm/exec/exchange_buffers.hpp"
#include "comm/exec/harness.hpp"
#include "comm/exec/sweep_point.hpp"
#include "comm/workload/workload.hpp"
#include "gpu/device.hpp"
#include "tests/mpi/exec/world.hpp"

namespace nestfast::comm {
namespace {

using test_world::world_rank;
using test_world::world_size;

TEST(FastProgram, OneRailSendAndReceivePerStageOnTheRailAndNoEmptyMessage) {
  const ServerTopology topology(MPI_COMM_WORLD, 4 <= world_size() ? 4 : world_size());
  const TrafficMatrix demand = make_workload("zipf:0.8", world_size(), 6000, 3);
  const FastPlan plan = build_fast_plan(demand, topology.map());
  ASSERT_GT(plan.stage_count(), 1U);
  const FastProgram program = compile_schedule(rank_schedule(plan, world_rank()), topology);
  auto increasing = [](const auto& list) {
    for (std::size_t i = 1; i < list.size(); ++i) {
      if (list[i].stage <= list[i - 1].stage) return false;
    }
    return true;
  };
  EXPECT_TRUE(increasing(program.rail_sends));
  EXPECT_TRUE(increasing(program.rail_receives));
  EXPECT_LE(program.rail_sends.size(), plan.stage_count());
  for (const RailSend& send : program.rail_sends) {
    EXPECT_GT(send.data.bytes, 0U);
    EXPECT_EQ(send.data.comm, topology.rail_comm());
    EXPECT_NE(send.grant_tag, send.data.tag);
  }
  for (const RailReceive& receive : program.rail_receives) {
    EXPECT_GT(receive.data.bytes, 0U);
    EXPECT_EQ(receive.data.comm, topology.rail_comm());
  }
  for (const auto* list : {&program.balance_receives, &program.node_receives, &program.node_sends, &program.forwards}) {
    for (const ProgramMessage& message : *list) {
      EXPECT_GT(message.bytes, 0U);
      EXPECT_EQ(message.comm, topology.node_comm());
    }
  }
}

Measurement run(Alltoallv& algorithm, const ServerTopology& topology, const TrafficMatrix& demand) {
  const AlltoallvLayout layout = layout_of_rank(demand, world_rank());
  const TrafficMatrix counts = gather_counts(MPI_COMM_WORLD, layout);
  ExchangeBuffers buffers(layout, world_rank(), 21);
  return measure_alltoallv(algorithm, topology, layout, counts, buffers,
                           HarnessOptions{.iterations = 1, .warmup = 0, .validate = true, .seed = 21});
}

TEST(FastProgram, SkewedWorkloadsMoveBalanceBytesAndArriveExactly) {
  for (const int servers : {2, 3}) {
    const ServerTopology topology(MPI_COMM_WORLD, servers);
    for (const std::string workload : {"random", "hot:5", "zipf:1.2", "moe:16,2,0.8"}) {
      const TrafficMatrix demand = make_workload(workload, world_size(), 20011, 5);
      if (workload == "random") {
        // Independent weights leave the GPUs of server 0 unequal: the balance must move bytes.
        EXPECT_FALSE(build_fast_plan(demand, topology.map()).balance.empty()) << servers << " servers";
      }
      FastAlltoallv exact;
      EXPECT_EQ(run(exact, topology, demand).wrong, 0U) << workload << " on " << servers << " servers";
      FastAlltoallv quantised(FastPlanOptions{.quantum = 4096});
      EXPECT_EQ(run(quantised, topology, demand).wrong, 0U) << workload << " quantised";
      FastAlltoallv chunked({}, 1000);  // rail data in 1000-byte messages
      EXPECT_EQ(run(chunked, topology, demand).wrong, 0U) << workload << " chunked";
    }
  }
}

// One NIC per server (the testbed's): every cross-server byte of a server goes
// through its first GPU, which packs its own bytes and the balance's into each
// rail send and sends the packed prefix in chunks while the rest is packed or
// still arriving.
TEST(FastProgram, OneNicPerServerPacksOwnBytesBeforeTheBalanceArrives) {
  for (const int servers : {2, 3}) {
    const ServerTopology topology(MPI_COMM_WORLD, servers, 1);
    for (const std::string workload : {"uniform", "random", "hot:5"}) {
      const TrafficMatrix demand = make_workload(workload, world_size(), 3 * 20011, 7);
      FastAlltoallv chunked({}, 1000);
      EXPECT_EQ(run(chunked, topology, demand).wrong, 0U) << workload << " on " << servers << " servers";
      FastAlltoallv whole;
      EXPECT_EQ(run(whole, topology, demand).wrong, 0U) << workload << " unchunked on " << servers << " servers";
    }
  }
}

TEST(AutoAlgorithm, PicksByThresholdAndSaysSo) {
  const ServerTopology topology(MPI_COMM_WORLD, 2);
  const TrafficMatrix demand = make_workload("random", world_size(), 3000, 9);
  AutoAlltoallv below({.auto_threshold_bytes = 1U << 20}), above({.auto_threshold_bytes = 1});
  const Measurement small = run(below, topology, demand);
  EXPECT_EQ(small.decision, "mpi");
  EXPECT_EQ(small.wrong, 0U);
  const Measurement large = run(above, topology, demand);
  EXPECT_EQ(large.decision, "fast");
  EXPECT_EQ(large.stages, static_cast<int>(build_fast_plan(demand, topology.map()).stage_count()));
  EXPECT_EQ(large.wrong, 0U);
}

// GPU buffers, each algorithm staged through pinned host memory: same bytes
// (runs where every rank sees a GPU, skips elsewhere).
TEST(DeviceBuffers, EveryAlgorithmDeliversFromAndToTheGpu) {
  int without = gpu::device_count() > 0 ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &without, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (without != 0) GTEST_SKIP() << "not every rank sees a GPU (back-end " << gpu::backend_name() << ")";
  const ServerTopology topology(MPI_COMM_WORLD, 2);
  const TrafficMatrix demand = make_workload("zipf:0.8", world_size(), 40003, 13);
  const LinkRates no_bound{};
  const PointResult point = measure_point(topology, demand, 40003, alltoallv_algorithm_names(), {},
                                          HarnessOptions{.iterations = 1, .warmup = 0, .seed = 13, .device = true},
                                          no_bound);
  for (const Measurement& result : point.runs) EXPECT_EQ(result.wrong, 0U) << result.algo;
}

}  // namespace
}  // namespace nestfast::comm
