// price_plan (cached layout and table) gives evaluate_plan's numbers bit for
// bit on random plans: random stage boundaries, random recompute per stage,
// interleaved schedules included.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "solver/search/plan_cost.hpp"
#include "solver/search/plan_pricer.hpp"
#include "solver/search/search_context.hpp"
#include "tests/unit/search/random_problem.hpp"

namespace nestfast::search {
namespace {

TEST(PlanPricer, EqualsEvaluatePlanExactly) {
  int compared = 0;
  int infeasible = 0;
  int interleaved = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    testing::RandomCase c = testing::random_case(seed);
    c.space.vpp.clear();
    c.space.placements.clear();
    c.space.micro_batch.clear();
    // HBM from the runtime reserve up to the plainest plan's need: some fit.
    c.problem.cluster.gpu.hbm_bytes = 1ull << 50;
    Execution plain;
    plain.dp = c.problem.gpus;
    plain.micro_batch = 1;
    plain.global_batch = c.problem.global_batch;
    const double need = evaluate_plan(c.problem.model, c.problem.cluster, plain).memory_peak_bytes;
    const double reserve = 2.0 * (1ull << 30);
    c.problem.cluster.gpu.hbm_bytes = static_cast<std::uint64_t>(reserve + (0.2 + 0.1 * static_cast<double>(seed % 8)) * (need - reserve));
    std::vector<DpInstance> instances = enumerate_instances(c.problem, c.space);
    // Random recompute per stage: NEST's own plans (its Megatron-Core plans take one setting).
    std::erase_if(instances, [](const DpInstance& instance) { return instance.framework != Framework::Nest; });
    SearchContext context(c.problem, instances);
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 20; ++trial) {
      const std::size_t i = rng() % instances.size();
      const PreparedInstance prepared = context.prepare(i);
      Execution plan = execution_skeleton(c.problem, instances[i]);
      plan.stages = uniform_stages(c.problem.model, *prepared.layout, plan.pp, plan.vpp, Recompute::None);
      if (plan.vpp == 1 && plan.pp > 1) {
        // Random boundaries: move each interior cut within its neighbours.
        for (std::size_t s = 1; s < plan.stages.size(); ++s) {
          const int low = plan.stages[s - 1].first_layer + 1;
          const int high = plan.stages[s].last_layer;
          const int cut = low + static_cast<int>(rng() % static_cast<std::uint64_t>(high - low + 1));
          plan.stages[s].first_layer = cut;
          plan.stages[s - 1].last_layer = cut - 1;
        }
      }
      for (StagePlan& stage : plan.stages) stage.recompute = static_cast<Recompute>(rng() % 3);
      const PlanCost truth = evaluate_plan(c.problem.model, c.problem.cluster, plan);
      const PlanPrice price = price_plan(c.problem, plan, *prepared.layout, *prepared.table);
      ASSERT_EQ(price.feasible, truth.feasible) << "seed " << seed << " trial " << trial;
      ASSERT_EQ(price.iteration_time_s, truth.iteration_time_s) << "seed " << seed << " trial " << trial;
      ++compared;
      if (!truth.feasible) ++infeasible;
      if (plan.vpp > 1) ++interleaved;
    }
  }
  EXPECT_GT(infeasible, 20);
  EXPECT_LT(infeasible, compared - 100);
  EXPECT_GT(interleaved, 10);
}

}  // namespace
}  // namespace nestfast::search
