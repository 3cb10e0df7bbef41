// Per-layer quantities against closed forms from the literature, and the
// table's O(1) range queries against plain loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include "solver/model/layer_work.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/plan_cost.hpp"
#include "test_specs.hpp"

namespace nestfast {
namespace {

Sharding shard(int tp, bool sp, int mbs = 1, int cp = 1) {
  Sharding s;
  s.tp = tp;
  s.sp = sp;
  s.micro_batch = mbs;
  s.seq_len = 2048;
  s.cp = cp;
  return s;
}

// Megatron-Core, tp 2 with sp, dp 4, over ep ranks: 8 devices, 8 sequences.
Execution megatron_tp2_dp4(int ep) {
  Execution e;
  e.framework = Framework::MegatronCore;
  e.tp = 2;
  e.dp = 4;
  e.ep = ep;
  e.sp = true;
  e.global_batch = 8;
  e.a2a = AllToAllAlgorithm::Fanout;  // Megatron's alltoall dispatcher
  return e;
}

TEST(LayerWork, GptBlockActivationsMatchKorthikanti) {
  const ModelSpec model = test::gpt_model(4, 4096, 32);
  const double s = 2048, b = 2, h = 4096, a = 32;
  const double sbh = s * b * h;
  // tp = 1, no sp: s b h (34 + 5 a s / h)
  const LayerWork one = layer_work(model, 1, shard(1, false, 2));
  EXPECT_DOUBLE_EQ(one.stash_bytes[0], sbh * (34 + 5 * a * s / h));
  // tp = 8, no sp: s b h (10 + 24/t + 5 a s / (h t))
  const LayerWork tp = layer_work(model, 1, shard(8, false, 2));
  EXPECT_DOUBLE_EQ(tp.stash_bytes[0], sbh * (10 + 24.0 / 8 + 5 * a * s / (h * 8)));
  // tp = 8 with sp and selective recompute: 34 s b h / t; full: 2 s b h / t
  const LayerWork sp = layer_work(model, 1, shard(8, true, 2));
  EXPECT_DOUBLE_EQ(sp.stash_bytes[0], sbh * (34.0 / 8 + 5 * a * s / (h * 8)));
  EXPECT_DOUBLE_EQ(sp.stash_bytes[1], sbh * 34.0 / 8);
  EXPECT_DOUBLE_EQ(sp.stash_bytes[2], sbh * 2.0 / 8);
}

TEST(LayerWork, GptBlockParamsAndFlops) {
  const ModelSpec model = test::gpt_model(4, 4096, 32);
  const double h = 4096, s = 2048, b = 1;
  const LayerWork block = layer_work(model, 1, shard(1, false));
  EXPECT_DOUBLE_EQ(block.dense_params, 12 * h * h + 13 * h);
  // Narayanan et al. 2021: a block's forward is 24 b s h^2 + 4 b s^2 h FLOPs; model FLOPs = 3x.
  EXPECT_DOUBLE_EQ(block.model_flops, 3 * (24 * b * s * h * h + 4 * b * s * s * h));
  // Sharded over tp = 4, every device does a quarter.
  const LayerWork quarter = layer_work(model, 1, shard(4, false));
  EXPECT_DOUBLE_EQ(quarter.model_flops * 4, block.model_flops);
  // The head: 2 b s h V forward.
  const LayerWork head = layer_work(model, 5, shard(1, false));
  EXPECT_DOUBLE_EQ(head.model_flops, 3 * 2 * b * s * h * 51200);
}

TEST(LayerWork, Gpt3HasItsPublishedParameterCount) {
  // 96 blocks of 12 h^2 + 13 h, tied 51200 x h embedding, final norm: 174.6B (Brown et al. 2020: "175B").
  const double params = total_parameters(test::gpt_model(96, 12288, 96));
  EXPECT_NEAR(params, 96 * (12.0 * 12288 * 12288 + 13 * 12288) + 51200.0 * 12288 + 2 * 12288, 1.0);
  EXPECT_NEAR(params / 1e9, 174.6, 0.05);
}

TEST(LayerWork, GqaAndSwigluShrinkAttentionAndGrowTheMlp) {
  ModelSpec model = test::gpt_model(4, 4096, 32);
  model.mlp = MlpKind::Swiglu;
  model.ffn_hidden = 11008;
  model.kv_heads = 8;
  const double h = 4096, f = 11008, kv = 8 * 128;
  const LayerWork block = layer_work(model, 1, shard(1, false));
  // q, k, v, o (no biases) + gate, up, down + two RMSNorm weights
  EXPECT_DOUBLE_EQ(block.dense_params, h * (h + 2 * kv) + h * h + 3 * h * f + 2 * h);
}

TEST(LayerWork, MoeBlockSplitsExpertsOverEp) {
  const ModelSpec model = test::moe_model();
  Sharding s = shard(1, false);
  s.ep = 4;
  const LayerWork block = layer_work(model, 1, s);
  EXPECT_EQ(layer_kind(model, 1), LayerKind::MoeBlock);
  EXPECT_DOUBLE_EQ(block.expert_params, 8.0 / 4 * 3 * 2048 * 4096);
  EXPECT_GT(block.ep_bytes, 0);
  EXPECT_EQ(block.ep_all_to_alls_forward, 2);
  // Mean routing: total expert FLOPs over the ep group equal top_k copies of every token.
  s.ep = 1;
  const LayerWork whole = layer_work(model, 1, s);
  EXPECT_DOUBLE_EQ(whole.model_flops, block.model_flops);
}

// Whole experts (Megatron's --expert-tensor-parallel-size 1) beside tp = 2
// with sp: test-moe (h 2048, 8 experts of SwiGLU width 4096, top-2), one
// sequence of 2048 tokens, ep 2 (4 experts a device). Hand-computed: the
// device dispatches its 1,024-token sequence share, 2 x 1,024 = 2,048 copies
// reach its experts, 512 each; at etp = tp the 4,096 gathered copies meet
// half-width experts (1,024 each): the same GEMMs (2 x 512 x 2048 x 8192 =
// 2 x 1024 x 2048 x 4096 FLOPs), twice the weights, no expert-tp collective
// (token_dispatcher.py:741-751 runs the gather only when etp > 1; at etp = tp
// it gathers the 4,096 copies, 4,096 x 2048 x 2 bytes).
TEST(LayerWork, WholeExpertsBesideTensorParallelism) {
  const ModelSpec model = test::moe_model();
  Sharding s = shard(2, true);
  s.ep = 2;
  const LayerWork split = layer_work(model, 1, s);
  s.etp = 1;
  const LayerWork whole = layer_work(model, 1, s);
  EXPECT_DOUBLE_EQ(split.expert_params, 4.0 * 3 * 2048 * 4096 / 2);
  EXPECT_DOUBLE_EQ(whole.expert_params, 4.0 * 3 * 2048 * 4096);
  ASSERT_EQ(split.gemms.size(), whole.gemms.size());
  for (std::size_t i = 0; i < split.gemms.size(); ++i) {
    EXPECT_DOUBLE_EQ(whole.gemms[i].flops, split.gemms[i].flops) << i;
    EXPECT_DOUBLE_EQ(whole.gemms[i].count, split.gemms[i].count) << i;
  }
  EXPECT_DOUBLE_EQ(whole.gemms[3].flops, 2.0 * 512 * 2048 * 8192);  // QKV, proj, router, then gate + up
  EXPECT_DOUBLE_EQ(whole.model_flops, split.model_flops);
  EXPECT_DOUBLE_EQ(whole.ep_bytes, 2.0 * 1024 * 2048 * 2);
  EXPECT_DOUBLE_EQ(whole.ep_bytes, split.ep_bytes);
  EXPECT_DOUBLE_EQ(split.tp_collectives_forward, 1);  // attention's; the experts' gather is tp_expert_*
  EXPECT_DOUBLE_EQ(split.tp_expert_collectives_forward, 1);
  EXPECT_DOUBLE_EQ(split.tp_expert_collectives_backward, 1);
  EXPECT_DOUBLE_EQ(split.tp_expert_bytes, 4096.0 * 2048 * 2);
  EXPECT_DOUBLE_EQ(whole.tp_collectives_forward, 1);  // attention's only
  EXPECT_DOUBLE_EQ(whole.tp_collectives_backward, 1);
  EXPECT_DOUBLE_EQ(whole.tp_expert_collectives_forward + whole.tp_expert_collectives_backward, 0);
  // Routed copies kept for the backward: 2,048 x (2048 + 3 x 4096) x 2 bytes
  // whole, 4,096 x (2048 + 3 x 2048) x 2 bytes split.
  EXPECT_DOUBLE_EQ(whole.stash_bytes[0] - split.stash_bytes[0],
                   2048.0 * (2048 + 3 * 4096) * 2 - 4096.0 * (2048 + 3 * 2048) * 2);
}

// The routed experts' expert-tp traffic at etp = tp = 2 with sp, test-moe
// (h 2048, top-2), one 2048-token sequence. Over ep 2 the all-to-all
// dispatcher all-gathers the copies both tp ranks received, k t = 2 x 2048 =
// 4,096 tokens of 2048 x 2 bytes = 16 MiB, and reduce-scatters them after
// the experts (token_dispatcher.py:741-751, :824-832 at d98e8a64): twice the
// dense MLP's t h = 8 MiB. At ep 1 the all-gather dispatcher gathers the
// 2,048 tokens before routing (token_dispatcher.py:290-300): 8 MiB. One
// shared expert adds its own all-gather + reduce-scatter of t h
// (shared_experts.py:574-584). In the layer table the expert pair costs one
// all-gather + reduce-scatter of 16 MiB over the tp group each way, and
// --tp-comm-overlap does not hide it.
TEST(LayerWork, ExpertTensorParallelismGathersTheRoutedCopies) {
  ModelSpec model = test::moe_model();
  Sharding s = shard(2, true);
  const double mib = 1024.0 * 1024;
  s.ep = 2;
  const LayerWork ep2 = layer_work(model, 1, s);
  EXPECT_DOUBLE_EQ(ep2.tp_expert_bytes, 16 * mib);
  EXPECT_DOUBLE_EQ(ep2.tp_bytes, 8 * mib);
  EXPECT_DOUBLE_EQ(ep2.tp_collectives_forward, 1);
  s.ep = 1;
  const LayerWork ep1 = layer_work(model, 1, s);
  EXPECT_DOUBLE_EQ(ep1.tp_expert_bytes, 8 * mib);
  EXPECT_DOUBLE_EQ(ep1.tp_expert_collectives_forward, 1);
  model.moe.shared_experts = 1;
  s.ep = 2;
  const LayerWork shared = layer_work(model, 1, s);
  EXPECT_DOUBLE_EQ(shared.tp_collectives_forward, 2);  // attention's and the shared expert's
  EXPECT_DOUBLE_EQ(shared.tp_collectives_backward, 2);
  EXPECT_DOUBLE_EQ(shared.tp_expert_bytes, 16 * mib);
  // The hottest group gathers what its experts received: 1.5 x the mean.
  s.expert_imbalance = 1.5;
  EXPECT_DOUBLE_EQ(layer_work(model, 1, s).tp_expert_bytes, 1.5 * 16 * mib);
  s.expert_imbalance = 1;

  model.moe.shared_experts = 0;
  const ClusterSpec cluster = test::a100_cluster();
  Execution e = megatron_tp2_dp4(2);
  for (const bool overlap : {false, true}) {
    e.overlap.tp_comm = overlap;
    Execution whole = e;
    whole.expert_tp = 1;
    const ExecutionLayout layout = compute_layout(cluster, e);
    const LayerTable split_table = build_layer_table(model, cluster, layer_table_config(model, e, layout));
    const LayerTable whole_table =
        build_layer_table(model, cluster, layer_table_config(model, whole, compute_layout(cluster, whole)));
    const double pair =
        all_gather_time(cluster, layout.tp_group, 16 * mib) + reduce_scatter_time(cluster, layout.tp_group, 16 * mib);
    EXPECT_NEAR(split_table.value(LayerColumn::ForwardTp, 1) - whole_table.value(LayerColumn::ForwardTp, 1), pair,
                1e-12 * pair)
        << overlap;
    EXPECT_NEAR(split_table.value(LayerColumn::BackwardTp, 1) - whole_table.value(LayerColumn::BackwardTp, 1), pair,
                1e-12 * pair)
        << overlap;
  }
}

// Only Megatron-Core lays whole experts beside tp, on its own expert grid:
// ep x etp then divides tp x cp x dp, so ep 8 fits tp 2 x dp 4.
TEST(Execution, WholeExpertsOnlyOnMegatronsExpertGrid) {
  const ModelSpec model = test::moe_model();
  const ClusterSpec cluster = test::a100_cluster();
  Execution e = megatron_tp2_dp4(8);
  EXPECT_THROW(validate_degrees(model, cluster, e, 8), std::invalid_argument);  // ep 8 x etp 2 > 8 ranks
  e.expert_tp = 1;
  EXPECT_NO_THROW(validate_degrees(model, cluster, e, 8));
  EXPECT_EQ(e.expert_dp_size(), 1);
  e.expert_tp = 3;
  EXPECT_THROW(validate_degrees(model, cluster, e, 8), std::invalid_argument);
  e.expert_tp = 1;
  e.ep = 4;
  e.framework = Framework::Nest;
  EXPECT_THROW(validate_degrees(model, cluster, e, 8), std::invalid_argument);
}

// Megatron-Core dispatches through its own dispatchers: FAST is refused, and
// DeepEP needs a cluster it runs on, whole experts, one of its group sizes
// and whole 8-GPU nodes across nodes.
TEST(Execution, MegatronDispatchersAndDeepEpsLimits) {
  const ModelSpec model = test::moe_model();
  ClusterSpec cluster = test::a100_cluster();
  Execution e = megatron_tp2_dp4(8);
  e.expert_tp = 1;
  e.a2a = AllToAllAlgorithm::Fast;
  EXPECT_THROW(validate_degrees(model, cluster, e, 8), std::invalid_argument);
  e.a2a = AllToAllAlgorithm::DeepEp;
  EXPECT_THROW(validate_degrees(model, cluster, e, 8), std::invalid_argument);  // the cluster runs no DeepEP
  cluster.deepep = DeepEpSupport::Intranode;
  EXPECT_NO_THROW(validate_degrees(model, cluster, e, 8));
  e.expert_tp = 0;  // etp = tp = 2: the flex dispatcher's copies per expert-tp rank are not priced
  e.ep = 4;
  EXPECT_THROW(validate_degrees(model, cluster, e, 8), std::invalid_argument);
  // 16 ranks: across nodes, only where the internode kernels run, with 8-GPU nodes.
  auto whole_experts = [&](int ep, AllToAllAlgorithm a2a) {  // tp 2 x dp ep/2, ep experts
    Execution plan = megatron_tp2_dp4(ep);
    plan.dp = ep / 2;
    plan.global_batch = ep;
    plan.expert_tp = 1;
    plan.a2a = a2a;
    ModelSpec experts = model;
    experts.moe.num_experts = ep;
    return std::pair{experts, plan};
  };
  const auto [sixteen, wide] = whole_experts(16, AllToAllAlgorithm::DeepEp);
  EXPECT_THROW(validate_degrees(sixteen, cluster, wide, 16), std::invalid_argument);
  cluster.deepep = DeepEpSupport::Internode;
  EXPECT_NO_THROW(validate_degrees(sixteen, cluster, wide, 16));
  cluster.levels[0].group_size = 4;
  cluster.levels[1].group_size = 8;
  EXPECT_THROW(validate_degrees(sixteen, cluster, wide, 16), std::invalid_argument);
  // 12 is not one of DeepEP's group sizes (megatron_rules: DeepEpGroupSize).
  cluster = test::a100_cluster();
  cluster.deepep = DeepEpSupport::Internode;
  const auto [twelve_experts, twelve] = whole_experts(12, AllToAllAlgorithm::DeepEp);
  EXPECT_THROW(validate_degrees(twelve_experts, cluster, twelve, 12), std::invalid_argument);
  const auto [same_experts, alltoall] = whole_experts(12, AllToAllAlgorithm::Fanout);
  EXPECT_NO_THROW(validate_degrees(same_experts, cluster, alltoall, 12));
}

TEST(LayerTable, RangeQueriesMatchLoops) {
  const ModelSpec model = test::moe_model();
  const ClusterSpec cluster = test::a100_cluster();
  Execution e;
  e.tp = 2;
  e.dp = 4;
  e.ep = 2;
  e.global_batch = 8;
  const LayerTable table = build_layer_table(model, cluster, layer_table_config(model, e, compute_layout(cluster, e)));
  ASSERT_EQ(table.layers(), model.num_layers + 2);
  for (int a = 0; a < table.layers(); ++a) {
    for (int b = a; b < table.layers(); ++b) {
      double sum = 0, working = 0;
      for (int i = a; i <= b; ++i) {
        sum += table.value(LayerColumn::ForwardCompute, i);
        working = std::max(working, table.max_working_bytes(i, i));
      }
      EXPECT_NEAR(table.sum(LayerColumn::ForwardCompute, a, b), sum, 1e-12 * sum);
      EXPECT_DOUBLE_EQ(table.max_working_bytes(a, b), working);
    }
  }
  EXPECT_GT(table.value(LayerColumn::ForwardEp, 1), 0);
  EXPECT_EQ(table.value(LayerColumn::ForwardEp, 0), 0);
}

TEST(LayerTable, FastBeatsFanoutUnderSkewAcrossNodes) {
  const ModelSpec model = test::moe_model();
  ClusterSpec cluster = test::a100_cluster();
  cluster.levels[0].group_size = 2;  // ep = 8 spans 4 nodes
  Execution e = test::moe_execution(AllToAllAlgorithm::Fast);
  e.expert_imbalance = 1.5;
  const ExecutionLayout layout = compute_layout(cluster, e);
  EXPECT_EQ(layout.ep_group.fanout, (std::vector<int>{2, 4, 1}));
  const LayerTable fast = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  e.a2a = AllToAllAlgorithm::Fanout;
  const LayerTable fanout = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  EXPECT_LT(fast.value(LayerColumn::ForwardEp, 1), fanout.value(LayerColumn::ForwardEp, 1));
}

// DeepEP sends a token once per destination node and member: with 8 experts
// top-2 over 4 nodes of 2 members (one expert each) its dispatch is priced by
// all_to_all_deepep_time on the chances expert_range_hit_probability gives,
// and moves fewer bytes across nodes than NCCL's every-copy all-to-all.
TEST(LayerTable, DeepEpPricesTheTokensOncePerNodeAndMember) {
  const ModelSpec model = test::moe_model();
  ClusterSpec cluster = test::a100_cluster();
  cluster.levels[0].group_size = 2;  // ep = 8 spans 4 nodes of one leaf
  Execution e = test::moe_execution(AllToAllAlgorithm::DeepEp);
  const ExecutionLayout layout = compute_layout(cluster, e);
  ASSERT_EQ(layout.ep_group.fanout, (std::vector<int>{2, 4, 1}));
  const LayerTable deepep = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  e.a2a = AllToAllAlgorithm::Fanout;
  const LayerTable fanout = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  // One micro-batch of 2048 tokens, h 2048, bf16: 8 MiB of tokens per device.
  const double tokens = 2048.0 * 2048 * 2;
  const double node = 1 - 15.0 / 28;    // a node's 2 experts: 1 - C(6,2)/C(8,2)
  const double member = 1 - 21.0 / 28;  // one expert: 1 - C(7,2)/C(8,2)
  const DeepEpRouting routing{{node, node, node, node}, member};
  const double one = all_to_all_deepep_time(cluster, layout.ep_group, tokens, routing, 1.0);
  EXPECT_NEAR(deepep.value(LayerColumn::ForwardEp, 1), 2 * one, 1e-12 * one);  // dispatch and combine
  EXPECT_LT(deepep.value(LayerColumn::ForwardEp, 1), fanout.value(LayerColumn::ForwardEp, 1));
}

TEST(LayerTable, ContextParallelSplitsTheSequence) {
  const ModelSpec model = test::gpt_model(4, 4096, 32);
  const ClusterSpec cluster = test::a100_cluster();
  Execution e;
  e.tp = 4;
  e.cp = 2;
  e.global_batch = 1;
  const LayerTable cp2 = build_layer_table(model, cluster, layer_table_config(model, e, compute_layout(cluster, e)));
  e.cp = 1;
  const LayerTable cp1 = build_layer_table(model, cluster, layer_table_config(model, e, compute_layout(cluster, e)));
  EXPECT_NEAR(cp2.value(LayerColumn::StashFull, 1) * 2, cp1.value(LayerColumn::StashFull, 1), 1.0);
  EXPECT_NEAR(cp2.value(LayerColumn::ModelFlops, 1) * 2, cp1.value(LayerColumn::ModelFlops, 1), 1.0);
  EXPECT_LT(cp2.value(LayerColumn::ForwardCompute, 1), cp1.value(LayerColumn::ForwardCompute, 1));
}

}  // namespace
}  // namespace nestfast

