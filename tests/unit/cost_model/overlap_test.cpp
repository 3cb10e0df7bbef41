// Communication overlap, fused attention, the interleaved stash and the
// layouts with embedding-only / head-only chunks, on cases worked out by hand
// (see each comment).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>
#include <vector>

#include "solver/cluster/collectives.hpp"
#include "solver/cluster/gpu_throughput.hpp"
#include "solver/search/combined_1f1b.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/memory_model.hpp"
#include "solver/search/overlap.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/stage_cost.hpp"
#include "test_specs.hpp"

namespace nestfast {
namespace {

TEST(Overlap, ExposedSecondsIsTheRemainderPlusTheSlowdown) {
  EXPECT_DOUBLE_EQ(exposed_seconds(3.0, 2.0, 0.1), 1.0 + 0.1 * 2.0);  // 1 s sticks out, 2 s overlapped
  EXPECT_DOUBLE_EQ(exposed_seconds(1.0, 2.0, 0.1), 0.1 * 1.0);        // hidden, but the compute is slowed
  EXPECT_DOUBLE_EQ(exposed_seconds(1.0, 2.0, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(exposed_seconds(2.0, 0.0, 0.3), 2.0);  // nothing to hide behind
}

TEST(Overlap, NamesParseAndPrint) {
  EXPECT_EQ(parse_overlap({"all"}, "x"), Overlap{});
  EXPECT_EQ(parse_overlap({"none"}, "x"), Overlap::none());
  const Overlap some = parse_overlap({"grad", "tp"}, "x");
  EXPECT_TRUE(some.grad_reduce && some.tp_comm);
  EXPECT_FALSE(some.param_gather || some.p2p || some.moe_a2a || some.moe_shared || some.moe_dispatch_wgrad);
  EXPECT_EQ(to_string(parse_overlap({"grad", "shared"}, "x")), "grad,shared");
  EXPECT_EQ(to_string(parse_overlap({"wgrad", "shared"}, "x")), "shared,wgrad");
  // The longest list short of "all" fits the catalog's 31-character field (catalog_rows.hpp).
  EXPECT_EQ(to_string(parse_overlap({"grad", "param", "p2p", "a2a", "shared", "wgrad"}, "x")).size(), 31u);
  EXPECT_EQ(to_string(some), "grad,tp");
  EXPECT_EQ(to_string(Overlap{}), "all");
  EXPECT_THROW(parse_overlap({"grad", "grad"}, "x"), std::invalid_argument);
  EXPECT_THROW(parse_overlap({"all", "grad"}, "x"), std::invalid_argument);
  EXPECT_THROW(parse_overlap({"dp"}, "x"), std::invalid_argument);
  EXPECT_EQ(parse_attention("unfused", "x"), Attention::Unfused);
  EXPECT_THROW(parse_attention("fused", "x"), std::invalid_argument);
}

// A table whose columns are set by hand: 4 layers, a stage [1, 3].
LayerTable hand_table() {
  std::array<std::vector<double>, kLayerColumns> values;
  for (auto& column : values) column.assign(4, 0.0);
  auto set = [&](LayerColumn c, std::vector<double> v) { values[static_cast<std::size_t>(c)] = std::move(v); };
  set(LayerColumn::ForwardCompute, {1, 2, 2, 2});
  set(LayerColumn::BackwardCompute, {2, 4, 4, 4});
  set(LayerColumn::DenseParams, {100, 200, 200, 200});
  set(LayerColumn::GradAllReduce, {0.5, 3, 3, 3});
  set(LayerColumn::GradAllReduceExposed, {0, 1, 0.25, 0.25});
  set(LayerColumn::GradReduceScatter, {0.25, 1.5, 1.5, 1.5});
  set(LayerColumn::GradReduceScatterExposed, {0, 0.1, 0.1, 0.1});
  set(LayerColumn::ParamAllGather, {0.125, 0.75, 0.75, 0.75});
  set(LayerColumn::ParamAllGatherExposed, {0, 0.05, 0.05, 0.05});
  set(LayerColumn::ParamAllGatherExposedBackward, {0.01, 0.02, 0.02, 0});
  return LayerTable(values, {1e6, 1e6, 1e6, 1e6}, {0, 0, 0, 0}, {{"net", 0, 1e9, 0, 1, 1, {}}}, 0, 0.1, false);
}

ReplicaContext replicas_with(int zero, bool grad, bool param) {
  ReplicaContext replicas;
  replicas.zero_stage = zero;
  replicas.grad_overlap = grad;
  replicas.param_overlap = param;
  replicas.step_bytes_per_param = 0;  // no optimizer step: the sync alone
  return replicas;
}

TEST(Overlap, DataParallelSyncExposesTheFirstLayerAndWhatTheOthersDoNotHide) {
  const LayerTable table = hand_table();
  const StageFootprint stage = stage_footprint(table, 1, 3, Recompute::None);
  // ZeRO-0: layer 1's own all-reduce (3) + the exposed parts of layers 2, 3 (0.25 + 0.25).
  EXPECT_DOUBLE_EQ(sync_time(replicas_with(0, true, true), stage).dp_sync_s, 3.5);
  // ZeRO-1: reduce-scatter 1.5 + 0.1 + 0.1, weight all-gather 0.75 + 0.05 + 0.05.
  EXPECT_DOUBLE_EQ(sync_time(replicas_with(1, true, true), stage).dp_sync_s, 1.7 + 0.85);
  // ZeRO-3: the weights are gathered per micro-batch (stage_time), not here.
  EXPECT_DOUBLE_EQ(sync_time(replicas_with(3, true, true), stage).dp_sync_s, 1.7);
  // A stage starting at the embedding exposes the embedding's bucket instead.
  EXPECT_DOUBLE_EQ(sync_time(replicas_with(0, true, true), stage_footprint(table, 0, 1, Recompute::None)).dp_sync_s,
                   0.5 + 1);
}

TEST(Overlap, InterleavedChunksExposeOnlyTheFirstChunksFirstLayer) {
  const LayerTable table = hand_table();
  StageFootprint rank = stage_footprint(table, 0, 1, Recompute::None);  // chunk 0: layers 0-1
  rank += stage_footprint(table, 2, 3, Recompute::None);                 // chunk 1: layers 2-3
  // all-reduce: layer 0's own bucket 0.5 and the exposed parts of layers 1 (1) and 3 (0.25);
  // layer 2's own bucket (3) is the last of chunk 1, which ends its backward with chunk 0's
  // still to run: hidden, at the slowdown it causes there (0.1 x 3).
  EXPECT_DOUBLE_EQ(sync_time(replicas_with(0, true, true), rank).dp_sync_s, 0.5 + 1 + 0.25 + 0.3);
  // ZeRO-1: reduce-scatter 0.25 + 0.1 + 0.1 x 1.5 + 0.1, weight all-gather 0.125 + 0.05 + 0.1 x 0.75 + 0.05.
  EXPECT_DOUBLE_EQ(sync_time(replicas_with(1, true, true), rank).dp_sync_s, 0.6 + 0.3);
  EXPECT_EQ(rank.chunks, 2);
  EXPECT_DOUBLE_EQ(rank.dense_params, 700);
}

TEST(Overlap, ZeroThreeGathersArePrefetchedOneLayerAhead) {
  const LayerTable table = hand_table();
  ReplicaContext replicas = replicas_with(3, true, true);
  const StageTime time = stage_time(table, replicas, 0, 1, 3, -1, Recompute::None);
  // forward: layer 1's gather 0.75 + exposed of 2, 3 (0.05 + 0.05); backward: layer 3's gather
  // 0.75 + exposed of 1, 2 behind the backward of 2, 3 (0.02 + 0.02).
  EXPECT_DOUBLE_EQ(time.zero3_gather_s, 0.85 + 0.79);
}

TEST(Overlap, WithoutOverlapTheWholeStageSyncsAfterTheBackward) {
  const ModelSpec model = test::gpt_model(4, 1024, 16);
  ClusterSpec cluster = test::a100_cluster();
  for (NetworkLevel& level : cluster.levels) level.latency_s = 0;
  Execution e;
  e.tp = 8;
  e.dp = 4;  // one replica per node of one leaf: a flat ring at 25 GB/s
  e.global_batch = 4;
  e.zero_stage = 1;
  e.overlap = Overlap::none();
  const ExecutionLayout layout = compute_layout(cluster, e);
  e.stages = uniform_stages(model, layout, 1, 1, Recompute::None);
  const PlanCost cost = evaluate_plan(model, cluster, e);
  const double params = cost.ranks[0].sync.dp_sync_s;
  const LayerTable table = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  const double p = table.sum(LayerColumn::DenseParams, 0, table.layers() - 1) - table.tied_head_params();
  // Reduce-scatter of fp32 gradients + all-gather of bf16 weights: 3/4 * (4 + 2) p / 25e9.
  EXPECT_NEAR(params, 0.75 * 6 * p / 25e9, 1e-12);
  // ... which is 3/4 of the all-reduce of the gradients (ZeRO-0).
  e.zero_stage = 0;
  EXPECT_NEAR(evaluate_plan(model, cluster, e).ranks[0].sync.dp_sync_s, 0.75 * 2 * 4 * p / 25e9, 1e-12);
}

TEST(Overlap, LayerTablePairsEachBucketWithItsNeighboursCompute) {
  const ModelSpec model = test::gpt_model(6, 2048, 16);
  ClusterSpec cluster = test::a100_cluster();
  cluster.gpu.overlap_slowdown = 0.1;
  Execution e;
  e.tp = 8;
  e.dp = 16;
  e.global_batch = 16;
  const ExecutionLayout layout = compute_layout(cluster, e);
  const LayerTable t = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  // value() reads prefix-sum differences: equal to the column's value up to rounding.
  const auto near = [](double a, double b) { EXPECT_NEAR(a, b, 1e-9 * std::max(a, b) + 1e-18); };
  for (int i = 1; i < t.layers(); ++i) {
    near(t.value(LayerColumn::GradReduceScatterExposed, i),
         exposed_seconds(t.value(LayerColumn::GradReduceScatter, i), t.value(LayerColumn::BackwardCompute, i - 1), 0.1));
    near(t.value(LayerColumn::ParamAllGatherExposed, i),
         exposed_seconds(t.value(LayerColumn::ParamAllGather, i), t.value(LayerColumn::ForwardCompute, i - 1), 0.1));
    // An all-reduce is a reduce-scatter and an all-gather of the same bytes.
    near(t.value(LayerColumn::GradAllReduce, i), 2 * t.value(LayerColumn::GradReduceScatter, i));
  }
  for (int i = 0; i + 1 < t.layers(); ++i) {
    near(t.value(LayerColumn::ParamAllGatherExposedBackward, i),
         exposed_seconds(t.value(LayerColumn::ParamAllGather, i), t.value(LayerColumn::BackwardCompute, i + 1), 0.1));
  }
  // The first layer of the chain has nothing before it.
  EXPECT_EQ(t.value(LayerColumn::GradReduceScatterExposed, 0), 0);
}

TEST(Overlap, TensorParallelCommHidesBehindTheGemmsButItsLastChunk) {
  const ModelSpec model = test::gpt_model(4, 8192, 64);
  const ClusterSpec cluster = test::a100_cluster();  // no slowdown
  Execution e;
  e.tp = 2;
  e.sp = true;
  e.dp = 1;
  e.global_batch = 1;
  e.micro_batch = 1;
  const ExecutionLayout layout = compute_layout(cluster, e);
  const LayerTable hidden = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  e.overlap.tp_comm = false;
  const LayerTable serial = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  // Big GEMMs behind small collectives: what is left is the reduce-scatters'
  // last chunk, half the collectives' time over tp = 2 chunks: 1/4.
  EXPECT_NEAR(hidden.value(LayerColumn::ForwardTp, 1), 0.25 * serial.value(LayerColumn::ForwardTp, 1), 1e-15);
  EXPECT_NEAR(hidden.value(LayerColumn::BackwardTp, 1), 0.25 * serial.value(LayerColumn::BackwardTp, 1), 1e-15);
  // Without sequence parallelism Megatron cannot overlap: serial either way.
  e.sp = false;
  e.overlap.tp_comm = true;
  EXPECT_FALSE(layer_table_config(model, e, layout).tp_comm_overlap);
}

TEST(Overlap, InterleavedPointToPointHidesBehindTheChunk) {
  const ModelSpec model = test::gpt_model(8, 4096, 32);
  ClusterSpec cluster = test::a100_cluster();
  Execution e;
  e.tp = 8;
  e.pp = 4;
  e.dp = 1;
  e.global_batch = 8;
  e.vpp = 2;
  e.stages = uniform_stages(model, compute_layout(cluster, e), 4, 2, Recompute::None);
  const PlanCost hidden = evaluate_plan(model, cluster, e);
  EXPECT_EQ(hidden.breakdown.p2p_s, 0);  // no slowdown: hidden whole in the steady state
  e.overlap.p2p = false;
  const PlanCost blocking = evaluate_plan(model, cluster, e);
  EXPECT_GT(blocking.breakdown.p2p_s, 0);
  // ... but warm-up and cool-down wait for every one of the 4 x 2 - 1 = 7
  // boundaries' transfer once: the bubble is (pp - 1) / vpp of the hidden
  // plan's bottleneck plus the 7 blocking transfers (all chunks hold one
  // block, so each boundary carries the same activation over the same level:
  // 7 x the bottleneck rank's per-micro-batch p2p / its 2 chunks, except
  // rank 0, whose first chunk has no incoming boundary).
  const double per_boundary = blocking.breakdown.p2p_s / blocking.micro_batches / 2;
  const double t_max = hidden.ranks[static_cast<std::size_t>(hidden.bottleneck_rank)].time_per_microbatch_s;
  EXPECT_NEAR(hidden.breakdown.bubble_s, 3.0 / 2 * t_max + 7 * per_boundary, 1e-12);
  // Plain 1F1B is blocking in Megatron-Core whatever the flag says.
  e.vpp = 1;
  e.overlap.p2p = true;
  e.stages = uniform_stages(model, compute_layout(cluster, e), 4, 1, Recompute::None);
  EXPECT_GT(evaluate_plan(model, cluster, e).breakdown.p2p_s, 0);
}

TEST(Overlap, MoeAllToAllHidesBehindTheOtherMicroBatchUnlessFullRecompute) {
  const ModelSpec model = test::moe_model();
  const ClusterSpec cluster = test::a100_cluster();
  Execution e = test::moe_execution(AllToAllAlgorithm::Fast);
  e.global_batch = 32;  // 4 micro-batches per step (dp 8)
  const ExecutionLayout layout = compute_layout(cluster, e);
  const LayerTable table = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  const ReplicaContext replicas = replica_context(cluster, e, layout);
  const int moe = 1;  // the first block is MoE
  const double serial = table.value(LayerColumn::ForwardEp, moe) + table.value(LayerColumn::BackwardEp, moe);
  ASSERT_GT(serial, 0);
  // On 300 GB/s with FAST each all-to-all (0.06 ms) is shorter than any
  // node of the layer beside it (the forward is 1.3 ms, its attention and
  // router 0.4 ms of that), and the test GPU has no slowdown: all of it hides.
  ASSERT_LT(serial / 4, 0.1 * table.value(LayerColumn::ForwardCompute, moe));
  const double hidden = table.value(LayerColumn::EpOverlapped, moe);
  EXPECT_EQ(hidden, 0);
  // pp 1: the first forward and the last backward of the 4 run alone, 1/4 of each.
  EXPECT_DOUBLE_EQ(stage_time(table, replicas, 0, moe, moe, -1, Recompute::None).ep_comm_s,
                   0.75 * hidden + 0.25 * serial);
  EXPECT_DOUBLE_EQ(stage_time(table, replicas, 0, moe, moe, -1, Recompute::Full).ep_comm_s, serial);
  // One micro-batch: nothing to pair it with, all serial.
  e.global_batch = 8;
  EXPECT_DOUBLE_EQ(stage_time(table, replica_context(cluster, e, layout), 0, moe, moe, -1, Recompute::None).ep_comm_s,
                   serial);
  // With pp > 1 Megatron needs interleaving for it.
  e.pp = 2;
  e.dp = 4;
  e.ep = 4;
  EXPECT_FALSE(layer_table_config(model, e, compute_layout(cluster, e)).moe_a2a_overlap);
  e.vpp = 2;
  e.global_batch = 8;
  EXPECT_TRUE(layer_table_config(model, e, compute_layout(cluster, e)).moe_a2a_overlap);
}

// One layer pair of the combined 1F1B, the two streams' timelines worked
// by hand (combined_layer_pair_exposed's node order and dependencies).
TEST(Schedule, CombinedLayerPairExposesWhatItsNodesCannotHide) {
  CombinedLayerPair pair;
  pair.all_to_all_s = 2;
  pair.pre_forward_s = 1;
  pair.pre_dgrad_s = 4;
  pair.experts_forward_s = 1;
  pair.experts_dgrad_s = 4;
  // Without --delay-wgrad-compute: comm combine_bwd 0-2, dispatch_fwd 2-4,
  // dispatch_bwd 6-8 (after experts_bwd 2-6), combine_fwd 8-10; comp pre_fwd
  // 0-1, experts_bwd 2-6, experts_fwd 6-7, pre_bwd 8-12: 12 s for 10 of
  // computation, although the 8 s of all-to-alls are under the 10 s.
  EXPECT_DOUBLE_EQ(combined_layer_pair_exposed(pair), 2);
  // With it, 1 s of each backward's weight gradients later: pre_wgrad and
  // pre_fwd 0-2, experts_dgrad 2-4, dispatch_fwd 2-4, dispatch_bwd 4-6,
  // experts_wgrad 4-6, experts_fwd 6-7, combine_fwd 7-9, pre_dgrad 7-10.
  pair.pre_dgrad_s = 3;
  pair.pre_wgrad_s = 1;
  pair.experts_dgrad_s = 2;
  pair.experts_wgrad_s = 2;
  EXPECT_DOUBLE_EQ(combined_layer_pair_exposed(pair), 0);
  // All-to-alls 10x each node: the four run one after another, 40 s for 4 of computation.
  pair = CombinedLayerPair{1, 1, 0, 1, 1, 0, 10};
  EXPECT_DOUBLE_EQ(combined_layer_pair_exposed(pair), 36);
  // Each shorter than the node it waits beside: nothing left.
  pair.all_to_all_s = 0.5;
  EXPECT_DOUBLE_EQ(combined_layer_pair_exposed(pair), 0);
}

// The layer table builds each MoE row's pair from its own parts: the routed
// experts between dispatch and combine, the rest (attention, router) before;
// weight gradients a GEMM of each forward GEMM's FLOPs. On a 20 GB/s
// NVSwitch an all-to-all lasts about as long as those nodes, and the pair
// leaves some of it exposed where the sum of the windows would hide it all.
TEST(Overlap, CombinedOneFOneBPairsEachMoeLayersNodes) {
  const ModelSpec model = test::moe_model();
  ClusterSpec cluster = test::a100_cluster();
  cluster.levels[0].bandwidth_Bps = 20e9;
  cluster.gpu.overlap_slowdown = 0.1;
  const GpuSpec& gpu = cluster.gpu;
  Execution e = test::moe_execution(AllToAllAlgorithm::Fanout);
  e.global_batch = 32;
  const ExecutionLayout layout = compute_layout(cluster, e);
  const LayerTableConfig config = layer_table_config(model, e, layout);
  ASSERT_TRUE(config.moe_a2a_overlap);
  const LayerTable table = build_layer_table(model, cluster, config);
  const int moe = 1;
  // By hand: t = 2048 tokens, h = 2048, 16 heads and 4 KV heads of 128, one
  // local expert of 4096 (SwiGLU) that receives the k t = 4096 copies.
  const double t = 2048, h = 2048, copies = 4096, w = 4096;
  const double experts_gemms = matmul_time(gpu, 2 * copies * h * 2 * w) + matmul_time(gpu, 2 * copies * w * h);
  const double experts_fw = experts_gemms + hbm_time(gpu, copies * 3 * w * 2 + copies * h * 4 * 2);
  const double pre_gemms = matmul_time(gpu, 2 * t * h * (h + 2 * 4 * 128)) + matmul_time(gpu, 2 * t * h * h) +
                           matmul_time(gpu, 2 * t * h * 8);
  const double forward = table.value(LayerColumn::ForwardCompute, moe);
  const double backward = table.value(LayerColumn::BackwardCompute, moe);
  ASSERT_EQ(table.value(LayerColumn::ForwardTp, moe) + table.value(LayerColumn::ForwardCp, moe), 0);  // tp 1, cp 1
  CombinedLayerPair pair;
  pair.pre_forward_s = forward - experts_fw;
  pair.pre_wgrad_s = pre_gemms;
  pair.pre_dgrad_s = backward - 2 * experts_fw - pre_gemms;
  pair.experts_forward_s = experts_fw;
  pair.experts_wgrad_s = experts_gemms;
  pair.experts_dgrad_s = 2 * experts_fw - experts_gemms;
  pair.all_to_all_s = table.value(LayerColumn::ForwardEp, moe) / 2;
  const double serial = 4 * pair.all_to_all_s;
  const double exposed = combined_layer_pair_exposed(pair);
  ASSERT_GT(exposed, 0);
  ASSERT_LT(serial, forward + backward);  // the sum of the windows would hide it all
  EXPECT_NEAR(table.value(LayerColumn::EpOverlapped, moe), exposed + 0.1 * (serial - exposed), 1e-15);
}

// The test A100 cluster with a slower NVSwitch level, so that an ep-4
// all-to-all of moe_model's tokens lasts about as long as the shared
// expert's parts, and NCCL slowing the GEMMs beside it by 10%.
ClusterSpec shared_expert_cluster(double nvswitch_Bps) {
  ClusterSpec cluster = test::a100_cluster();
  cluster.levels[0].bandwidth_Bps = nvswitch_Bps;
  cluster.gpu.overlap_slowdown = 0.1;
  return cluster;
}

ModelSpec shared_expert_model() {
  ModelSpec model = test::moe_model();
  model.moe.shared_experts = 1;
  return model;
}

// ep 4 over dp 4 at pp 2 without interleaving (where Megatron runs the
// shared-expert overlap, not the 1F1B A2A one); at tp > 1 with sp, whole
// experts beside it and Megatron-FSDP (ZeRO 2), without which tp leaves one
// hardware queue and no overlap.
Execution shared_expert_execution(int tp) {
  Execution e = test::moe_execution(AllToAllAlgorithm::Fanout);
  e.tp = tp;
  e.sp = tp > 1;
  e.expert_tp = tp > 1 ? 1 : 0;
  e.zero_stage = tp > 1 ? 2 : 0;
  e.pp = 2;
  e.dp = 4;
  e.ep = 4;
  e.global_batch = 16;
  // Priced alone here; beside the experts' delayed weight gradients in
  // ExpertsWgradHidesTheDispatchBackward.
  e.overlap.moe_dispatch_wgrad = false;
  return e;
}

// --moe-shared-expert-overlap: the shared expert's fc1 (with the activation)
// runs beside the dispatch, fc2 beside the combine, and the backward of each
// beside the same all-to-all's gradient (token_dispatcher.py:658-717,
// :858-873). tp 1, so the side stream holds no TP collective.
TEST(Overlap, SharedExpertsHideTheirLayersAllToAlls) {
  const ModelSpec model = shared_expert_model();
  const ClusterSpec cluster = shared_expert_cluster(40e9);  // the all-to-all 0.32 ms
  const GpuSpec& gpu = cluster.gpu;
  Execution e = shared_expert_execution(1);
  ASSERT_TRUE(effective_overlap(e).moe_shared);
  ASSERT_FALSE(effective_overlap(e).moe_a2a);
  // What the plan records and its line carries: only where the model has shared experts.
  EXPECT_TRUE(effective_overlap(e, model).moe_shared);
  EXPECT_FALSE(effective_overlap(e, test::moe_model()).moe_shared);
  EXPECT_EQ(to_string(effective_overlap(e, test::moe_model())), "grad");  // ZeRO 0, tp 1, no interleaving
  const ExecutionLayout layout = compute_layout(cluster, e);
  const LayerTable on = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  e.overlap.moe_shared = false;
  const LayerTable off = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  const int moe = 1;

  // By hand: t = 2048 tokens, h = 2048, the shared SwiGLU expert w = 4096.
  const double t = 2048, h = 2048, w = 4096;
  const double fc1 = matmul_time(gpu, 2 * t * h * 2 * w) + hbm_time(gpu, t * 3 * w * 2) + 2 * gpu.kernel_overhead_s;
  const double fc2 = matmul_time(gpu, 2 * t * w * h) + gpu.kernel_overhead_s;
  const double a2a = off.value(LayerColumn::ForwardEp, moe) / 2;  // dispatch = combine
  ASSERT_GT(a2a, 0);
  const double s = gpu.overlap_slowdown;
  // Each part on its own side of an all-to-all: fc2 0.15 ms and 2 fc2 0.30 ms
  // shorter than it, 2 fc1 0.63 ms longer.
  ASSERT_LT(2 * fc2, a2a);
  ASSERT_GT(2 * fc1, a2a);
  EXPECT_DOUBLE_EQ(on.value(LayerColumn::ForwardEp, moe), exposed_seconds(a2a, fc1, s) + exposed_seconds(a2a, fc2, s));
  EXPECT_DOUBLE_EQ(on.value(LayerColumn::BackwardEp, moe),
                   exposed_seconds(a2a, 2 * fc2, s) + exposed_seconds(a2a, 2 * fc1, s));
  EXPECT_LT(on.value(LayerColumn::ForwardEp, moe), off.value(LayerColumn::ForwardEp, moe));
  // The shared expert still computes; only the all-to-alls hide.
  for (LayerColumn column : {LayerColumn::ForwardCompute, LayerColumn::BackwardCompute, LayerColumn::ForwardTp})
    EXPECT_DOUBLE_EQ(on.value(column, moe), off.value(column, moe));
  // Full recompute runs the overlapped forward again.
  EXPECT_DOUBLE_EQ(off.value(LayerColumn::RecomputeFull, moe) - on.value(LayerColumn::RecomputeFull, moe),
                   off.value(LayerColumn::ForwardEp, moe) - on.value(LayerColumn::ForwardEp, moe));
  // Dense blocks and a model without shared experts have nothing beside the dispatcher.
  const LayerTable plain = build_layer_table(test::moe_model(), cluster, layer_table_config(model, e, layout));
  e.overlap.moe_shared = true;
  const LayerTable plain_on = build_layer_table(test::moe_model(), cluster, layer_table_config(model, e, layout));
  EXPECT_DOUBLE_EQ(plain_on.value(LayerColumn::ForwardEp, moe), plain.value(LayerColumn::ForwardEp, moe));

  // Where Megatron refuses it: beside the 1F1B A2A overlap (pp 1, or interleaved),
  // beside the shared_experts recompute module, without expert parallelism.
  Execution other = e;
  other.vpp = 2;
  EXPECT_TRUE(effective_overlap(other).moe_a2a);
  EXPECT_FALSE(effective_overlap(other).moe_shared);
  other.overlap.moe_a2a = false;
  EXPECT_TRUE(effective_overlap(other).moe_shared);
  other = e;
  other.recompute_modules = module_bit(RecomputeModule::SharedExperts);
  EXPECT_FALSE(effective_overlap(other).moe_shared);
  other = e;
  other.ep = 1;
  EXPECT_FALSE(effective_overlap(other).moe_shared);
  // Nor where tp or cp > 1 without Megatron-FSDP leaves one hardware queue.
  other = shared_expert_execution(2);
  EXPECT_TRUE(effective_overlap(other).moe_shared);
  other.zero_stage = 1;
  EXPECT_FALSE(effective_overlap(other).moe_shared);
  other = e;
  other.cp = 2;
  other.dp = 2;
  EXPECT_FALSE(effective_overlap(other).moe_shared);
  other.zero_stage = 2;
  EXPECT_TRUE(effective_overlap(other).moe_shared);
}

// The MTP layers in the head's row (multi_token_prediction.py builds their
// block from the decoder's layer spec) run the same MoE layer, so the same
// side stream beside each one's dispatch and combine: the row's all-to-alls
// as exposed as a block's, once per MTP layer.
TEST(Overlap, SharedExpertsHideTheMtpLayersAllToAllsToo) {
  ModelSpec model = shared_expert_model();
  const ClusterSpec cluster = shared_expert_cluster(40e9);
  const Execution e = shared_expert_execution(1);
  const ExecutionLayout layout = compute_layout(cluster, e);
  const int block = 1, head = model.num_layers + 1;
  for (int mtp : {1, 2}) {
    model.mtp_layers = mtp;
    const LayerTable on = build_layer_table(model, cluster, layer_table_config(model, e, layout));
    Execution off_plan = e;
    off_plan.overlap.moe_shared = false;
    const LayerTable off = build_layer_table(model, cluster, layer_table_config(model, off_plan, layout));
    for (LayerColumn column : {LayerColumn::ForwardEp, LayerColumn::BackwardEp}) {
      EXPECT_DOUBLE_EQ(on.value(column, head), mtp * on.value(column, block)) << mtp;
      EXPECT_DOUBLE_EQ(off.value(column, head), mtp * off.value(column, block)) << mtp;
      EXPECT_LT(on.value(column, head), off.value(column, head)) << mtp;
    }
  }
}

// With tp 2 and sp the side stream gathers the shared expert's input before
// fc1 and reduce-scatters its output after fc2: both hide the all-to-alls too,
// and the shared expert's TP unit leaves TransformerEngine's userbuffer
// overlap (shared_experts.py:163-175), serial on its stream.
TEST(Overlap, SharedExpertsTpUnitRunsOnTheSideStream) {
  const ModelSpec model = shared_expert_model();
  const ClusterSpec cluster = shared_expert_cluster(10e9);  // the all-to-all 0.63 ms, the gather 0.42
  Execution e = shared_expert_execution(2);
  e.overlap.tp_comm = false;
  const ExecutionLayout layout = compute_layout(cluster, e);
  const LayerTableConfig config = layer_table_config(model, e, layout);
  const LayerTable on = build_layer_table(model, cluster, config);
  e.overlap.moe_shared = false;
  const LayerTable off = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  const int moe = 1;
  // Without the userbuffer overlap every TP unit is serial either way.
  EXPECT_DOUBLE_EQ(on.value(LayerColumn::ForwardTp, moe), off.value(LayerColumn::ForwardTp, moe));
  // The windows: t = 2048 tokens, the shared expert's GEMMs split over tp 2, the
  // gather and reduce-scatter of t h bf16 over the tp group.
  const GpuSpec& gpu = cluster.gpu;
  const double t = 2048, h = 2048, w = 4096, bytes = t * h * 2;
  const double gather = all_gather_time(cluster, config.tp_group, bytes);
  const double reduce = reduce_scatter_time(cluster, config.tp_group, bytes);
  ASSERT_GT(gather, 0);
  const double fc1 = matmul_time(gpu, 2 * t * h * 2 * w / 2) + hbm_time(gpu, t * 3 * w / 2 * 2) + 2 * gpu.kernel_overhead_s;
  const double fc2 = matmul_time(gpu, 2 * t * w * h / 2) + gpu.kernel_overhead_s;
  const double a2a = off.value(LayerColumn::ForwardEp, moe) / 2;
  const double s = gpu.overlap_slowdown;
  ASSERT_LT(gather + fc1, a2a);  // the forward's windows shorter than the all-to-all,
  ASSERT_GT(2 * fc1 + reduce, a2a);  // the backward's longest longer
  EXPECT_DOUBLE_EQ(on.value(LayerColumn::ForwardEp, moe),
                   exposed_seconds(a2a, gather + fc1, s) + exposed_seconds(a2a, fc2 + reduce, s));
  EXPECT_DOUBLE_EQ(on.value(LayerColumn::BackwardEp, moe),
                   exposed_seconds(a2a, 2 * fc2 + gather, s) + exposed_seconds(a2a, 2 * fc1 + reduce, s));

  // With the userbuffer overlap on, the shared unit is taken out of it: the
  // block's TP time grows by what the overlap hid of that unit.
  e.overlap.tp_comm = true;
  e.overlap.moe_shared = true;
  const LayerTable ub_on = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  e.overlap.moe_shared = false;
  const LayerTable ub_off = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  EXPECT_GT(ub_on.value(LayerColumn::ForwardTp, moe), ub_off.value(LayerColumn::ForwardTp, moe));
  EXPECT_LE(ub_on.value(LayerColumn::ForwardTp, moe), off.value(LayerColumn::ForwardTp, moe));
}

// The moe recompute module runs the MoE layer's forward again, the shared
// experts on their side stream with it: their TP unit again as serial as in
// the forward, not at the mean exposure of the block's userbuffer-overlapped
// units.
TEST(Overlap, RecomputedSharedExpertsTpUnitStaysOnTheSideStream) {
  const ModelSpec model = shared_expert_model();
  const ClusterSpec cluster = shared_expert_cluster(10e9);
  Execution e = shared_expert_execution(2);
  e.recompute_modules = module_bit(RecomputeModule::Moe);
  ASSERT_TRUE(effective_overlap(e, model).moe_shared);  // the moe module blocks only the 1F1B A2A overlap
  const ExecutionLayout layout = compute_layout(cluster, e);
  const LayerTableConfig config = layer_table_config(model, e, layout);
  const int moe = 1;
  auto table = [&](bool tp_comm, bool shared) {
    Execution with = e;
    with.overlap.tp_comm = tp_comm;
    with.overlap.moe_shared = shared;
    return build_layer_table(model, cluster, layer_table_config(model, with, layout));
  };
  const LayerTable serial = table(false, false), ub = table(true, false), ub_shared = table(true, true);
  // One TP unit under sp: the gather and the reduce-scatter of t h bf16.
  const double bytes = 2048.0 * 2048 * 2;
  const double unit = all_gather_time(cluster, config.tp_group, bytes) + reduce_scatter_time(cluster, config.tp_group, bytes);
  // Without the side stream the recomputed unit is as exposed as the mean of
  // the block's units (the forward's TP over its serial time); with it the
  // unit is serial, and the recomputed all-to-alls hide as the forward's.
  const double mean = ub.value(LayerColumn::ForwardTp, moe) / serial.value(LayerColumn::ForwardTp, moe);
  ASSERT_LT(mean, 0.9);  // the userbuffer overlap hides a good part: the two prices differ
  EXPECT_NEAR(ub_shared.value(LayerColumn::RecomputeSelective, moe) - ub.value(LayerColumn::RecomputeSelective, moe),
              unit * (1 - mean) + ub_shared.value(LayerColumn::ForwardEp, moe) - ub.value(LayerColumn::ForwardEp, moe),
              1e-15);
}

// --overlap-dispatch-backward-with-experts-wgrad: the routed experts' weight
// gradients, delayed past their data gradients, run on their own stream
// beside the dispatch's backward all-to-all (moe_layer.py:776-814). The
// combine's gradient and the forward's all-to-alls stay serial.
TEST(Overlap, ExpertsWgradHidesTheDispatchBackward) {
  const GpuSpec gpu = shared_expert_cluster(1).gpu;
  // By hand: ep 4 over moe_model's 8 experts, two here, each of the k t =
  // 4096 token copies' half at h = 2048, SwiGLU width w = 4096; a weight
  // gradient is a GEMM of each forward GEMM's FLOPs.
  const double h = 2048, w = 4096, copies = 2048;
  const double wgrad = 2 * (matmul_time(gpu, 2 * copies * h * 2 * w) + matmul_time(gpu, 2 * copies * w * h));
  const double s = 0.1;  // shared_expert_cluster's overlap_slowdown
  const int moe = 1;
  Execution e = shared_expert_execution(1);
  e.overlap.moe_dispatch_wgrad = true;
  ASSERT_TRUE(effective_overlap(e).moe_dispatch_wgrad);
  ASSERT_FALSE(effective_overlap(e).moe_a2a);  // pp 2 without interleaving
  const ModelSpec model = test::moe_model();
  // A slow NVSwitch, where the all-to-all outlasts the weight gradients, and a fast one.
  for (double nvswitch : {2e9, 200e9}) {
    const ClusterSpec cluster = shared_expert_cluster(nvswitch);
    const ExecutionLayout layout = compute_layout(cluster, e);
    const LayerTable on = build_layer_table(model, cluster, layer_table_config(model, e, layout));
    Execution off_plan = e;
    off_plan.overlap.moe_dispatch_wgrad = false;
    const LayerTable off = build_layer_table(model, cluster, layer_table_config(model, off_plan, layout));
    const double a2a = off.value(LayerColumn::ForwardEp, moe) / 2;
    ASSERT_GT(a2a, 0);
    if (nvswitch < 10e9) ASSERT_GT(a2a, wgrad) << "the slow case";
    else ASSERT_LT(a2a, wgrad) << "the fast case";
    EXPECT_DOUBLE_EQ(off.value(LayerColumn::BackwardEp, moe), 2 * a2a);
    EXPECT_DOUBLE_EQ(on.value(LayerColumn::BackwardEp, moe), a2a + exposed_seconds(a2a, wgrad, s)) << nvswitch;
    EXPECT_LT(on.value(LayerColumn::BackwardEp, moe), off.value(LayerColumn::BackwardEp, moe));
    // The forward and the computation are unchanged: only the gradient's all-to-all hides.
    for (LayerColumn column : {LayerColumn::ForwardEp, LayerColumn::ForwardCompute, LayerColumn::BackwardCompute,
                               LayerColumn::RecomputeFull, LayerColumn::BackwardTp})
      EXPECT_DOUBLE_EQ(on.value(column, moe), off.value(column, moe));
    // Dense blocks have no dispatcher.
    EXPECT_EQ(on.value(LayerColumn::BackwardEp, 0), 0);
  }

  // Beside the shared-expert overlap the dispatch's gradient has both side
  // streams beside it: the shared expert's fc1 gradients and the routed wgrad.
  const ModelSpec shared = shared_expert_model();
  const ClusterSpec cluster = shared_expert_cluster(2e9);
  const ExecutionLayout layout = compute_layout(cluster, e);
  ASSERT_TRUE(effective_overlap(e, shared).moe_shared);
  const LayerTable both = build_layer_table(shared, cluster, layer_table_config(shared, e, layout));
  const double t = 2048;
  const double fc1 = matmul_time(gpu, 2 * t * h * 2 * w) + hbm_time(gpu, t * 3 * w * 2) + 2 * gpu.kernel_overhead_s;
  const double fc2 = matmul_time(gpu, 2 * t * w * h) + gpu.kernel_overhead_s;
  Execution serial_plan = e;
  serial_plan.overlap = Overlap::none();
  const double a2a = build_layer_table(shared, cluster, layer_table_config(shared, serial_plan, layout))
                         .value(LayerColumn::ForwardEp, moe) / 2;
  EXPECT_DOUBLE_EQ(both.value(LayerColumn::BackwardEp, moe),
                   exposed_seconds(a2a, 2 * fc2, s) + exposed_seconds(a2a, 2 * fc1 + wgrad, s));

  // Where it runs: ep > 1, not beside the 1F1B A2A overlap (which Megatron
  // refuses beside it, transformer_config.py:3084), whatever the hardware queues.
  Execution other = e;
  other.vpp = 2;
  ASSERT_TRUE(effective_overlap(other).moe_a2a);
  EXPECT_FALSE(effective_overlap(other).moe_dispatch_wgrad);
  other.overlap.moe_a2a = false;
  EXPECT_TRUE(effective_overlap(other).moe_dispatch_wgrad);
  other = e;
  other.pp = 1;
  other.dp = 8;
  ASSERT_TRUE(effective_overlap(other).moe_a2a);
  EXPECT_FALSE(effective_overlap(other).moe_dispatch_wgrad);
  other.recompute_modules = module_bit(RecomputeModule::Moe);  // blocks the A2A overlap only
  EXPECT_TRUE(effective_overlap(other).moe_dispatch_wgrad);
  other = e;
  other.ep = 1;
  EXPECT_FALSE(effective_overlap(other).moe_dispatch_wgrad);
  other = shared_expert_execution(2);
  other.overlap.moe_dispatch_wgrad = true;
  other.zero_stage = 1;  // one hardware queue
  EXPECT_TRUE(effective_overlap(other).moe_dispatch_wgrad);
  EXPECT_EQ(to_string(effective_overlap(other, model)), "grad,param,tp,wgrad");
}

TEST(Schedule, CombinedOneFOneBRunsWarmUpAndCoolDownAlone) {
  // pp 1: micro-batch 0's forward and the last backward (combined_1f1b.py).
  EXPECT_DOUBLE_EQ(combined_1f1b_alone_fraction(1, 1, 8, 0), 1.0 / 8);
  // Interleaved, rank r: 2 (pp - r - 1) + (vpp - 1) pp + 1 warm-up chunk forwards of m vpp.
  // pp 8, vpp 4, 128 micro-batches: rank 0 14 + 24 + 1 = 39 of 512, rank 7 0 + 24 + 1 = 25.
  EXPECT_DOUBLE_EQ(combined_1f1b_alone_fraction(8, 4, 128, 0), 39.0 / 512);
  EXPECT_DOUBLE_EQ(combined_1f1b_alone_fraction(8, 4, 128, 7), 25.0 / 512);
  // pp 4, vpp 2, 16 micro-batches, rank 1: 4 + 4 + 1 = 9 of 32.
  EXPECT_DOUBLE_EQ(combined_1f1b_alone_fraction(4, 2, 16, 1), 9.0 / 32);
  // Every chunk in warm-up (pp 4, vpp 2, 4 micro-batches, rank 0: 11 >= 8), or no
  // interleaving with pp > 1 (Megatron does not combine): all alone.
  EXPECT_DOUBLE_EQ(combined_1f1b_alone_fraction(4, 2, 4, 0), 1.0);
  EXPECT_DOUBLE_EQ(combined_1f1b_alone_fraction(4, 1, 64, 0), 1.0);
}

// Each pipeline rank's stages price its own warm-up: the same MoE layer costs
// rank 0 more exposed all-to-all than the last rank.
TEST(Overlap, MoeAllToAllExposedByEachRanksOwnWarmUp) {
  const ModelSpec model = test::moe_model();
  const ClusterSpec cluster = test::a100_cluster();
  Execution e = test::moe_execution(AllToAllAlgorithm::Fast);
  e.pp = 2;
  e.vpp = 2;
  e.dp = 4;
  e.ep = 4;
  e.global_batch = 16;  // 4 micro-batches, 8 chunk forwards per rank
  const ExecutionLayout layout = compute_layout(cluster, e);
  const LayerTable table = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  ASSERT_TRUE(table.view().moe_a2a_overlap);
  const ReplicaContext replicas = replica_context(cluster, e, layout);
  const int moe = 1;
  const double serial = table.value(LayerColumn::ForwardEp, moe) + table.value(LayerColumn::BackwardEp, moe);
  const double hidden = table.value(LayerColumn::EpOverlapped, moe);
  ASSERT_LT(hidden, serial);
  // rank 0: 2 + 2 + 1 = 5 of 8 alone; rank 1: 0 + 2 + 1 = 3 of 8.
  EXPECT_DOUBLE_EQ(stage_time(table, replicas, 0, moe, moe, -1, Recompute::None).ep_comm_s,
                   hidden + 5.0 / 8 * (serial - hidden));
  EXPECT_DOUBLE_EQ(stage_time(table, replicas, 1, moe, moe, -1, Recompute::None).ep_comm_s,
                   hidden + 3.0 / 8 * (serial - hidden));
}

TEST(Schedule, InterleavedStashFollowsMegatronsOrderChunkByChunk) {
  // pp 2, vpp 2, 4 micro-batches, rank 0: warm-up 2*(2-0-1) + (2-1)*2 = 4 forwards over
  // chunks 0,0,1,1 (1+1+10+10 = 22), then forward chunk 0 (23, the peak), backward chunk 1, ...
  EXPECT_DOUBLE_EQ(interleaved_stash_depth(0, 2, 2, 4, {1, 10}), 23.0 / 11);
  // rank 1: warm-up 2 forwards of chunk 0 (2), then forward chunk 1 (12, the peak), backward chunk 1, ...
  EXPECT_DOUBLE_EQ(interleaved_stash_depth(1, 2, 2, 4, {1, 10}), 12.0 / 11);
  // Equal chunks give Megatron's count of in-flight chunk micro-batches.
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_DOUBLE_EQ(interleaved_stash_depth(rank, 4, 3, 8, {2, 2, 2}), stash_depth(rank, 4, 3, 8)) << rank;
  EXPECT_DOUBLE_EQ(interleaved_stash_depth(0, 4, 1, 8, {5}), 4);
}

TEST(Schedule, UnevenFirstAndLastStagesSplitAsMegatronDoes) {
  const ModelSpec model = test::gpt_model(8, 1024, 16);
  const ClusterSpec cluster = test::a100_cluster();
  Execution e;
  e.pp = 4;
  e.dp = 1;
  e.global_batch = 8;
  const ExecutionLayout layout = compute_layout(cluster, e);
  // 8 blocks, first rank 1, last rank 1: the 2 middle ranks take 3 each.
  using Ranges = std::vector<std::pair<int, int>>;
  const auto ranges = [](const std::vector<StagePlan>& stages) {
    Ranges out;
    for (const StagePlan& stage : stages) out.emplace_back(stage.first_layer, stage.last_layer);
    return out;
  };
  EXPECT_EQ(ranges(first_last_stages(model, layout, 4, 1, 1, 1, Recompute::None)),
            (Ranges{{0, 1}, {2, 4}, {5, 7}, {8, 9}}));
  // Only the last given (7 on rank 1 of 2, 1 left for rank 0), interleaved 1 x 2 chunks: 7 is odd.
  EXPECT_THROW(first_last_stages(model, layout, 2, 2, 0, 7, Recompute::None), std::invalid_argument);
  // pp 2, vpp 2: rank 0 holds 2 (1 per chunk), rank 1 holds 6 (3 per chunk), chunks in chain order r0 r1 r0 r1.
  EXPECT_EQ(ranges(first_last_stages(model, layout, 2, 2, 2, 0, Recompute::None)),
            (Ranges{{0, 1}, {2, 4}, {5, 5}, {6, 9}}));
  // 8 - 1 = 7 blocks do not split over 2 middle ranks (pp 3, first given).
  EXPECT_THROW(first_last_stages(model, layout, 3, 1, 1, 0, Recompute::None), std::invalid_argument);
  EXPECT_THROW(first_last_stages(model, layout, 1, 1, 1, 0, Recompute::None), std::invalid_argument);  // pp 1
}

TEST(Schedule, MoreChunksThanBlocksGiveTheEmbeddingAndTheHeadTheirOwn) {
  const ModelSpec model = test::gpt_model(6, 1024, 16);
  const ClusterSpec cluster = test::a100_cluster();
  Execution e;
  e.tp = 1;
  e.pp = 4;
  e.dp = 1;
  e.vpp = 2;
  e.global_batch = 4;
  validate_degrees(model, cluster, e, 4);  // 8 chunks for 6 blocks + embedding + head
  const std::vector<StagePlan> stages = uniform_stages(model, compute_layout(cluster, e), 4, 2, Recompute::None);
  ASSERT_EQ(stages.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(stages[static_cast<std::size_t>(i)].first_layer, i) << i;  // E | t | t | t | t | t | t | L
    EXPECT_EQ(stages[static_cast<std::size_t>(i)].last_layer, i) << i;
  }
  e.vpp = 1;
  e.pp = 7;  // 7 stages: the embedding alone, the head with the last block
  const std::vector<StagePlan> seven = uniform_stages(model, compute_layout(cluster, e), 7, 1, Recompute::None);
  EXPECT_EQ(seven.front().last_layer, 0);
  EXPECT_EQ(seven.back().first_layer, 6);
  EXPECT_EQ(seven.back().last_layer, 7);
  e.pp = 9;
  EXPECT_THROW(validate_degrees(model, cluster, e, 9), std::invalid_argument);
}

}  // namespace
}  // namespace nestfast
