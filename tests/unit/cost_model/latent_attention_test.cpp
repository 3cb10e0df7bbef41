// Multi-head latent attention's layer work against hand-computed DeepSeek-V3
// shapes (config.json: hidden 7168, 128 heads, q_lora_rank 1536,
// kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128).
#include <gtest/gtest.h>

#include "io/presets/presets.hpp"
#include "solver/model/layer_work.hpp"

namespace nestfast {
namespace {

ModelSpec deepseek_like() {
  ModelSpec model;
  model.name = "test-mla";
  model.num_layers = 4;
  model.hidden = 7168;
  model.ffn_hidden = 18432;
  model.heads = 128;
  model.kv_heads = 128;
  model.head_dim = 128;
  model.vocab = 129280;
  model.seq_len = 4096;
  model.mlp = MlpKind::Swiglu;
  model.dropout = false;
  model.attention = AttentionKind::MultiLatent;
  model.mla = {1536, 512, 128, 64, 128};
  return model;
}

Sharding shard(int tp, bool sp, bool flash = true) {
  Sharding s;
  s.tp = tp;
  s.sp = sp;
  s.seq_len = 4096;
  s.flash_attention = flash;
  return s;
}

constexpr double h = 7168, heads = 128, t = 4096, e = 2;
// W^DQ, W^DKV (with the rotary key), the two latent RMSNorms; W^UQ, W^UK + W^UV, W^O.
constexpr double kDown = h * 1536 + h * (512 + 64) + 1536 + 512;
constexpr double kUp = 1536 * heads * 192 + 512 * heads * (128 + 128) + heads * 128 * h;

TEST(LatentAttention, ParametersSplitAsMegatronShardsThem) {
  const ModelSpec model = deepseek_like();
  const double mlp = 3 * h * 18432, norms = 2 * h;
  EXPECT_DOUBLE_EQ(layer_work(model, 1, shard(1, false)).dense_params, kDown + kUp + mlp + norms);
  EXPECT_DOUBLE_EQ(kDown + kUp, 187107328);  // vs 205,520,896 for MHA at head_dim 56 (the old preset)
  // tp 8: the down projections and latent norms whole on every rank, the rest split.
  EXPECT_DOUBLE_EQ(layer_work(model, 1, shard(8, true)).dense_params, kDown + kUp / 8 + mlp / 8 + norms);
}

TEST(LatentAttention, FlopsUseTheWideQueryKeyHeadsAndTheNarrowValueHeads) {
  const ModelSpec model = deepseek_like();
  const LayerWork one = layer_work(model, 1, shard(1, false));
  const double weights = kDown - 1536 - 512 + kUp + 3 * h * 18432;
  // QK^T at 192 per head, attention x V at 128 (full s^2: model FLOPs).
  const double core = 2 * t * t * heads * (192 + 128);
  EXPECT_DOUBLE_EQ(one.model_flops, 3 * (2 * t * weights + core));
  // Fused: a causal kernel runs (1 + 128/4096)/2 of the score blocks.
  EXPECT_DOUBLE_EQ(one.fused_attention_flops, core * 0.5 * (1 + 128.0 / 4096));
  // With sp each tp rank runs the down projections on its sequence share: the
  // model's FLOPs split evenly. Without sp every rank repeats them whole, which
  // is executed but not model work.
  const LayerWork sp = layer_work(model, 1, shard(8, true));
  EXPECT_NEAR(8 * sp.model_flops / one.model_flops, 1.0, 1e-12);
  const LayerWork no_sp = layer_work(model, 1, shard(8, false));
  EXPECT_NEAR(8 * no_sp.model_flops / one.model_flops, 1.0, 1e-12);
  const double repeated = 2 * (t - t / 8) * h * (1536 + 512 + 64);
  EXPECT_NEAR(no_sp.full_recompute_flops - sp.full_recompute_flops, repeated, 1.0);
}

TEST(LatentAttention, StashKeepsTheLatentsAndQueryKeyValueAtTheirWidths) {
  const ModelSpec model = deepseek_like();
  const LayerWork one = layer_work(model, 1, shard(1, false));
  // Norm inputs, the down-projection input and the MLP input (4 h); each latent
  // twice (norm input, normed up-projection input); Q, K at 192 and V, O at 128
  // per head; the fp32 log-sum-exp per head; SwiGLU's gate, up and product.
  const double expected = t * h * 4 * e + t * 2 * (1536 + 512) * e + t * heads * (2 * 192 + 2 * 128) * e +
                          t * heads * 4 + t * 3 * 18432 * e;
  EXPECT_DOUBLE_EQ(one.stash_bytes[0], expected);
  // Selective checkpoints the fused core too (attention.py:1555): its log-sum-exp goes.
  EXPECT_DOUBLE_EQ(one.stash_bytes[1], expected - t * heads * 4);
  EXPECT_DOUBLE_EQ(one.stash_bytes[2], t * h * e);
  // Unfused: the s x s softmax output per head on top.
  const LayerWork unfused = layer_work(model, 1, shard(1, false, false));
  EXPECT_DOUBLE_EQ(unfused.stash_bytes[0], expected - t * heads * 4 + t * heads * t * e);
  EXPECT_DOUBLE_EQ(unfused.stash_bytes[1], expected - t * heads * 4);
}

TEST(LatentAttention, TensorParallelTrafficMovesTheLatentsNotTheHiddenState) {
  const ModelSpec model = deepseek_like();
  // sp: the latents and the rotary key gathered forward (reduce-scattered
  // backward), linear_proj's reduce-scatter of h, and the MLP's pair.
  const LayerWork sp = layer_work(model, 1, shard(8, true));
  EXPECT_DOUBLE_EQ(sp.tp_bytes, t * h * e);
  EXPECT_DOUBLE_EQ(sp.tp_collectives_forward, 1.5);
  EXPECT_DOUBLE_EQ(sp.tp_collectives_backward, 1.5);
  EXPECT_DOUBLE_EQ(sp.tp_latent_bytes, t * (1536 + 512 + 64) * e);
  EXPECT_DOUBLE_EQ(sp.tp_latent_collectives_forward, 0.5);
  EXPECT_DOUBLE_EQ(sp.tp_latent_collectives_backward, 0.5);
  // No sp: linear_proj all-reduces forward; backward the up projections
  // all-reduce the latents' gradients (the rotary key is computed whole).
  const LayerWork plain = layer_work(model, 1, shard(8, false));
  EXPECT_DOUBLE_EQ(plain.tp_collectives_forward, 2);
  EXPECT_DOUBLE_EQ(plain.tp_collectives_backward, 1);
  EXPECT_DOUBLE_EQ(plain.tp_latent_bytes, t * (1536 + 512) * e);
  EXPECT_DOUBLE_EQ(plain.tp_latent_collectives_forward, 0);
  EXPECT_DOUBLE_EQ(plain.tp_latent_collectives_backward, 1);
  // Ring attention would pass K (192) and V (128) per local head.
  EXPECT_DOUBLE_EQ(sp.cp_kv_bytes, t * heads * (192 + 128) / 8 * e);
}

TEST(LatentAttention, DeepSeekV3HasItsPublishedParameterCount) {
  // Report: 671B in total for the main model; the MTP layer's own weights
  // apart (it shares the embedding and the output layer).
  const ModelSpec with_mtp = io::load_model("deepseek-v3");
  ASSERT_EQ(with_mtp.mtp_layers, 1);
  ModelSpec main = with_mtp;
  main.mtp_layers = 0;
  const double total = total_parameters(main);
  EXPECT_NEAR(total / 671e9, 1.0, 0.005) << total;
  // The MTP layer: an MoE block (MLA, 2 norms, the router, 256 routed and 1
  // shared expert of 3 h 2048), eh_proj (2h x h) and 3 norms (hnorm, enorm, final).
  const double block = kDown + kUp + 2 * h + h * 256 + 257 * 3 * h * 2048;
  EXPECT_DOUBLE_EQ(total_parameters(with_mtp) - total, block + 2 * h * h + 3 * h);
}

TEST(LatentAttention, QueryGroupsAreRefused) {
  ModelSpec model = deepseek_like();
  model.kv_heads = 8;
  EXPECT_THROW(validate_model(model), std::invalid_argument);
  model.kv_heads = 128;
  model.mla.kv_lora_rank = 0;
  EXPECT_THROW(validate_model(model), std::invalid_argument);
}

}  // namespace
}  // namespace nestfast
