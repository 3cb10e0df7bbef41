// Every algorithm delivers every byte to the right place (checked by the
// validation words), on any rank count the test runs with, for 1-4 virtual
// servers (uneven ones included), odd sizes, silent ranks, one huge entry and
// the empty exchange; and the check itself does catch wrong or missing bytes.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "comm/exec/alltoallv.hpp"
#include "comm/exec/counts_exchange.hpp"
#include "comm/exec/exchange_buffers.hpp"
#include "comm/exec/harness.hpp"
#include "comm/exec/server_topology.hpp"
#include "tests/mpi/exec/world.hpp"

namespace nestfast::comm {
namespace {

using test_world::world_rank;
using test_world::world_size;

TrafficMatrix constant_counts(int ranks, std::uint64_t bytes) {
  return TrafficMatrix(ranks, std::vector<std::uint64_t>(static_cast<std::size_t>(ranks) * ranks, bytes));
}

// Seeded, identical on every rank: about a third of the pairs empty, the rest odd-sized.
TrafficMatrix random_counts(int ranks, std::uint64_t max_bytes, std::uint64_t seed) {
  TrafficMatrix counts(ranks);
  for (int src = 0; src < ranks; ++src) {
    for (int dst = 0; dst < ranks; ++dst) {
      const std::uint64_t draw = splitmix64(seed * 1000003 + static_cast<std::uint64_t>(src * ranks + dst));
      counts(src, dst) = draw % 3 == 0 ? 0 : ((draw >> 8) % max_bytes) | 1U;
    }
  }
  return counts;
}

// Communicator creation costs tens of milliseconds on oversubscribed cores:
// one topology per server count, freed before MPI_Finalize.
std::map<int, std::unique_ptr<ServerTopology>>& topologies() {
  static std::map<int, std::unique_ptr<ServerTopology>> cache;
  return cache;
}

class FreeTopologies : public ::testing::Environment {
 public:
  void TearDown() override { topologies().clear(); }
};
const auto* const free_topologies = ::testing::AddGlobalTestEnvironment(new FreeTopologies);

const ServerTopology& topology_for(int virtual_servers) {
  auto& slot = topologies()[virtual_servers];
  if (!slot) slot = std::make_unique<ServerTopology>(MPI_COMM_WORLD, virtual_servers);
  return *slot;
}

Measurement deliver(const std::string& algo, const TrafficMatrix& counts, int virtual_servers) {
  const std::uint64_t seed = 7;
  const ServerTopology& topology = topology_for(virtual_servers);
  const AlltoallvLayout layout = layout_of_rank(counts, world_rank());
  const TrafficMatrix gathered = gather_counts(MPI_COMM_WORLD, layout);
  EXPECT_EQ(gathered, counts);
  ExchangeBuffers buffers(layout, world_rank(), seed);
  auto algorithm = make_alltoallv(algo);
  return measure_alltoallv(*algorithm, topology, layout, gathered, buffers,
                           HarnessOptions{.iterations = 1, .warmup = 0, .validate = true, .seed = seed});
}

class Delivery : public ::testing::TestWithParam<std::tuple<std::string, int>> {
 protected:
  void expect_exact(const TrafficMatrix& counts) {
    const auto& [algo, servers] = GetParam();
    if (servers > world_size()) GTEST_SKIP() << servers << " servers need more ranks";
    const Measurement result = deliver(algo, counts, servers);
    EXPECT_TRUE(result.validated);
    EXPECT_EQ(result.wrong, 0U) << algo << " on " << servers << " servers: first bad (src " <<
        (result.first_bad.empty() ? -1 : result.first_bad[0].src) << ", dst " <<
        (result.first_bad.empty() ? -1 : result.first_bad[0].dst) << ")";
    EXPECT_GT(result.avg_s, 0.0);
  }
};

TEST_P(Delivery, ConstantSizeNotAMultipleOfTheWord) { expect_exact(constant_counts(world_size(), 1003)); }

TEST_P(Delivery, SeededRandomSizesWithEmptyPairs) { expect_exact(random_counts(world_size(), 20000, 3)); }

TEST_P(Delivery, RankWithNothingToSendAndOneHugeEntry) {
  TrafficMatrix counts = random_counts(world_size(), 4000, 11);
  for (int dst = 0; dst < counts.ranks(); ++dst) counts(1, dst) = 0;
  counts(0, counts.ranks() - 1) = (3U << 20) + 5;
  expect_exact(counts);
}

TEST_P(Delivery, RankThatReceivesNothing) {
  TrafficMatrix counts = random_counts(world_size(), 4000, 5);
  for (int src = 0; src < counts.ranks(); ++src) counts(src, 2) = 0;
  expect_exact(counts);
}

TEST_P(Delivery, EmptyExchange) { expect_exact(constant_counts(world_size(), 0)); }

std::string case_name(const ::testing::TestParamInfo<Delivery::ParamType>& info) {
  return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "servers";
}

// auto is one of the others at any size (its picks are tested in fast_program_test.cpp).
std::vector<std::string> algorithms_but_auto() {
  std::vector<std::string> names;
  for (const auto& name : alltoallv_algorithm_names()) {
    if (name != "auto") names.push_back(name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, Delivery,
                         ::testing::Combine(::testing::ValuesIn(algorithms_but_auto()),
                                            ::testing::Values(1, 2, 3, 4)),
                         case_name);

// The check can fail: one flipped byte is counted once and named; a receive
// buffer the exchange never wrote is counted in full.
TEST(DeliveryCheck, FindsOneCorruptedByteAndNamesIt) {
  const TrafficMatrix counts = constant_counts(world_size(), 101);
  const AlltoallvLayout layout = layout_of_rank(counts, world_rank());
  const ServerTopology& topology = topology_for(2);
  ExchangeBuffers buffers(layout, world_rank(), 9);
  auto algorithm = make_alltoallv("mpi");
  algorithm->prepare(topology, layout, counts);
  buffers.poison_recv();
  algorithm->execute(buffers.send(), buffers.recv());
  if (world_rank() == 1) buffers.recv()[layout.recv_displs[2] + 37] ^= std::byte{0x10};
  const DeliveryCheck check = check_delivery(MPI_COMM_WORLD, layout, buffers.recv(), 9);
  EXPECT_EQ(check.wrong, 1U);
  ASSERT_EQ(check.first_bad.size(), 1U);
  EXPECT_EQ(check.first_bad[0].src, 2);
  EXPECT_EQ(check.first_bad[0].dst, 1);
  EXPECT_EQ(check.first_bad[0].offset, 37U);
}

TEST(DeliveryCheck, CountsEveryByteThatNeverArrived) {
  const TrafficMatrix counts = constant_counts(world_size(), 13);
  const AlltoallvLayout layout = layout_of_rank(counts, world_rank());
  ExchangeBuffers buffers(layout, world_rank(), 9);
  buffers.poison_recv();
  const DeliveryCheck check = check_delivery(MPI_COMM_WORLD, layout, buffers.recv(), 9);
  EXPECT_EQ(check.wrong, 13U * world_size() * world_size());
  EXPECT_EQ(check.first_bad.size(), 4U);
}

// An algorithm that loses the last byte of one block: the harness reports it.
class LosesOneByte final : public Alltoallv {
 public:
  std::string name() const override { return "loses-one-byte"; }
  void prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix& counts) override {
    inner_->prepare(topology, layout, counts);
    layout_ = layout;
  }
  void execute(const std::byte* send, std::byte* recv) override {
    inner_->execute(send, recv);
    if (world_rank() == 3) recv[layout_.recv_displs[0] + layout_.recv_counts[0] - 1] ^= std::byte{1};
  }
  int stages() const override { return inner_->stages(); }

 private:
  std::unique_ptr<Alltoallv> inner_ = make_alltoallv("pairwise");
  AlltoallvLayout layout_;
};

TEST(DeliveryCheck, HarnessReportsAnAlgorithmThatCorrupts) {
  const TrafficMatrix counts = constant_counts(world_size(), 64);
  const AlltoallvLayout layout = layout_of_rank(counts, world_rank());
  const ServerTopology& topology = topology_for(1);
  ExchangeBuffers buffers(layout, world_rank(), 5);
  LosesOneByte algorithm;
  const Measurement result = measure_alltoallv(algorithm, topology, layout, counts, buffers,
                                               HarnessOptions{.iterations = 1, .warmup = 0, .validate = true, .seed = 5});
  EXPECT_EQ(result.wrong, 1U);
  ASSERT_FALSE(result.first_bad.empty());
  EXPECT_EQ(result.first_bad[0].src, 0);
  EXPECT_EQ(result.first_bad[0].dst, 3);
  EXPECT_EQ(result.first_bad[0].offset, 63U);
}

// Mismatched counts are an error on every rank, not a hang.
TEST(CountsExchange, DisagreementThrowsOnEveryRank) {
  const TrafficMatrix counts = constant_counts(world_size(), 7);
  AlltoallvLayout layout = layout_of_rank(counts, world_rank());
  if (world_rank() == 2) layout.recv_counts[0] = 5;
  try {
    gather_counts(MPI_COMM_WORLD, layout);
    FAIL() << "no error on rank " << world_rank();
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()).rfind("alltoallv counts disagree: rank 2 expects 5 bytes from rank 0, "
                                              "which sends 7", 0), 0U) << error.what();
  }
}

TEST(CountsExchange, WrongLengthLayoutThrowsOnEveryRank) {
  AlltoallvLayout layout = layout_of_rank(constant_counts(world_size(), 1), world_rank());
  if (world_rank() == 1) layout.send_counts.pop_back();
  EXPECT_THROW(gather_counts(MPI_COMM_WORLD, layout), std::invalid_argument);
}

TEST(ServerTopology, VirtualServersGroupConsecutiveRanksFirstOnesLarger) {
  const int n = world_size();
  const ServerTopology& topology = topology_for(3);
  const ServerMap& map = topology.map();
  ASSERT_EQ(map.servers(), 3);
  const int base = n / 3, extra = n % 3;
  int first = 0;
  for (int s = 0; s < 3; ++s) {
    const int members = base + (s < extra ? 1 : 0);
    ASSERT_EQ(map.gpus_on(s), members);
    EXPECT_EQ(map.rank_at(s, 0), first);
    first += members;
  }
  int node_size = 0, rail_size = 0;
  MPI_Comm_size(topology.node_comm(), &node_size);
  MPI_Comm_size(topology.rail_comm(), &rail_size);
  const int me = world_rank();
  EXPECT_EQ(node_size, map.gpus_on(map.server_of(me)));
  int expected_rail = 0;
  for (int s = 0; s < map.servers(); ++s) {
    if (map.gpus_on(s) > map.local_index(me)) ++expected_rail;
  }
  EXPECT_EQ(rail_size, expected_rail);
  int node_rank = 0, rail_rank = 0;
  MPI_Comm_rank(topology.node_comm(), &node_rank);
  MPI_Comm_rank(topology.rail_comm(), &rail_rank);
  EXPECT_EQ(node_rank, topology.node_rank_of(me));
  EXPECT_EQ(rail_rank, topology.rail_rank_of(me));
}

TEST(ServerTopology, NodeSplitPutsThisMachineInOneServer) {
  ServerTopology topology(MPI_COMM_WORLD, 0);
  EXPECT_EQ(topology.map().servers(), 1);
  EXPECT_EQ(topology.map().max_gpus_per_server(), world_size());
}

TEST(ServerTopology, RejectsMoreServersThanRanks) {
  EXPECT_THROW(ServerTopology(MPI_COMM_WORLD, world_size() + 1), std::invalid_argument);
  EXPECT_THROW(ServerTopology(MPI_COMM_WORLD, -1), std::invalid_argument);
}

// Above 2^31 bytes in one block, across servers (so FAST balances it and
// forwards it through a proxy): needs ~7 GB of memory, so it runs only on request.
TEST(Delivery, EntryAboveTwoToThe31BytesOnRequest) {
  if (std::getenv("NESTFAST_BIG_TESTS") == nullptr) GTEST_SKIP() << "set NESTFAST_BIG_TESTS=1 to run";
  TrafficMatrix counts = constant_counts(world_size(), 3);
  counts(0, world_size() - 1) = (std::uint64_t{1} << 31) + 13;
  for (const auto& algo : alltoallv_algorithm_names()) {
    const Measurement result = deliver(algo, counts, 2);
    EXPECT_EQ(result.wrong, 0U) << algo;
  }
}

}  // namespace
}  // namespace nestfast::comm
