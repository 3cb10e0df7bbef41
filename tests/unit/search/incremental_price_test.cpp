// IncrementalPrice (the MCMC baseline's pricer) equals price_plan exactly,
// double for double, along random walks of boundary moves and recompute
// changes, kept or undone, interleaved schedules included; and evaluate_plan
// (which price_plan equals bit for bit, plan_pricer_test) at every 10th step.
// Exact because a touched rank is re-summed from its stages in
// price_plan's order and the maxima over ranks are exact.
// Also: the MCMC baseline spends the DP's budget and is deterministic.
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>

#include "solver/search/baselines.hpp"
#include "solver/search/incremental_price.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/plan_pricer.hpp"
#include "solver/search/search_context.hpp"
#include "tests/unit/search/random_problem.hpp"

namespace nestfast::search {
namespace {

TEST(IncrementalPrice, EqualsPricePlanAlongRandomWalks) {
  int steps = 0, undone = 0, infeasible = 0, interleaved_moves = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    testing::RandomCase c = testing::random_case(seed);
    c.space.vpp.clear();  // interleaving allowed
    c.space.placements.clear();
    c.space.micro_batch.clear();
    testing::tighten_memory(c, seed);
    std::vector<DpInstance> instances = enumerate_instances(c.problem, c.space);
    // Random recompute per stage: NEST's own plans (its Megatron-Core plans take one setting).
    std::erase_if(instances, [](const DpInstance& instance) { return instance.framework != Framework::Nest; });
    SearchContext context(c.problem, instances);
    std::mt19937_64 rng(seed);
    for (int walk = 0; walk < 6; ++walk) {
      const DpInstance& instance = instances[rng() % instances.size()];
      const PreparedInstance prepared = context.prepare(static_cast<std::size_t>(&instance - instances.data()));
      Execution plan = execution_skeleton(c.problem, instance);
      plan.stages = uniform_stages(c.problem.model, *prepared.layout, plan.pp, plan.vpp, Recompute::None);
      for (StagePlan& stage : plan.stages) stage.recompute = static_cast<Recompute>(rng() % 3);
      IncrementalPrice price;
      ASSERT_EQ(price.reset(c.problem, plan, *prepared.layout, *prepared.table), plan.stages.size());
      for (int step = 0; step < 60; ++step) {
        const Execution& now = price.plan();
        const std::string where = "seed " + std::to_string(seed) + " walk " + std::to_string(walk) + " step " +
                                  std::to_string(step);
        if (now.pp > 1 && rng() % 2 == 0) {
          const std::size_t stage = 1 + rng() % (now.stages.size() - 1);
          const int low = now.stages[stage - 1].first_layer + 1;
          const int high = now.stages[stage].last_layer;
          const int first = low + static_cast<int>(rng() % static_cast<std::uint64_t>(high - low + 1));
          ASSERT_EQ(price.move_boundary(static_cast<int>(stage), first), static_cast<std::uint64_t>(2 * now.vpp))
              << where;
          if (now.vpp > 1) ++interleaved_moves;
        } else {
          ASSERT_EQ(price.set_rank_recompute(static_cast<int>(rng() % static_cast<std::uint64_t>(now.pp)),
                                             static_cast<Recompute>(rng() % 3)),
                    static_cast<std::uint64_t>(now.vpp))
              << where;
        }
        if (rng() % 3 == 0) {
          price.undo();
          ++undone;
        } else {
          price.commit();
        }
        const PlanPrice incremental = price.price();
        const PlanPrice whole = price_plan(c.problem, price.plan(), *prepared.layout, *prepared.table);
        ASSERT_EQ(incremental.feasible, whole.feasible) << where;
        ASSERT_EQ(incremental.iteration_time_s, whole.iteration_time_s) << where;
        if (step % 10 == 0) {
          const PlanCost truth = evaluate_plan(c.problem.model, c.problem.cluster, price.plan());
          ASSERT_EQ(incremental.feasible, truth.feasible) << where;
          ASSERT_EQ(incremental.iteration_time_s, truth.iteration_time_s) << where;
        }
        ++steps;
        if (!incremental.feasible) ++infeasible;
      }
    }
  }
  EXPECT_GT(undone, 300);
  EXPECT_GT(infeasible, 200);
  EXPECT_LT(infeasible, steps - 1000);
  EXPECT_GT(interleaved_moves, 50);
}

std::uint64_t stage_pricings(const BaselineResult& result) {
  std::smatch match;
  const std::regex pattern("([0-9]+) stage pricings");
  if (!std::regex_search(result.note, match, pattern)) return 0;
  return std::stoull(match[1].str());
}

TEST(McmcBaseline, SpendsTheBudgetAndIsSeeded) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    testing::RandomCase c = testing::random_case(seed);
    c.space.vpp.clear();
    testing::tighten_memory(c, seed);
    const std::uint64_t budget = 20000 + 1000 * seed;
    const BaselineResult first = mcmc_baseline(c.problem, c.space, seed, budget);
    const BaselineResult again = mcmc_baseline(c.problem, c.space, seed, budget);
    // At least the budget, and less than one more plan of at most 4 x 4 stages.
    EXPECT_GE(stage_pricings(first), budget) << first.note;
    EXPECT_LT(stage_pricings(first), budget + 16) << first.note;
    EXPECT_EQ(first.note, again.note);
    ASSERT_EQ(first.feasible, again.feasible);
    if (!first.feasible) continue;
    EXPECT_EQ(first.iteration_time_s, again.iteration_time_s);
    EXPECT_EQ(first.iteration_time_s,
              evaluate_plan(c.problem.model, c.problem.cluster, first.plan).iteration_time_s);
    // Never better than the optimum.
    SolveOptions options;
    options.baselines = false;
    options.threads = 1;
    EXPECT_GE(first.iteration_time_s, solve(c.problem, c.space, options).top.front().iteration_time_s * (1 - 1e-12));
  }
}

}  // namespace
}  // namespace nestfast::search
