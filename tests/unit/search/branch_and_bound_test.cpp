// solve()'s branch and bound returns exactly the top-k of the plain search
// (every instance solved without a bound, then reduced), with 1 and 2
// threads, and its placement-free lower bounds hold.
#include <gtest/gtest.h>

#include "solver/search/plan_cost.hpp"
#include "solver/search/search_context.hpp"
#include "tests/unit/search/random_problem.hpp"

namespace nestfast::search {
namespace {

TEST(BranchAndBound, TopKEqualsTheUnboundedSearch) {
  std::uint64_t pruned = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    testing::RandomCase c = testing::random_case(seed);
    c.space.placements.clear();  // every order: more instances to prune
    c.space.micro_batch.clear();
    c.space.zero_stage.clear();
    c.space.vpp.clear();
    const std::vector<DpInstance> instances = enumerate_instances(c.problem, c.space);
    std::vector<InstanceResult> all;
    for (const DpInstance& instance : instances) all.push_back(solve_instance(c.problem, instance));
    const SolveResult plain = reduce(all, 4);
    for (int threads : {1, 2}) {
      SolveOptions options;
      options.top_k = 4;
      options.threads = threads;
      options.baselines = false;
      const SolveResult bounded = solve(c.problem, c.space, options);
      ASSERT_EQ(bounded.feasible, plain.feasible) << "seed " << seed;
      ASSERT_EQ(bounded.top.size(), plain.top.size()) << "seed " << seed;
      for (std::size_t k = 0; k < plain.top.size(); ++k) {
        EXPECT_EQ(bounded.top[k].ordinal, plain.top[k].ordinal) << "seed " << seed << " rank " << k;
        EXPECT_EQ(bounded.top[k].iteration_time_s, plain.top[k].iteration_time_s);
        ASSERT_EQ(bounded.top[k].plan.stages.size(), plain.top[k].plan.stages.size());
        for (std::size_t s = 0; s < plain.top[k].plan.stages.size(); ++s) {
          EXPECT_EQ(bounded.top[k].plan.stages[s].last_layer, plain.top[k].plan.stages[s].last_layer);
          EXPECT_EQ(bounded.top[k].plan.stages[s].recompute, plain.top[k].plan.stages[s].recompute);
        }
      }
      EXPECT_EQ(bounded.stats.instances, instances.size());
      pruned += bounded.stats.pruned_instances;
    }
  }
  EXPECT_GT(pruned, 100u) << "the bound never pruned: the test would not exercise it";
}

TEST(BranchAndBound, LowerBoundsHoldAndComputeColumnsIgnorePlacement) {
  int bounded_instances = 0;
  int surely_infeasible = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    testing::RandomCase c = testing::random_case(seed);
    c.space.placements.clear();
    // Memory that binds for some instances (the plainest plan does not fit).
    testing::set_hbm_fraction(c, 0.3);
    const std::vector<DpInstance> instances = enumerate_instances(c.problem, c.space);
    SearchContext context(c.problem, instances);
    for (std::size_t i = 0; i < instances.size(); ++i) {
      const PreparedInstance prepared = context.prepare(i);
      const LayerTable proxy = compute_only_table(c.problem, instances[i]);
      for (int layer = 0; layer < proxy.layers(); ++layer) {
        ASSERT_EQ(proxy.value(LayerColumn::ForwardCompute, layer),
                  prepared.table->value(LayerColumn::ForwardCompute, layer));
        ASSERT_EQ(proxy.value(LayerColumn::BackwardCompute, layer),
                  prepared.table->value(LayerColumn::BackwardCompute, layer));
        ASSERT_EQ(proxy.value(LayerColumn::DenseParams, layer), prepared.table->value(LayerColumn::DenseParams, layer));
        ASSERT_EQ(proxy.value(LayerColumn::ExpertParams, layer),
                  prepared.table->value(LayerColumn::ExpertParams, layer));
        ASSERT_EQ(proxy.max_working_bytes(layer, layer), prepared.table->max_working_bytes(layer, layer));
      }
      const InstanceResult result = solve_instance(c.problem, instances[i]);
      if (context.surely_infeasible(i)) {
        ++surely_infeasible;
        EXPECT_FALSE(result.feasible) << "seed " << seed << " instance " << i;
      }
      if (!result.feasible) {
        EXPECT_LE(memory_floor(c.problem, instances[i], proxy), result.min_memory_bytes);
        continue;
      }
      EXPECT_LE(memory_floor(c.problem, instances[i], proxy),
                evaluate_plan(c.problem.model, c.problem.cluster, result.plan).memory_peak_bytes);
      ++bounded_instances;
      EXPECT_LE(context.lower_bound(i), result.iteration_time_s);
      const ReplicaContext replicas =
          replica_context(c.problem.cluster, execution_skeleton(c.problem, instances[i]), *prepared.layout);
      EXPECT_LE(pipeline_floor(c.problem, instances[i], *prepared.table) +
                    sync_floor(replicas, *prepared.table, instances[i].pp),
                result.iteration_time_s);
    }
  }
  EXPECT_GT(bounded_instances, 100);
  EXPECT_GT(surely_infeasible, 20) << "the memory floor never excluded anything";
}

}  // namespace
}  // namespace nestfast::search
