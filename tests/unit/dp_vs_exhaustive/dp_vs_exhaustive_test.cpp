// Optimality of the level-wise DP: on 200 seeded random small models and
// 3-level clusters with tight memory, every instance's DP optimum equals
// the best of ALL its plans (every stage split x every recompute choice),
// each priced by evaluate_plan, and the DP's plan has exactly that price.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "solver/search/baselines.hpp"
#include "solver/search/memory_model.hpp"
#include "solver/search/plan_cost.hpp"
#include "tests/unit/search/random_problem.hpp"

namespace nestfast::search {
namespace {

constexpr int kCases = 200;

TEST(DpVsExhaustive, IdenticalOptimumOnRandomSmallProblems) {
  int instances_checked = 0;
  int infeasible_instances = 0;
  int uneven_optima = 0;
  int recompute_optima = 0;
  int pareto_walks = 0;  // instances whose DP needed more than one run
  int moe_cases = 0;
  int uniform_instances = 0;
  for (int seed = 1; seed <= kCases; ++seed) {
    testing::RandomCase c = testing::random_case(static_cast<std::uint64_t>(seed));
    testing::tighten_memory(c, static_cast<std::uint64_t>(seed));
    // Some cases also hold interleaved and even-split instances (the
    // uniform-stage path, recompute chosen per pipeline rank).
    if (seed % 5 == 0) c.space.vpp = {1, 2};
    if (seed % 7 == 0) c.space.uneven_layers = false;
    if (c.problem.model.moe.enabled()) ++moe_cases;
    const std::vector<DpInstance> instances = enumerate_instances(c.problem, c.space);
    double best_dp = HUGE_VAL;
    double best_exhaustive = HUGE_VAL;
    for (const DpInstance& instance : instances) {
      const InstanceResult dp = solve_instance(c.problem, instance);
      const BaselineResult brute = exhaustive_baseline(c.problem, {instance});
      ++instances_checked;
      if (instance.vpp > 1 || !instance.uneven_layers) ++uniform_instances;
      ASSERT_EQ(dp.feasible, brute.feasible) << "seed " << seed << " instance " << instance.ordinal;
      if (!dp.feasible) {
        ++infeasible_instances;
        EXPECT_GT(dp.min_memory_bytes, static_cast<double>(c.problem.cluster.gpu.hbm_bytes));
        EXPECT_FALSE(dp.infeasible_reason.empty());
        continue;
      }
      ASSERT_EQ(dp.iteration_time_s, brute.iteration_time_s)
          << "seed " << seed << " instance " << instance.ordinal << " tp=" << instance.tp << " pp=" << instance.pp;
      const PlanCost priced = evaluate_plan(c.problem.model, c.problem.cluster, dp.plan);
      ASSERT_TRUE(priced.feasible) << priced.infeasible_reason;
      ASSERT_EQ(priced.iteration_time_s, dp.iteration_time_s) << "the DP's plan must have the optimal price";
      if (dp.stats.dp_runs > 1) ++pareto_walks;
      const auto& stages = dp.plan.stages;
      for (const StagePlan& stage : stages) {
        if (stage.recompute != Recompute::None) {
          ++recompute_optima;
          break;
        }
      }
      for (std::size_t s = 1; s < stages.size(); ++s) {
        if (stages[s].last_layer - stages[s].first_layer != stages[0].last_layer - stages[0].first_layer) {
          ++uneven_optima;
          break;
        }
      }
      best_dp = std::min(best_dp, dp.iteration_time_s);
      best_exhaustive = std::min(best_exhaustive, brute.iteration_time_s);
    }
    SolveOptions options;
    options.baselines = false;
    options.threads = 1;
    const SolveResult solved = solve(c.problem, c.space, options);
    if (solved.feasible) {
      EXPECT_EQ(solved.top.front().iteration_time_s, best_exhaustive) << "seed " << seed;
    }
    EXPECT_EQ(best_dp, best_exhaustive) << "seed " << seed;
  }
  // The generator must exercise what the DP claims to handle.
  RecordProperty("instances", instances_checked);
  std::printf("instances %d (uniform-stage %d), infeasible %d, uneven optima %d, recompute optima %d, "
              "pareto walks %d, moe cases %d\n",
              instances_checked, uniform_instances, infeasible_instances, uneven_optima, recompute_optima, pareto_walks,
              moe_cases);
  EXPECT_GT(infeasible_instances, instances_checked / 20) << "memory never binds";
  EXPECT_GT(uneven_optima, 10);
  EXPECT_GT(recompute_optima, 10);
  EXPECT_GT(moe_cases, 10);
  EXPECT_GT(uniform_instances, 50);
}

}  // namespace
}  // namespace nestfast::search
