// Optimality of the level-wise DP: on 200 seeded random small models and
// 3-level clusters with tight memory, every instance's DP optimum equals
// the best of ALL its plans (every stage split x every recompute choice),
// each priced by evaluate_plan, and the DP's plan has exactly that price.
// Both search spaces: nest (recompute per stage, any placement) and
// megatron-core (one recompute setting per plan incl. block recompute of N
// layers per stage, Megatron's rank orders and expert grid).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "solver/search/baselines.hpp"
#include "solver/search/memory_model.hpp"
#include "solver/search/plan_cost.hpp"
#include "tests/unit/search/random_problem.hpp"

namespace nestfast::search {
namespace {

constexpr int kCases = 200;

struct Tally {
  int instances_checked = 0;
  int infeasible_instances = 0;
  int uneven_optima = 0;
  int recompute_optima = 0;
  int block_recompute_optima = 0;
  int pareto_walks = 0;  // instances whose DP needed more than one run
  int moe_cases = 0;
  int uniform_instances = 0;
};

Tally check_random_cases(Framework framework) {
  Tally t;
  for (int seed = 1; seed <= kCases; ++seed) {
    testing::RandomCase c = testing::random_case(static_cast<std::uint64_t>(seed));
    testing::tighten_memory(c, static_cast<std::uint64_t>(seed));
    c.problem.framework = framework;
    // Some cases also hold interleaved and even-split instances (the
    // uniform-stage path, recompute chosen per pipeline rank).
    if (seed % 5 == 0) c.space.vpp = {1, 2};
    if (seed % 7 == 0) c.space.uneven_layers = false;
    std::vector<DpInstance> instances;
    try {
      instances = enumerate_instances(c.problem, c.space);
    } catch (const std::invalid_argument&) {
      if (framework == Framework::Nest) throw;
      continue;  // nothing of this random model is a plan Megatron runs
    }
    if (c.problem.model.moe.enabled()) ++t.moe_cases;
    double best_dp = HUGE_VAL;
    double best_exhaustive = HUGE_VAL;
    for (const DpInstance& instance : instances) {
      const InstanceResult dp = solve_instance(c.problem, instance);
      const BaselineResult brute = exhaustive_baseline(c.problem, {instance});
      ++t.instances_checked;
      if (instance.vpp > 1 || !instance.uneven_layers) ++t.uniform_instances;
      EXPECT_EQ(dp.feasible, brute.feasible) << "seed " << seed << " instance " << instance.ordinal;
      if (dp.feasible != brute.feasible) return t;
      if (!dp.feasible) {
        ++t.infeasible_instances;
        EXPECT_GT(dp.min_memory_bytes, static_cast<double>(c.problem.cluster.gpu.hbm_bytes));
        EXPECT_FALSE(dp.infeasible_reason.empty());
        continue;
      }
      EXPECT_EQ(dp.iteration_time_s, brute.iteration_time_s)
          << "seed " << seed << " instance " << instance.ordinal << " tp=" << instance.tp << " pp=" << instance.pp;
      const PlanCost priced = evaluate_plan(c.problem.model, c.problem.cluster, dp.plan);
      EXPECT_TRUE(priced.feasible) << priced.infeasible_reason;
      EXPECT_EQ(priced.iteration_time_s, dp.iteration_time_s) << "the DP's plan must have the optimal price";
      if (dp.stats.dp_runs > 1) ++t.pareto_walks;
      const auto& stages = dp.plan.stages;
      for (const StagePlan& stage : stages) {
        if (stage.recompute != Recompute::None) {
          ++t.recompute_optima;
          if (stage.recompute_layers > 0) ++t.block_recompute_optima;
          break;
        }
      }
      for (std::size_t s = 1; s < stages.size(); ++s) {
        if (stages[s].last_layer - stages[s].first_layer != stages[0].last_layer - stages[0].first_layer) {
          ++t.uneven_optima;
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
  std::printf("%s: instances %d (uniform-stage %d), infeasible %d, uneven optima %d, recompute optima %d "
              "(block %d), pareto walks %d, moe cases %d\n",
              to_string(framework), t.instances_checked, t.uniform_instances, t.infeasible_instances, t.uneven_optima,
              t.recompute_optima, t.block_recompute_optima, t.pareto_walks, t.moe_cases);
  return t;
}

TEST(DpVsExhaustive, IdenticalOptimumOnRandomSmallProblems) {
  const Tally t = check_random_cases(Framework::Nest);
  // The generator must exercise what the DP claims to handle.
  RecordProperty("instances", t.instances_checked);
  EXPECT_GT(t.infeasible_instances, t.instances_checked / 20) << "memory never binds";
  EXPECT_GT(t.uneven_optima, 10);
  EXPECT_GT(t.recompute_optima, 10);
  EXPECT_GT(t.moe_cases, 10);
  EXPECT_GT(t.uniform_instances, 50);
}

TEST(DpVsExhaustive, IdenticalOptimumInTheMegatronCoreSpace) {
  const Tally t = check_random_cases(Framework::MegatronCore);
  RecordProperty("instances", t.instances_checked);
  EXPECT_GT(t.instances_checked, 1000);
  EXPECT_GT(t.infeasible_instances, t.instances_checked / 20) << "memory never binds";
  EXPECT_GT(t.uneven_optima, 10);
  EXPECT_GT(t.block_recompute_optima, 5);
  EXPECT_GT(t.moe_cases, 5);
  EXPECT_GT(t.uniform_instances, 50);
}

}  // namespace
}  // namespace nestfast::search
