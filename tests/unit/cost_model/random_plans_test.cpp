// Seeded random plans over every option: every valid plan prices to finite,
// positive numbers whose breakdown adds up; every invalid one is rejected
// with std::invalid_argument (never a crash or a NaN).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

#include "solver/search/execution_layout.hpp"
#include "solver/search/plan_cost.hpp"
#include "test_specs.hpp"

namespace nestfast {
namespace {

TEST(RandomPlans, FiniteAndConsistentOrRejected) {
  std::mt19937 random(20261129);
  auto pick = [&](std::initializer_list<int> values) {
    std::uniform_int_distribution<std::size_t> index(0, values.size() - 1);
    return *(values.begin() + index(random));
  };
  const ModelSpec models[] = {test::gpt_model(12, 2048, 16, 1024), test::moe_model()};
  const ClusterSpec cluster = test::a100_cluster();
  int priced = 0, rejected = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const ModelSpec& model = models[trial % 2];
    Execution e;
    e.tp = pick({1, 2, 4, 8});
    e.cp = pick({1, 2});
    e.pp = pick({1, 2, 3, 4});
    e.dp = pick({1, 2, 4, 8});
    e.ep = model.moe.enabled() ? pick({1, 2, 4, 8}) : 1;
    e.sp = pick({0, 1}) == 1;
    e.micro_batch = pick({1, 2});
    e.global_batch = e.dp * e.micro_batch * pick({1, 2, 4, 8});
    e.zero_stage = pick({0, 1, 2, 3});
    e.vpp = e.pp > 1 ? pick({1, 2}) : 1;
    e.attention = pick({0, 1}) == 1 ? Attention::Flash : Attention::Unfused;
    e.overlap = {pick({0, 1}) == 1, pick({0, 1}) == 1, pick({0, 1}) == 1, pick({0, 1}) == 1, pick({0, 1}) == 1};
    e.a2a = pick({0, 1}) == 1 ? AllToAllAlgorithm::Fast : AllToAllAlgorithm::Fanout;
    e.expert_imbalance = 1.0 + 0.25 * pick({0, 1, 2});
    std::shuffle(e.placement.begin(), e.placement.end(), random);
    try {
      validate_degrees(model, cluster, e, e.devices());
    } catch (const std::invalid_argument&) {
      ++rejected;
      continue;
    }
    const ExecutionLayout layout = compute_layout(cluster, e);
    e.stages = uniform_stages(model, layout, e.pp, e.vpp, static_cast<Recompute>(pick({0, 1, 2})));
    const PlanCost cost = evaluate_plan(model, cluster, e);
    ++priced;
    ASSERT_TRUE(std::isfinite(cost.iteration_time_s) && cost.iteration_time_s > 0) << trial;
    ASSERT_TRUE(cost.mfu > 0 && cost.mfu < 1) << trial << " mfu " << cost.mfu;
    const TimeBreakdown& b = cost.breakdown;
    const double sum = b.compute_s + b.recompute_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.zero3_gather_s +
                       b.p2p_s + b.bubble_s + b.dp_sync_s + b.optimizer_s;
    ASSERT_NEAR(sum, cost.iteration_time_s, 1e-9 * cost.iteration_time_s) << trial;
    ASSERT_EQ(cost.ranks.size(), static_cast<std::size_t>(e.pp));
    for (const RankCost& rank : cost.ranks) ASSERT_GT(rank.memory.total_bytes(), 0) << trial;
    // Serial communication always shows; overlapped may hide entirely.
    if (e.ep > 1 && !e.overlap.moe_a2a) {
      ASSERT_GT(b.ep_comm_s, 0) << trial;
    }
    if (e.tp > 1) {
      ASSERT_GT(b.tp_comm_s, 0) << trial;  // with TP overlap the reduce-scatters' last chunks stay exposed
    }
    ASSERT_GE(b.ep_comm_s, 0) << trial;
    ASSERT_GE(b.p2p_s, 0) << trial;
    ASSERT_GE(b.dp_sync_s, 0) << trial;
  }
  std::printf("%d plans priced, %d rejected\n", priced, rejected);
  EXPECT_GT(priced, 100);
  EXPECT_GT(rejected, 10);
}

}  // namespace
}  // namespace nestfast
