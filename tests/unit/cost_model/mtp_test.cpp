// Multi-token prediction in the head's row: what one MTP layer adds (a block
// of the last block's kind, eh_proj, norms, its own loss through the shared
// output layer, the embedding copy), against sums worked out from the
// head's and a block's own work; full recompute runs the MTP layer again, not
// the head; the Megatron line carries --mtp-num-layers and 'm' in its layout.
#include <gtest/gtest.h>

#include "solver/model/layer_work.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/megatron_args.hpp"
#include "test_specs.hpp"

namespace nestfast {
namespace {

Sharding shard() {
  Sharding s;
  s.seq_len = 2048;
  s.flash_attention = true;
  return s;
}

TEST(MultiTokenPrediction, TheHeadRowHoldsTheMtpLayer) {
  ModelSpec model = test::moe_model();  // 8 MoE blocks, h 2048, SwiGLU experts
  const int head = model.num_layers + 1;
  const LayerWork plain_head = layer_work(model, head, shard());
  const LayerWork block = layer_work(model, model.num_layers, shard());
  model.mtp_layers = 1;
  const LayerWork with_mtp = layer_work(model, head, shard());
  const LayerWork mtp = mtp_work(model, shard());
  const double h = 2048, t = 2048, e = 2, vocab = 51200;
  // Parameters: the block's, eh_proj (2h x h), hnorm + enorm (h each: the
  // SwiGLU model's RMSNorm), the MTP's final norm, and one embedding copy;
  // the output weights are the head's.
  const double norm = h;
  EXPECT_DOUBLE_EQ(mtp.dense_params, block.dense_params + 2 * h * h + 2 * norm + norm + vocab * h);
  EXPECT_DOUBLE_EQ(mtp.expert_params, block.expert_params);
  EXPECT_DOUBLE_EQ(with_mtp.dense_params, plain_head.dense_params + mtp.dense_params);
  // Model FLOPs: the block's, eh_proj's (2 t 2h h, three times) and another
  // output layer's (the head's).
  EXPECT_DOUBLE_EQ(mtp.model_flops, block.model_flops + 3 * 2 * t * 2 * h * h + plain_head.model_flops);
  // Stash: the block's, the norms' and eh_proj's inputs (4 t h), the MTP loss's.
  EXPECT_DOUBLE_EQ(mtp.stash_bytes[0], block.stash_bytes[0] + 4 * t * h * e + plain_head.stash_bytes[0]);
  // Its attention, all-to-alls and selective recompute are the block's.
  EXPECT_DOUBLE_EQ(with_mtp.fused_attention_flops, block.fused_attention_flops);
  EXPECT_EQ(with_mtp.ep_all_to_alls_forward, block.ep_all_to_alls_forward);
  EXPECT_TRUE(with_mtp.selective.attention_core);
  // The chain's parameter count keeps one embedding: the copy is not counted twice.
  ModelSpec main = model;
  main.mtp_layers = 0;
  EXPECT_DOUBLE_EQ(total_parameters(model) - total_parameters(main),
                   mtp.dense_params + mtp.expert_params - vocab * h);
}

TEST(MultiTokenPrediction, FullRecomputeRunsTheMtpLayerAgainNotTheHead) {
  ModelSpec model = test::moe_model();
  const ClusterSpec cluster = test::a100_cluster();
  const Execution e = test::moe_execution(AllToAllAlgorithm::Fanout);
  const ExecutionLayout layout = compute_layout(cluster, e);
  const int head = model.num_layers + 1;
  const LayerTable plain = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  EXPECT_EQ(plain.value(LayerColumn::RecomputeFull, head), 0);
  model.mtp_layers = 1;
  const LayerTable mtp = build_layer_table(model, cluster, layer_table_config(model, e, layout));
  const double again = mtp.value(LayerColumn::RecomputeFull, head);
  // More than the block's own forward (eh_proj, the norms and the MTP loss
  // ride along), less than the whole row's forward (the main head's loss is
  // not run again).
  EXPECT_GT(again, plain.value(LayerColumn::RecomputeFull, model.num_layers));
  EXPECT_LT(again, mtp.value(LayerColumn::ForwardCompute, head) + mtp.value(LayerColumn::ForwardEp, head) +
                       mtp.value(LayerColumn::ForwardTp, head));
  EXPECT_GT(mtp.value(LayerColumn::RecomputeSelective, head), 0);  // the MTP block's core attention
  EXPECT_GT(mtp.value(LayerColumn::ForwardEp, head), 0);
}

TEST(MultiTokenPrediction, TheLineCarriesItBeforeTheLoss) {
  ModelSpec model = test::moe_model();
  model.mtp_layers = 1;
  const ClusterSpec cluster = test::a100_cluster();
  Execution e;
  e.framework = Framework::MegatronCore;
  e.pp = 2;
  e.dp = 4;
  e.ep = 4;
  e.global_batch = 8;
  e.a2a = AllToAllAlgorithm::Fanout;
  const ExecutionLayout layout = compute_layout(cluster, e);
  e.stages = {{0, 3}, {4, 9}};  // uneven: a layout
  derive_stage_layout(layout, e);
  const search::MegatronArguments line = search::megatron_arguments(model, e);
  EXPECT_NE(line.arguments.find("--mtp-num-layers 1"), std::string::npos) << line.arguments;
  EXPECT_NE(line.arguments.find("--pipeline-model-parallel-layout \"Et*3|t*5mL\""), std::string::npos) << line.arguments;
}

}  // namespace
}  // namespace nestfast
