// The plan on cases small enough to check by hand, the Birkhoff stage bound,
// quantisation, determinism, bad input, and that the verifier does fail on
// broken plans.
#include <gtest/gtest.h>

#include <stdexcept>

#include "comm/plan/birkhoff.hpp"
#include "comm/plan/fast_plan.hpp"
#include "comm/plan/verify_plan.hpp"
#include "plan_cases.hpp"

namespace nestfast::comm {
namespace {

// 2 servers x 2 GPUs. Rank 0 sends 10 bytes to rank 2; rank 3 sends 4 to rank 0.
TrafficMatrix two_by_two() {
  TrafficMatrix d(4);
  d(0, 2) = 10;
  d(3, 0) = 4;
  return d;
}

TEST(FastPlanByHand, BalanceHalvesTheLoadAndTheStageCarriesIt) {
  const FastPlan plan = build_fast_plan(two_by_two(), ServerMap::uniform(2, 2));
  ASSERT_TRUE(verify_plan(plan).empty()) << verify_plan(plan).front();
  EXPECT_EQ(plan.server_matrix, (std::vector<std::uint64_t>{0, 5, 2, 0}));
  EXPECT_EQ(plan.padded_line_sum, 5u);
  EXPECT_EQ(plan.padded_matrix, (std::vector<std::uint64_t>{0, 5, 5, 0}));
  ASSERT_EQ(plan.stage_count(), 1u);
  EXPECT_EQ(plan.stage_weights[0], 5u);
  EXPECT_EQ(std::vector<std::int32_t>(plan.stage_perm(0).begin(), plan.stage_perm(0).end()), (std::vector<std::int32_t>{1, 0}));
  ASSERT_EQ(plan.balance.size(), 2u);
  EXPECT_EQ(plan.balance[0], (BalanceMove{0, 1, {0, 1, 5, 10}}));
  EXPECT_EQ(plan.balance[1], (BalanceMove{3, 2, {3, 0, 2, 4}}));

  // Rank 1 takes bytes 5..10 of block (0 -> 2) and sends them on its rail to rank 3.
  const RankSchedule r1 = rank_schedule(plan, 1);
  ASSERT_EQ(r1.balance_recvs.size(), 1u);
  EXPECT_EQ(r1.staging_bytes, 5u);
  ASSERT_EQ(r1.rail_sends.size(), 1u);
  EXPECT_EQ(r1.rail_sends[0].peer, 3);
  ASSERT_EQ(r1.rail_sends[0].piece_count, 1u);
  EXPECT_EQ(r1.pieces[r1.rail_sends[0].first_piece], (Piece{0, 2, 5, 5, 0}));
  // Rank 3 is the proxy: it receives them and forwards them to rank 2.
  const RankSchedule r3 = rank_schedule(plan, 3);
  EXPECT_EQ(r3.rail_recvs[0].peer, 1);
  ASSERT_EQ(r3.forward_send_begin, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(r3.forward_sends[0].peer, 2);
  // Rank 2 gets them forwarded into its receive buffer at offset 5 of block (0 -> 2).
  const RankSchedule r2 = rank_schedule(plan, 2);
  ASSERT_EQ(r2.forward_recvs.size(), 1u);
  EXPECT_EQ(r2.forward_recvs[0].peer, 3);
  EXPECT_EQ(r2.pieces[r2.forward_recvs[0].first_piece], (Piece{0, 2, 5, 5, 5}));
  // Rank 0 keeps bytes 0..5 and sends them itself to rank 2.
  const RankSchedule r0 = rank_schedule(plan, 0);
  EXPECT_EQ(r0.rail_sends[0].peer, 2);
  EXPECT_EQ(r0.pieces[r0.rail_sends[0].first_piece], (Piece{0, 2, 0, 5, 0}));
}

TEST(FastPlanByHand, SingleServerIsAllIntrinsic) {
  TrafficMatrix d(3);
  for (int g = 0; g < 3; ++g) for (int h = 0; h < 3; ++h) d(g, h) = 1 + g + h;
  const FastPlan plan = build_fast_plan(d, ServerMap::uniform(1, 3));
  EXPECT_EQ(plan.stage_count(), 0u);
  EXPECT_TRUE(verify_plan(plan).empty());
  EXPECT_EQ(rank_schedule(plan, 1).intrinsic_recvs.size(), 3u);
}

TEST(Birkhoff, StageCountWithinBoundOnDenseMatrices) {
  for (int size : {2, 3, 8, 40, 128}) {
    testing::CaseRandom random(static_cast<std::uint64_t>(size));
    // A sum of random weighted permutations has equal line sums and a dense support.
    std::vector<std::uint64_t> m(static_cast<std::size_t>(size) * size, 0);
    std::vector<int> perm(static_cast<std::size_t>(size));
    for (int p = 0; p < 3 * size; ++p) {
      for (int i = 0; i < size; ++i) perm[i] = i;
      for (int i = size - 1; i > 0; --i) std::swap(perm[i], perm[random.below(i + 1)]);
      const std::uint64_t w = 1 + random.next() % 1000;
      for (int i = 0; i < size; ++i) m[static_cast<std::size_t>(i) * size + perm[i]] += w;
    }
    std::vector<std::uint64_t> padded = m;
    const std::uint64_t line = pad_to_equal_line_sums(padded, size);
    EXPECT_EQ(padded, m) << "already balanced, nothing to pad";
    const BirkhoffStages stages = birkhoff_decompose(padded, size, line);
    EXPECT_LE(stages.weights.size(), static_cast<std::size_t>(size * size - 2 * size + 2));
    std::vector<std::uint64_t> resum(m.size(), 0);
    for (std::size_t k = 0; k < stages.weights.size(); ++k) {
      for (int i = 0; i < size; ++i) resum[static_cast<std::size_t>(i) * size + stages.perms[k * size + i]] += stages.weights[k];
    }
    EXPECT_EQ(resum, m) << "size " << size;
  }
}

TEST(FastPlanQuantum, CutsStagesAndKeepsTheInvariants) {
  const testing::PlanCase c{"dense", ServerMap::uniform(12, 4), [] {
                              TrafficMatrix d(48);
                              testing::CaseRandom random(7);
                              for (int g = 0; g < 48; ++g) for (int h = 0; h < 48; ++h) d(g, h) = random.next() % 1000000;
                              return d;
                            }()};
  const FastPlan exact = build_fast_plan(c.demand, c.map);
  FastPlanOptions options;
  options.quantum = 1u << 20;
  const FastPlan coarse = build_fast_plan(c.demand, c.map, options);
  EXPECT_TRUE(verify_plan(coarse).empty());
  // Every weight is a multiple of the quantum, so there are at most line / quantum stages.
  EXPECT_LE(coarse.stage_count(), coarse.padded_line_sum / options.quantum);
  EXPECT_LT(coarse.stage_count(), exact.stage_count() / 2);
  EXPECT_GE(coarse.padded_line_sum, exact.padded_line_sum);
  for (std::uint64_t w : coarse.stage_weights) EXPECT_EQ(w % options.quantum, 0u);
}

TEST(FastPlanDeterminism, SameInputSameFingerprint) {
  const testing::PlanCase c = testing::make_case(56);
  const FastPlan a = build_fast_plan(c.demand, c.map);
  const FastPlan b = build_fast_plan(c.demand, c.map);
  EXPECT_EQ(plan_fingerprint(a), plan_fingerprint(b));
  TrafficMatrix changed = c.demand;
  changed(0, c.map.ranks() - 1) += 1;
  EXPECT_NE(plan_fingerprint(build_fast_plan(changed, c.map)), plan_fingerprint(a));
}

TEST(FastPlanInput, MismatchedRanksAndBadMapsAreRejected) {
  EXPECT_THROW(build_fast_plan(TrafficMatrix(5), ServerMap::uniform(2, 2)), std::invalid_argument);
  EXPECT_THROW(ServerMap(std::vector<int>{0, 2}), std::invalid_argument);  // server 1 has no rank
  EXPECT_THROW(ServerMap(std::vector<int>{0, -1}), std::invalid_argument);
  EXPECT_THROW(ServerMap::uniform(0, 8), std::invalid_argument);
  EXPECT_THROW(TrafficMatrix(3, std::vector<std::uint64_t>(8)), std::invalid_argument);
}

// Each corruption must be reported: the checker can fail.
TEST(VerifyPlan, ReportsBrokenPlans) {
  const testing::PlanCase c{"dense", ServerMap::uniform(6, 3), [] {
                              TrafficMatrix d(18);
                              testing::CaseRandom random(11);
                              for (int g = 0; g < 18; ++g) for (int h = 0; h < 18; ++h) d(g, h) = 1 + random.next() % 5000;
                              return d;
                            }()};
  const FastPlan good = build_fast_plan(c.demand, c.map);
  ASSERT_TRUE(verify_plan(good).empty());
  ASSERT_GT(good.stage_count(), 2u);
  ASSERT_FALSE(good.balance.empty());

  auto broken = [&](auto&& corrupt) {
    FastPlan plan = good;
    corrupt(plan);
    return !verify_plan(plan).empty();
  };
  EXPECT_TRUE(broken([](FastPlan& p) { p.stage_perms[1] = p.stage_perms[0]; })) << "not a permutation";
  EXPECT_TRUE(broken([](FastPlan& p) { std::swap(p.stage_perms[0], p.stage_perms[1]); })) << "inverse / re-sum";
  EXPECT_TRUE(broken([](FastPlan& p) { p.stage_weights[1] -= 1; })) << "re-sum";
  EXPECT_TRUE(broken([](FastPlan& p) { std::swap(p.stage_weights.front(), p.stage_weights.back()); })) << "order";
  EXPECT_TRUE(broken([](FastPlan& p) { p.padded_matrix[1] += 1; })) << "padded lines";
  EXPECT_TRUE(broken([](FastPlan& p) { p.balance.pop_back(); })) << "balance move missing";
  EXPECT_TRUE(broken([](FastPlan& p) { p.rail_segments.back().end -= 1; })) << "a byte never sent";
  EXPECT_TRUE(broken([](FastPlan& p) { p.rail_segments.front().begin += 1; })) << "a byte never sent";
  EXPECT_TRUE(broken([](FastPlan& p) { p.demand(0, 17) += 1; })) << "demand not covered";
  EXPECT_TRUE(broken([](FastPlan& p) {
    // Two streams of one rank swapped: bytes go to the wrong server.
    const std::size_t S = static_cast<std::size_t>(p.servers());
    std::swap(p.rail_segments[p.rail_begin[1]], p.rail_segments[p.rail_begin[2]]);
    (void)S;
  })) << "wrong server";
}

}  // namespace
}  // namespace nestfast::comm
