// The level of a pipeline boundary is a real choice of the search: stages
// may start inside a node or across the network, depending on the placement
// order. When activations are expensive to send between nodes, the best plan
// starts its stages inside nodes (boundaries on level 0) and lets the
// once-per-iteration gradient sync cross the network; when the network is as
// fast as NVLink the choice no longer matters for the p2p and other orders
// appear among the best. (With a heavy LM head the last rank is the
// bottleneck and the search instead puts a network-crossing boundary before
// a rank that has time to spare: also a choice of level, but not the one
// these tests pin down, hence the light head.)
#include <gtest/gtest.h>

#include <set>

#include "solver/search/plan_cost.hpp"
#include "tests/unit/search/random_problem.hpp"

namespace nestfast::search {
namespace {

// 2 nodes of 8 devices; the network between them `slowdown` times slower than NVLink.
testing::RandomCase two_nodes(double slowdown) {
  testing::RandomCase c = testing::random_case(7);
  ModelSpec& model = c.problem.model;
  model = ModelSpec{};
  model.name = "dense-16";
  model.num_layers = 16;
  model.heads = 8;
  model.kv_heads = 8;
  model.head_dim = 128;
  model.hidden = 1024;
  model.ffn_hidden = 4096;
  model.vocab = 1024;  // a light head: the ranks are balanced, so a slow boundary hits the bottleneck
  model.seq_len = 1024;
  model.mlp = MlpKind::Gelu;
  c.problem.gpus = 16;
  c.problem.global_batch = 256;  // many micro-batches: p2p is paid per micro-batch
  c.problem.cluster.gpu.hbm_bytes = 1ull << 40;
  c.problem.cluster.levels = {
      {"node", 8, 4e11, 2e-6, 1.0, 1, {}},
      {"net", 0, 4e11 / slowdown, 1e-5, 1.0, 1, {}},
  };
  c.space.tp = {2};
  c.space.pp = {4};
  c.space.cp = {1};
  c.space.ep = {1};
  c.space.micro_batch = {1};
  c.space.zero_stage = {0};
  c.space.placements.clear();  // every order
  c.space.uneven_layers = false;  // so that no stage can shed layers to hide a slow boundary
  return c;
}

SolveResult best_plans(const testing::RandomCase& c, int top_k) {
  SolveOptions options;
  options.top_k = top_k;
  options.threads = 1;
  options.baselines = false;
  return solve(c.problem, c.space, options);
}

TEST(BoundaryLevelChoice, SlowNetworkKeepsEveryPipelineBoundaryInsideANode) {
  const SolveResult result = best_plans(two_nodes(200.0), 1);
  ASSERT_TRUE(result.feasible);
  const Execution& best = result.top.front().plan;
  bool starts_inside_a_node = false;
  for (std::size_t s = 1; s < best.stages.size(); ++s) {
    EXPECT_EQ(best.stages[s].boundary_level, 0) << "stage " << s << " starts at device " << best.stages[s].first_device;
    if (best.stages[s].first_device % 8 != 0) starts_inside_a_node = true;
  }
  EXPECT_TRUE(starts_inside_a_node) << "the stages should start at devices inside a node";

  // The same degrees with pp outermost put one boundary across the network: slower.
  Execution outer = best;
  outer.placement = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Dp, ParallelDim::Pp};
  outer.stages.clear();
  const ExecutionLayout layout = compute_layout(two_nodes(200.0).problem.cluster, outer);
  outer.stages = best.stages;
  derive_stage_layout(layout, outer);
  int crossing = 0;
  for (const StagePlan& stage : outer.stages) crossing += stage.boundary_level == 1 ? 1 : 0;
  EXPECT_EQ(crossing, 1);
  const testing::RandomCase c = two_nodes(200.0);
  EXPECT_GT(evaluate_plan(c.problem.model, c.problem.cluster, outer).iteration_time_s,
            result.top.front().iteration_time_s);
}

TEST(BoundaryLevelChoice, BoundaryLevelsOfTheBestPlansFollowTheNetwork) {
  // With a slow network no plan among the best 4 crosses it at a pipeline boundary ...
  std::set<int> slow_levels;
  for (const InstanceResult& r : best_plans(two_nodes(200.0), 4).top) {
    for (std::size_t s = 1; s < r.plan.stages.size(); ++s) slow_levels.insert(r.plan.stages[s].boundary_level);
  }
  EXPECT_EQ(slow_levels, std::set<int>({0}));
  // ... with a network as fast as NVLink some of the best do.
  std::set<int> fast_levels;
  for (const InstanceResult& r : best_plans(two_nodes(1.0), 8).top) {
    for (std::size_t s = 1; s < r.plan.stages.size(); ++s) fast_levels.insert(r.plan.stages[s].boundary_level);
  }
  EXPECT_TRUE(fast_levels.count(1) == 1) << "no plan among the best 8 has a boundary across the network";
}

}  // namespace
}  // namespace nestfast::search
