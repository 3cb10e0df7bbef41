// Selective recompute by module (Megatron-Core's --recompute-modules): what
// each module drops from a block's stash and runs again, against bytes and
// FLOPs worked out by hand, and the default set (core_attn) pricing exactly
// what selective recompute priced before modules existed.
#include <gtest/gtest.h>

#include "solver/model/layer_work.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "test_specs.hpp"

namespace nestfast {
namespace {

Sharding shard(RecomputeModules modules, int tp = 1, bool sp = false) {
  Sharding s;
  s.tp = tp;
  s.sp = sp;
  s.seq_len = 2048;
  s.flash_attention = true;
  s.recompute_modules = modules;
  return s;
}

RecomputeModules with(std::initializer_list<RecomputeModule> modules) {
  RecomputeModules set = 0;
  for (RecomputeModule m : modules) set |= module_bit(m);
  return set;
}

constexpr double t = 2048, e = 2, fp32 = 4;

TEST(RecomputeModules, NamesRoundTripInMegatronsOrder) {
  const RecomputeModules set = parse_recompute_modules("moe_act,core_attn layernorm", "--recompute-modules");
  EXPECT_EQ(set, with({RecomputeModule::CoreAttn, RecomputeModule::Layernorm, RecomputeModule::MoeAct}));
  EXPECT_EQ(to_string_modules(set), "core_attn,layernorm,moe_act");
  EXPECT_THROW(parse_recompute_modules("core_attn,attention", "--recompute-modules"), std::invalid_argument);
  EXPECT_THROW(parse_recompute_modules("moe,moe", "--recompute-modules"), std::invalid_argument);
  EXPECT_THROW(parse_recompute_modules(" ", "--recompute-modules"), std::invalid_argument);
  // What applies: a dense GPT has core_attn and mlp; the test MoE model (all
  // blocks MoE, no shared experts) core_attn, layernorm, moe_act and moe.
  EXPECT_EQ(modules_that_apply(test::gpt_model(2, 1024, 16)), with({RecomputeModule::CoreAttn, RecomputeModule::Mlp}));
  EXPECT_EQ(modules_that_apply(test::moe_model()), with({RecomputeModule::CoreAttn, RecomputeModule::Layernorm,
                                                         RecomputeModule::MoeAct, RecomputeModule::Moe}));
}

// A GPT block (h 1024, 16 heads, GeLU 4h, dropout masks), tp 1, fused attention.
TEST(RecomputeModules, DenseBlockCoreAttentionAndMlp) {
  const ModelSpec model = test::gpt_model(2, 1024, 16);
  const double h = 1024, f = 4096, heads = 16;
  const LayerWork none = layer_work(model, 1, shard(kDefaultRecomputeModules));
  const double core = t * heads * fp32;  // the fused kernel's log-sum-exp
  EXPECT_DOUBLE_EQ(none.stash_bytes[1], none.stash_bytes[0] - core);
  EXPECT_TRUE(none.selective.attention_core);
  EXPECT_TRUE(none.selective.gemms.empty());
  // mlp: its GeLU input and output (2 f) and the first linear's input (h) go;
  // its two GEMMs, the bias-GeLU (read f, write f) and its TP unit run again.
  const LayerWork mlp = layer_work(model, 1, shard(with({RecomputeModule::CoreAttn, RecomputeModule::Mlp})));
  EXPECT_DOUBLE_EQ(mlp.stash_bytes[1], none.stash_bytes[0] - core - t * 2 * f * e - t * h * e);
  ASSERT_EQ(mlp.selective.gemms.size(), 1u);
  EXPECT_DOUBLE_EQ(mlp.selective.gemms[0].flops, 2 * t * h * f);
  EXPECT_DOUBLE_EQ(mlp.selective.gemms[0].count, 2);
  EXPECT_DOUBLE_EQ(mlp.selective.hbm_bytes, t * 2 * f * e);
  EXPECT_DOUBLE_EQ(mlp.selective.tp_units, 1);
  EXPECT_DOUBLE_EQ(mlp.selective_recompute_flops, none.selective_recompute_flops + 2 * 2 * t * h * f);
  // Without core_attn the core's own stash stays and the core is not run again.
  const LayerWork only_mlp = layer_work(model, 1, shard(with({RecomputeModule::Mlp})));
  EXPECT_DOUBLE_EQ(only_mlp.stash_bytes[1], mlp.stash_bytes[1] + core);
  EXPECT_FALSE(only_mlp.selective.attention_core);
  // layernorm changes nothing here: TransformerEngine fuses both norms into the linears.
  const LayerWork norms = layer_work(model, 1, shard(with({RecomputeModule::CoreAttn, RecomputeModule::Layernorm})));
  EXPECT_DOUBLE_EQ(norms.stash_bytes[1], none.stash_bytes[1]);
  EXPECT_DOUBLE_EQ(norms.selective.hbm_bytes, 0);
}

// The test MoE block: h 2048, 16 heads (4 KV groups), 8 SwiGLU experts of
// 4096, top-2, no dropout masks... (gpt_model keeps dropout on: 1-byte masks).
TEST(RecomputeModules, MoeBlockNormActAndTheWholeLayer) {
  const ModelSpec model = test::moe_model();
  const double h = 2048, width = 4096, k = 2, experts = 8;
  const LayerWork base = layer_work(model, 1, shard(kDefaultRecomputeModules));
  // layernorm: the pre-MLP norm is a module of its own in an MoE block; its
  // output (t h) goes and the norm runs again (read h, write h per token).
  const LayerWork norm = layer_work(model, 1, shard(with({RecomputeModule::CoreAttn, RecomputeModule::Layernorm})));
  EXPECT_DOUBLE_EQ(norm.stash_bytes[1], base.stash_bytes[1] - t * h * e);
  EXPECT_DOUBLE_EQ(norm.selective.hbm_bytes, 2 * t * h * e);
  EXPECT_DOUBLE_EQ(norm.selective.kernels, 1);
  // moe_act: the activation's output, one `width` per token copy (k t copies),
  // goes; SwiGLU runs again (read 2 width, write width).
  const LayerWork act = layer_work(model, 1, shard(with({RecomputeModule::CoreAttn, RecomputeModule::MoeAct})));
  EXPECT_DOUBLE_EQ(act.stash_bytes[1], base.stash_bytes[1] - k * t * width * e);
  EXPECT_DOUBLE_EQ(act.selective.hbm_bytes, k * t * 3 * width * e);
  EXPECT_DOUBLE_EQ(act.selective_recompute_flops, base.selective_recompute_flops);  // no GEMM
  // moe: everything of the MLP half but its input goes (the k t copies with
  // their 3 widths, the router's fp32 scores); router, experts, both
  // all-to-alls run again.
  const LayerWork moe = layer_work(model, 1, shard(with({RecomputeModule::CoreAttn, RecomputeModule::Moe})));
  const double routed = k * t * (h * e + 3 * width * e), router = t * experts * fp32;
  EXPECT_DOUBLE_EQ(moe.stash_bytes[1], base.stash_bytes[1] - routed - router);
  EXPECT_EQ(moe.selective.ep_all_to_alls, 2);
  ASSERT_EQ(moe.selective.gemms.size(), 3u);  // router, gate+up, down
  EXPECT_DOUBLE_EQ(moe.selective.gemms[0].flops, 2 * t * h * experts);
  const double expert_flops = 2 * (k * t / experts) * h * 2 * width * experts + 2 * (k * t / experts) * width * h * experts;
  EXPECT_DOUBLE_EQ(moe.selective_recompute_flops - base.selective_recompute_flops, 2 * t * h * experts + expert_flops);
  // moe takes moe_act in: listing both drops nothing more.
  const LayerWork both =
      layer_work(model, 1, shard(with({RecomputeModule::CoreAttn, RecomputeModule::Moe, RecomputeModule::MoeAct})));
  EXPECT_DOUBLE_EQ(both.stash_bytes[1], moe.stash_bytes[1]);
}

// Multi-head latent attention (DeepSeek-V3's widths, 16 heads): mla_up_proj
// drops Q, K (192 per head), V (128) and one copy of each latent, and runs
// the two up projections again with their latent gather under sp.
TEST(RecomputeModules, LatentUpProjections) {
  ModelSpec model = test::gpt_model(2, 7168, 16, 2048);
  model.mlp = MlpKind::Swiglu;
  model.ffn_hidden = 18432;
  model.dropout = false;
  model.attention = AttentionKind::MultiLatent;
  model.mla = {1536, 512, 128, 64, 128};
  model.head_dim = 128;
  const double heads = 16, q_lora = 1536, kv_lora = 512;
  const LayerWork base = layer_work(model, 1, shard(kDefaultRecomputeModules, 2, true));
  const LayerWork up = layer_work(model, 1, shard(with({RecomputeModule::CoreAttn, RecomputeModule::MlaUpProj}), 2, true));
  const double qkv = t * (heads / 2) * (192 + 192 + 128) * e, latent = t / 2 * (q_lora + kv_lora) * e;
  EXPECT_DOUBLE_EQ(up.stash_bytes[1], base.stash_bytes[1] - qkv - latent);
  ASSERT_EQ(up.selective.gemms.size(), 2u);
  EXPECT_DOUBLE_EQ(up.selective.gemms[0].flops, 2 * t * q_lora * (heads / 2) * 192);
  EXPECT_DOUBLE_EQ(up.selective.gemms[1].flops, 2 * t * kv_lora * (heads / 2) * (128 + 128));
  EXPECT_DOUBLE_EQ(up.selective.tp_latent_units, 0.5);  // the latents' all-gather
  // layernorm: MLA's input norm is a module of its own (the dense block's
  // pre-MLP norm is fused): one t h / tp share.
  const LayerWork norm = layer_work(model, 1, shard(with({RecomputeModule::CoreAttn, RecomputeModule::Layernorm}), 2, true));
  EXPECT_DOUBLE_EQ(norm.stash_bytes[1], base.stash_bytes[1] - t / 2 * 7168 * e);
}

// The layer table prices what the modules run again: moe_act's SwiGLU is
// HBM-bound, priced at the GPU's HBM rate with one kernel's overhead, on top
// of the core attention's forward.
TEST(RecomputeModules, LayerTablePricesTheRecomputedModules) {
  const ModelSpec model = test::moe_model();
  const ClusterSpec cluster = test::a100_cluster();
  Execution exec = test::moe_execution(AllToAllAlgorithm::Fanout);
  const ExecutionLayout layout = compute_layout(cluster, exec);
  const LayerTable base = build_layer_table(model, cluster, layer_table_config(model, exec, layout));
  exec.recompute_modules = with({RecomputeModule::CoreAttn, RecomputeModule::MoeAct});
  const LayerTable act = build_layer_table(model, cluster, layer_table_config(model, exec, layout));
  const double bytes = 2 * 2048.0 * 3 * 4096 * 2;  // k t copies, read 2 width, write width, bf16
  const double hbm = bytes / (cluster.gpu.hbm_bandwidth_Bps * cluster.gpu.hbm_efficiency);
  EXPECT_NEAR(act.value(LayerColumn::RecomputeSelective, 1) - base.value(LayerColumn::RecomputeSelective, 1),
              hbm + cluster.gpu.kernel_overhead_s, 1e-12);
  // moe: both all-to-alls again, priced as the forward's.
  exec.recompute_modules = with({RecomputeModule::CoreAttn, RecomputeModule::Moe});
  const LayerTable moe = build_layer_table(model, cluster, layer_table_config(model, exec, layout));
  EXPECT_GT(moe.value(LayerColumn::RecomputeSelective, 1) - base.value(LayerColumn::RecomputeSelective, 1),
            base.value(LayerColumn::ForwardEp, 1));
  EXPECT_LT(moe.value(LayerColumn::StashSelective, 1), act.value(LayerColumn::StashSelective, 1));
}

}  // namespace
}  // namespace nestfast
