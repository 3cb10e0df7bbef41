// evaluate_plan against its own documented objective, its breakdown, and
// the monotonic effects every cost model must show.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/pipeline_time.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/stage_cost.hpp"
#include "test_specs.hpp"

namespace nestfast {
namespace {

Execution plan(int tp, int pp, int dp, int gbs, int mbs, Recompute recompute = Recompute::None, int vpp = 1,
               const ModelSpec& model = test::gpt_model(16, 4096, 32), const ClusterSpec& cluster = test::a100_cluster()) {
  Execution e;
  e.tp = tp;
  e.pp = pp;
  e.dp = dp;
  e.global_batch = gbs;
  e.micro_batch = mbs;
  e.vpp = vpp;
  e.stages = uniform_stages(model, compute_layout(cluster, e), pp, vpp, recompute);
  return e;
}

TEST(PlanCost, IterationTimeIsTheDocumentedObjective) {
  const ModelSpec model = test::gpt_model(16, 4096, 32);
  const ClusterSpec cluster = test::a100_cluster();
  Execution e = plan(4, 4, 4, 64, 2, Recompute::Selective);
  e.stages[2].recompute = Recompute::Full;  // mixed modes per stage
  e.zero_stage = 1;
  const PlanCost cost = evaluate_plan(model, cluster, e);

  const ExecutionLayout layout = compute_layout(cluster, e);
  const LayerTable table = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  const ReplicaContext replicas = replica_context(cluster, e, layout);
  double t_max = 0, s_max = 0;
  for (std::size_t rank = 0; rank < e.stages.size(); ++rank) {  // vpp 1: stage i on rank i
    const StagePlan& stage = e.stages[rank];
    t_max = std::max(t_max, stage_time(table, replicas, static_cast<int>(rank), stage.first_layer, stage.last_layer,
                                       stage.boundary_level, stage.recompute).total_s());
    const StageFootprint footprint = stage_footprint(table, stage.first_layer, stage.last_layer, stage.recompute);
    s_max = std::max(s_max, sync_time(replicas, footprint).total_s());
  }
  const int m = 64 / (4 * 2);
  EXPECT_DOUBLE_EQ(cost.iteration_time_s, (m + 3.0) * t_max + s_max);
  EXPECT_EQ(cost.micro_batches, m);
}

TEST(PlanCost, BreakdownSumsToIterationTime) {
  const ModelSpec model = test::gpt_model(16, 4096, 32);
  Execution e = plan(2, 4, 8, 256, 1, Recompute::Full, 2);
  e.zero_stage = 3;
  e.overlap = Overlap::none();  // every part shows, none hidden behind compute
  const PlanCost cost = evaluate_plan(model, test::a100_cluster(), e);
  const TimeBreakdown& b = cost.breakdown;
  const double sum = b.compute_s + b.recompute_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.zero3_gather_s +
                     b.p2p_s + b.bubble_s + b.dp_sync_s + b.optimizer_s;
  EXPECT_NEAR(sum, cost.iteration_time_s, 1e-9 * cost.iteration_time_s);
  EXPECT_GT(b.zero3_gather_s, 0);
  EXPECT_GT(b.recompute_s, 0);
  EXPECT_GT(b.p2p_s, 0);
  EXPECT_GT(b.dp_sync_s, 0);
  EXPECT_NEAR(cost.tokens_per_s, 256.0 * 2048 / cost.iteration_time_s, 1e-6 * cost.tokens_per_s);
  EXPECT_GT(cost.mfu, 0.05);
  EXPECT_LT(cost.mfu, cost.hfu);
  EXPECT_LT(cost.hfu, 1.0);
}

TEST(PlanCost, RecomputeTradesTimeForMemory) {
  const ModelSpec model = test::gpt_model(16, 4096, 32);
  const ClusterSpec cluster = test::a100_cluster();
  auto unfused = [](Execution e) {  // selective recompute is the unfused attention core
    e.attention = Attention::Unfused;
    return e;
  };
  const PlanCost none = evaluate_plan(model, cluster, unfused(plan(4, 2, 1, 16, 2, Recompute::None)));
  const PlanCost selective = evaluate_plan(model, cluster, unfused(plan(4, 2, 1, 16, 2, Recompute::Selective)));
  const PlanCost full = evaluate_plan(model, cluster, unfused(plan(4, 2, 1, 16, 2, Recompute::Full)));
  // Fused attention keeps nothing of size s^2, yet Megatron-Core checkpoints
  // the fused core under selective recompute as well (attention.py:1555 at
  // d98e8a64): its forward runs again in the backward for the few bytes of
  // its log-sum-exp.
  const PlanCost fused_none = evaluate_plan(model, cluster, plan(4, 2, 1, 16, 2, Recompute::None));
  const PlanCost fused_selective = evaluate_plan(model, cluster, plan(4, 2, 1, 16, 2, Recompute::Selective));
  EXPECT_LT(fused_none.iteration_time_s, fused_selective.iteration_time_s);
  EXPECT_GT(fused_none.ranks[0].memory.activations_bytes, fused_selective.ranks[0].memory.activations_bytes);
  EXPECT_LT(fused_none.ranks[0].memory.activations_bytes - fused_selective.ranks[0].memory.activations_bytes,
            0.01 * fused_none.ranks[0].memory.activations_bytes);
  EXPECT_GT(fused_selective.hardware_flops, fused_none.hardware_flops);
  EXPECT_LT(fused_none.ranks[0].memory.activations_bytes, none.ranks[0].memory.activations_bytes);
  EXPECT_LT(none.iteration_time_s, selective.iteration_time_s);
  EXPECT_LT(selective.iteration_time_s, full.iteration_time_s);
  EXPECT_GT(none.ranks[0].memory.activations_bytes, selective.ranks[0].memory.activations_bytes);
  EXPECT_GT(selective.ranks[0].memory.activations_bytes, full.ranks[0].memory.activations_bytes);
  EXPECT_DOUBLE_EQ(none.model_flops, full.model_flops);
  EXPECT_GT(full.hardware_flops, selective.hardware_flops);
}

TEST(PlanCost, ZeroStagesShardStateOverTheDataParallelGroup) {
  const ModelSpec model = test::gpt_model(16, 4096, 32);
  const ClusterSpec cluster = test::a100_cluster();
  double previous = 1e300;
  for (int zero = 0; zero <= 3; ++zero) {
    Execution e = plan(1, 1, 8, 64, 1);
    e.zero_stage = zero;
    const PlanCost cost = evaluate_plan(model, cluster, e);
    const StageMemory& memory = cost.ranks[0].memory;
    const double state = memory.weights_bytes + memory.gradients_bytes + memory.optimizer_bytes;
    EXPECT_LT(state, previous) << "zero " << zero;
    previous = state;
  }
  // ZeRO-3 over 8 ranks: 18 bytes per parameter / 8.
  Execution e = plan(1, 1, 8, 64, 1);
  e.zero_stage = 3;
  const PlanCost cost = evaluate_plan(model, cluster, e);
  const LayerTable table = build_layer_table(model, cluster, layer_table_config(model, e, compute_layout(cluster, e)));
  // One stage holds the whole chain, so the tied head shares the embedding's copy.
  ASSERT_GT(table.tied_head_params(), 0);
  const double params = table.sum(LayerColumn::DenseParams, 0, model.num_layers + 1) - table.tied_head_params();
  const StageMemory& memory = cost.ranks[0].memory;
  EXPECT_NEAR(memory.weights_bytes + memory.gradients_bytes + memory.optimizer_bytes, params * 18 / 8, 1.0);
}

// --grad-reduce-in-bf16: the gradient buffer and the DP reduce in bf16 (2 B
// per parameter instead of 4), and at the optimizer step, when no stash is
// held, an fp32 copy of the gradients the rank owns (4 B per owned
// parameter). Hand-computed on one replica group of 8, ZeRO-1.
TEST(PlanCost, BfloatGradientsHalveTheBufferAndTheReduce) {
  const ModelSpec model = test::gpt_model(16, 4096, 32);
  const ClusterSpec cluster = test::a100_cluster();
  Execution fp32 = plan(1, 1, 8, 64, 1);
  fp32.zero_stage = 1;
  fp32.overlap = Overlap::none();  // one reduce-scatter of the whole buffer after the backward
  Execution bf16 = fp32;
  bf16.grad_reduce = GradReduce::Bf16;
  const PlanCost a = evaluate_plan(model, cluster, fp32);
  const PlanCost b = evaluate_plan(model, cluster, bf16);
  const LayerTable table = build_layer_table(model, cluster, layer_table_config(model, fp32, compute_layout(cluster, fp32)));
  const double params = table.sum(LayerColumn::DenseParams, 0, model.num_layers + 1) - table.tied_head_params();
  const StageMemory& ma = a.ranks[0].memory;
  const StageMemory& mb = b.ranks[0].memory;
  EXPECT_NEAR(ma.gradients_bytes, 4 * params, 1.0);
  EXPECT_NEAR(mb.gradients_bytes, 2 * params, 1.0);
  EXPECT_NEAR(mb.weights_bytes, ma.weights_bytes, 1.0);
  EXPECT_NEAR(mb.optimizer_bytes, 12 * params / 8, 1.0);
  // The step's copy (4 x params / 8) against the stash beside the largest
  // layer's working set: the working term is whichever peak is higher.
  const double step_copy = 4 * params / 8 - mb.activations_bytes;
  EXPECT_NEAR(mb.working_bytes, std::max(ma.working_bytes - kRuntimeReserveBytes, step_copy) + kRuntimeReserveBytes, 1.0);
  // The reduce-scatter moves half the bytes; the weight all-gather (bf16 in
  // both) and the empty expert group's latency are the same in both.
  const FlatGroup group = flat_group(cluster, compute_layout(cluster, fp32).dense_dp_group);
  EXPECT_NEAR(a.ranks[0].sync.dp_sync_s - b.ranks[0].sync.dp_sync_s,
              group_half_seconds(group, params * 4) - group_half_seconds(group, params * 2), 1e-12);
  EXPECT_GT(group_half_seconds(group, params * 4), 1.9 * group_half_seconds(group, params * 2));
  EXPECT_LT(b.iteration_time_s, a.iteration_time_s);
}

// A plan with few parameters' stash is bounded by the step's fp32 copy.
TEST(PlanCost, BfloatGradientsStepCopyCountsWhenTheStashIsSmaller) {
  ReplicaContext replicas;
  replicas.dense_dp_size = 4;
  replicas.zero_stage = 1;
  replicas.grad_bytes_per_param = grad_bytes_per_param(GradReduce::Bf16);
  replicas.step_grad_copy_bytes_per_param = step_grad_copy_bytes_per_param(GradReduce::Bf16);
  StageFootprint footprint;
  footprint.dense_params = 1e9;
  footprint.stash_bytes_per_microbatch = 0.25e9;
  footprint.working_bytes = 0.1e9;
  const StageMemory memory = stage_memory(replicas, footprint, 2);  // stash 0.5 GB, owned copy 1 GB
  EXPECT_DOUBLE_EQ(memory.gradients_bytes, 2e9);
  EXPECT_DOUBLE_EQ(memory.optimizer_bytes, 3e9);
  EXPECT_DOUBLE_EQ(memory.activations_bytes, 0.5e9);
  EXPECT_DOUBLE_EQ(memory.working_bytes, 0.5e9 + kRuntimeReserveBytes);
  EXPECT_DOUBLE_EQ(memory.total_bytes(), 2e9 + 2e9 + 3e9 + 1e9 + kRuntimeReserveBytes);
  EXPECT_EQ(parse_grad_reduce("bf16", "x"), GradReduce::Bf16);
  EXPECT_STREQ(to_string(GradReduce::Fp32), "fp32");
  EXPECT_THROW(parse_grad_reduce("fp16", "--grad-reduce"), std::invalid_argument);
}

TEST(PlanCost, InterleavingShrinksTheBubble) {
  const ModelSpec model = test::gpt_model(16, 4096, 32);
  const ClusterSpec cluster = test::a100_cluster();
  const PlanCost plain = evaluate_plan(model, cluster, plan(8, 4, 1, 16, 1, Recompute::None, 1));
  const PlanCost interleaved = evaluate_plan(model, cluster, plan(8, 4, 1, 16, 1, Recompute::None, 2));
  EXPECT_LT(interleaved.breakdown.bubble_s, 0.6 * plain.breakdown.bubble_s);
  // ... at the price of more stash on the first rank (Korthikanti: x (1 + (p-1)/(p v))).
  EXPECT_GT(interleaved.ranks[0].stash_microbatches * 2, plain.ranks[0].stash_microbatches);
}

TEST(PlanCost, StashDepthFollowsOneFOneBAndMegatronInterleaving) {
  EXPECT_DOUBLE_EQ(stash_depth(0, 8, 1, 64), 8);
  EXPECT_DOUBLE_EQ(stash_depth(7, 8, 1, 64), 1);
  EXPECT_DOUBLE_EQ(stash_depth(0, 8, 1, 3), 3);  // fewer micro-batches than stages
  // Interleaved, rank 0 of p = 8, v = 3: 2*(8-1) + 2*8 + 1 = 31 chunk-micro-batches = 31/3 stages' worth,
  // i.e. L (1 + (p-1)/(p v)) layers' stash as in Korthikanti et al.
  EXPECT_DOUBLE_EQ(stash_depth(0, 8, 3, 64), 31.0 / 3);
  EXPECT_DOUBLE_EQ(stash_depth(7, 8, 3, 64), 17.0 / 3);
}

TEST(PlanCost, PipelineTime) {
  const PipelineTime plain = pipeline_time(8, 4, 1, 2.0);
  EXPECT_DOUBLE_EQ(plain.steady_s, 16.0);
  EXPECT_DOUBLE_EQ(plain.bubble_s, 6.0);
  EXPECT_DOUBLE_EQ(pipeline_time(8, 4, 3, 2.0).bubble_s, 2.0);
  // Interleaved with p2p overlap: the warm-up / cool-down transfers add to the bubble only.
  const PipelineTime interleaved = pipeline_time(8, 4, 3, 2.0, 0.5);
  EXPECT_DOUBLE_EQ(interleaved.steady_s, 16.0);
  EXPECT_DOUBLE_EQ(interleaved.bubble_s, 2.5);
}

TEST(PlanCost, MemoryOverflowIsInfeasibleNotAnError) {
  const ModelSpec model = test::gpt_model(64, 12288, 96);
  const PlanCost cost = evaluate_plan(model, test::a100_cluster(), plan(1, 1, 1, 1, 1, Recompute::None, 1, model));
  EXPECT_FALSE(cost.feasible);
  EXPECT_NE(cost.infeasible_reason.find("pipeline rank 0"), std::string::npos) << cost.infeasible_reason;
  EXPECT_NE(cost.infeasible_reason.find("HBM is 80.00 GiB"), std::string::npos) << cost.infeasible_reason;
  EXPECT_GT(cost.memory_peak_bytes, cost.hbm_bytes);
}

TEST(PlanCost, SlowerUpperLevelsNeverHelp) {
  const ModelSpec model = test::gpt_model(16, 4096, 32);
  ClusterSpec fast = test::a100_cluster();
  ClusterSpec slow = fast;
  slow.levels[1].oversubscription = 4;
  slow.levels[2].oversubscription = 8;
  const Execution e = plan(8, 4, 4, 128, 1);
  const PlanCost a = evaluate_plan(model, fast, e);
  const PlanCost b = evaluate_plan(model, slow, e);
  EXPECT_LT(a.iteration_time_s, b.iteration_time_s);
  EXPECT_LT(a.breakdown.dp_sync_s, b.breakdown.dp_sync_s);
  EXPECT_DOUBLE_EQ(a.breakdown.tp_comm_s, b.breakdown.tp_comm_s);  // TP stays on NVLink
}

}  // namespace
}  // namespace nestfast