namespace nestfast {
namespace {

TEST(LayerWork, FusedAttentionDropsTheScoreMatrix) {
  const ModelSpec model = test::gpt_model(4, 4096, 32);
  Sharding s = shard(8, true, 2);
  s.flash_attention = true;
  const LayerWork fused = layer_work(model, 1, s);
  const double sbh = 2048.0 * 2 * 4096;
  // 34 s b h / t plus the fp32 log-sum-exp per (token, local head).
  EXPECT_DOUBLE_EQ(fused.stash_bytes[0], sbh * 34.0 / 8 + 2048.0 * 2 * 4 * 4);
  // Selective checkpoints the fused core too (Megatron's attention.py:1555):
  // its log-sum-exp is not kept, and its forward runs again.
  EXPECT_DOUBLE_EQ(fused.stash_bytes[0] - fused.stash_bytes[1], 2048.0 * 2 * 4 * 4);
  EXPECT_DOUBLE_EQ(fused.selective_recompute_flops, 2.0 * 2048 * 2048 * 128 * 2 * (2 * 4));
  // QK^T and AV of 2 sequences x 32/8 heads, 2048 x 2048 x 128 each, of
  // which a causal kernel runs (1 + 128/2048)/2 = 17/32.
  EXPECT_DOUBLE_EQ(fused.fused_attention_flops, 2.0 * 2048 * 2048 * 128 * 2 * (2 * 4) * 17.0 / 32);
  Sharding encoder = s;
  encoder.causal = false;
  EXPECT_DOUBLE_EQ(layer_work(model, 1, encoder).fused_attention_flops, 2.0 * 2048 * 2048 * 128 * 2 * (2 * 4));
  const LayerWork unfused = layer_work(model, 1, shard(8, true, 2));
  EXPECT_EQ(unfused.fused_attention_flops, 0);
  EXPECT_EQ(fused.kernels, 10);    // 2 norms, QKV, attention, projection, 2 bias-dropout-adds, FC1, GeLU, FC2
  EXPECT_EQ(unfused.kernels, 13);  // the unfused core is QK^T, softmax, dropout, AV
  EXPECT_LT(fused.attention_hbm_bytes, 0.1 * unfused.attention_hbm_bytes);
  EXPECT_DOUBLE_EQ(fused.model_flops, unfused.model_flops);
}

}  // namespace
}  // namespace nestfast
