// Placement -> group levels and pipeline boundary levels, and the
// one-line errors for degrees that do not fit.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "solver/search/execution_layout.hpp"
#include "test_specs.hpp"

namespace nestfast {
namespace {

Execution degrees(int tp, int pp, int dp, std::vector<ParallelDim> placement = {}) {
  Execution e;
  e.tp = tp;
  e.pp = pp;
  e.dp = dp;
  e.global_batch = 64;
  if (!placement.empty()) e.placement = placement;
  return e;
}

using D = ParallelDim;

TEST(Layout, MegatronDefaultOrderPutsTpOnNvlinkAndPipelineOutermost) {
  const ClusterSpec cluster = test::a100_cluster();  // 8 per node, 4 nodes per leaf
  const ExecutionLayout layout = compute_layout(cluster, degrees(8, 4, 4));
  EXPECT_EQ(layout.tp_group.fanout, (std::vector<int>{8, 1, 1}));
  EXPECT_EQ(layout.dense_dp_group.fanout, (std::vector<int>{1, 4, 1}));  // 0, 8, 16, 24: one leaf
  EXPECT_EQ(layout.rank_first_device, (std::vector<int>{0, 32, 64, 96}));
  EXPECT_EQ(layout.rank_boundary_level, (std::vector<int>{2, 2, 2, 2}));  // every stage on its own leaf
  EXPECT_EQ(layout.stage_boundary_level(0), -1);
  EXPECT_EQ(layout.stage_boundary_level(5), 2);  // an interleaved chunk on rank 1
}

TEST(Layout, DataParallelOutsidePipelineKeepsStagesOnOneLeaf) {
  const ClusterSpec cluster = test::a100_cluster();
  const ExecutionLayout layout = compute_layout(cluster, degrees(8, 4, 4, {D::Tp, D::Cp, D::Ep, D::Pp, D::Dp}));
  EXPECT_EQ(layout.rank_first_device, (std::vector<int>{0, 8, 16, 24}));
  EXPECT_EQ(layout.rank_boundary_level, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(layout.dense_dp_group.fanout, (std::vector<int>{1, 1, 4}));  // replicas cross the spine
  EXPECT_EQ(layout.dense_dp_group.level(), 2);
}

TEST(Layout, PipelineBoundaryCanSitInsideANode) {
  const ClusterSpec cluster = test::a100_cluster();
  const ExecutionLayout layout = compute_layout(cluster, degrees(4, 4, 1));
  EXPECT_EQ(layout.rank_first_device, (std::vector<int>{0, 4, 8, 12}));
  // 0-3 -> 4-7 inside node 0; 4-7 -> 8-11 crosses nodes; 8-11 -> 12-15 inside node 1; 12-15 -> 0-3 crosses.
  EXPECT_EQ(layout.rank_boundary_level, (std::vector<int>{1, 0, 1, 0}));
}

TEST(Layout, TensorGroupStraddlingNodesIsCostedAtTheUpperLevel) {
  const ClusterSpec cluster = test::a100_cluster();
  const ExecutionLayout layout = compute_layout(cluster, degrees(16, 1, 2));
  EXPECT_EQ(layout.tp_group.fanout, (std::vector<int>{8, 2, 1}));
  EXPECT_EQ(layout.tp_group.level(), 1);
}

TEST(Layout, UniformStagesCoverTheChainWithRemainderOnEarlyStages) {
  const ModelSpec model = test::gpt_model(10, 1024, 16);
  const ClusterSpec cluster = test::a100_cluster();
  const ExecutionLayout layout = compute_layout(cluster, degrees(1, 4, 1));
  const std::vector<StagePlan> stages = uniform_stages(model, layout, 4, 1, Recompute::None);
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_EQ(stages[0].first_layer, 0);  // embedding + blocks 1..3
  EXPECT_EQ(stages[0].last_layer, 3);
  EXPECT_EQ(stages[1].first_layer, 4);
  EXPECT_EQ(stages[1].last_layer, 6);
  EXPECT_EQ(stages[2].last_layer, 8);
  EXPECT_EQ(stages[3].last_layer, 11);  // blocks 9, 10 and the head
}

std::string degree_error(const ModelSpec& model, const Execution& e, int gpus) {
  try {
    validate_degrees(model, test::a100_cluster(), e, gpus);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(Layout, BadDegreesNameTheFlag) {
  const ModelSpec gpt = test::gpt_model(16, 4096, 32);
  EXPECT_EQ(degree_error(gpt, degrees(8, 2, 2), 32), "");
  EXPECT_EQ(degree_error(gpt, degrees(8, 2, 2), 64).rfind("--gpus:", 0), 0u);
  EXPECT_EQ(degree_error(gpt, degrees(3, 1, 1), 3).rfind("--tp:", 0), 0u);
  Execution e = degrees(8, 2, 2);
  e.ep = 2;
  EXPECT_EQ(degree_error(gpt, e, 32).rfind("--ep:", 0), 0u);  // dense model
  e = degrees(8, 2, 2);
  e.global_batch = 7;
  EXPECT_EQ(degree_error(gpt, e, 32).rfind("--gbs:", 0), 0u);
  e = degrees(8, 2, 2);
  e.zero_stage = 4;
  EXPECT_EQ(degree_error(gpt, e, 32).rfind("--zero:", 0), 0u);
  e = degrees(8, 2, 2);
  e.cp = 3;
  e.dp = 2;
  EXPECT_EQ(degree_error(gpt, e, 96).rfind("--cp:", 0), 0u);
  e = degrees(8, 1, 4);
  e.vpp = 2;
  EXPECT_EQ(degree_error(gpt, e, 32).rfind("--vpp:", 0), 0u);
  e = degrees(8, 2, 2);
  e.placement = {D::Tp, D::Tp, D::Ep, D::Pp, D::Dp};
  EXPECT_EQ(degree_error(gpt, e, 32).rfind("--placement:", 0), 0u);
  e = degrees(1, 32, 1);
  EXPECT_EQ(degree_error(gpt, e, 32).rfind("--pp:", 0), 0u);
  e = degrees(8, 2, 2);
  e.expert_imbalance = std::nan("");
  EXPECT_EQ(degree_error(gpt, e, 32).rfind("--moe-imbalance:", 0), 0u);

  const ModelSpec moe = test::moe_model();
  e = degrees(4, 1, 4);
  e.ep = 4;
  EXPECT_EQ(degree_error(moe, e, 16), "");
  e.ep = 3;
  EXPECT_EQ(degree_error(moe, e, 16).rfind("--ep:", 0), 0u);  // 3 does not divide dp = 4
}

TEST(Layout, StagesMustMatchThePlacement) {
  const ModelSpec model = test::gpt_model(8, 1024, 16);
  const ClusterSpec cluster = test::a100_cluster();
  Execution e = degrees(8, 2, 1);
  const ExecutionLayout layout = compute_layout(cluster, e);
  e.stages = uniform_stages(model, layout, 2, 1, Recompute::None);
  EXPECT_NO_THROW(validate_stages(model, layout, e));
  Execution gap = e;
  gap.stages[1].first_layer += 1;
  EXPECT_THROW(validate_stages(model, layout, gap), std::invalid_argument);
  Execution moved = e;
  moved.stages[1].first_device = 3;
  EXPECT_THROW(validate_stages(model, layout, moved), std::invalid_argument);
  Execution short_chain = e;
  short_chain.stages[1].last_layer -= 1;
  EXPECT_THROW(validate_stages(model, layout, short_chain), std::invalid_argument);
  // Uneven stages are fine.
  Execution uneven = e;
  uneven.stages[0].last_layer = 2;
  uneven.stages[1].first_layer = 3;
  EXPECT_NO_THROW(validate_stages(model, layout, uneven));
}

}  // namespace
}  // namespace nestfast
