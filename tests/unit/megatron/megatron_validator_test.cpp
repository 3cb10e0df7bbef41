// The validator can fail, and Megatron's expert grid is what the price uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "solver/search/execution_layout.hpp"
#include "solver/search/megatron_args.hpp"
#include "solver/search/megatron_rules.hpp"
#include "tests/unit/megatron/megatron_line.hpp"

namespace nestfast::megatron_test {
namespace {

ModelSpec moe_model() {
  ModelSpec model;
  model.name = "test-moe";
  model.num_layers = 8;
  model.hidden = 1024;
  model.ffn_hidden = 4096;
  model.heads = 16;
  model.kv_heads = 16;
  model.head_dim = 64;
  model.vocab = 32000;
  model.seq_len = 4096;
  model.mlp = MlpKind::Swiglu;
  model.moe.num_experts = 8;
  model.moe.top_k = 2;
  model.moe.expert_ffn_hidden = 1024;
  return model;
}

// Two GPUs per node, four nodes per rack, racks unbounded.
ClusterSpec small_cluster() {
  ClusterSpec cluster;
  cluster.name = "test";
  cluster.gpu.hbm_bytes = 80ull << 30;
  cluster.levels = {{"node", 2, 100e9, 1e-6, 1, 1, {}}, {"rack", 4, 25e9, 5e-6, 1, 1, {}}, {"spine", 0, 12e9, 1e-5, 1, 1, {}}};
  return cluster;
}

Execution plan(int tp, int cp, int ep, int pp, int dp, Framework framework) {
  Execution e;
  e.framework = framework;
  e.tp = tp;
  e.cp = cp;
  e.ep = ep;
  e.pp = pp;
  e.dp = dp;
  e.sp = tp > 1;
  e.attention = Attention::Flash;
  e.micro_batch = 1;
  e.global_batch = 64;
  // What each framework's plans run (search::plan_all_to_all): FAST for
  // Nest's, the alltoall dispatcher for Megatron-Core's.
  e.a2a = framework == Framework::MegatronCore ? AllToAllAlgorithm::Fanout : AllToAllAlgorithm::Fast;
  return e;
}

bool mentions(const std::vector<std::string>& problems, search::MegatronRule rule) {
  const std::string text = search::describe(rule);
  return std::find(problems.begin(), problems.end(), text) != problems.end();
}

TEST(MegatronValidator, RejectsFlagsUpstreamDoesNotHave) {
  const ParsedLine line = parse_line("--tensor-model-parallel-size 2 --use-custom-fsdp --recompute-method sometimes");
  ASSERT_EQ(line.problems.size(), 2u);
  EXPECT_NE(line.problems[0].find("--use-custom-fsdp"), std::string::npos);
  EXPECT_NE(line.problems[1].find("sometimes"), std::string::npos);
}

// A value is one of a flag's '|'-separated choices whole, never a part of one.
TEST(MegatronValidator, ChoicesAreWholeNames) {
  const search::MegatronFlag& modules = *search::megatron_flag("--recompute-modules");
  EXPECT_TRUE(search::is_choice(modules, "core_attn"));       // the first
  EXPECT_TRUE(search::is_choice(modules, "moe"));             // inside, and a prefix of moe_act
  EXPECT_TRUE(search::is_choice(modules, "shared_experts"));  // the last
  for (const char* value : {"", "core", "moe_", "attn", "core_attn|moe_act", "CORE_ATTN"})
    EXPECT_FALSE(search::is_choice(modules, value)) << value;
  EXPECT_FALSE(search::is_choice(*search::megatron_flag("--bf16"), ""));  // a switch has no choices
}

TEST(MegatronValidator, FindsBrokenRulesInAHandWrittenLine) {
  const ModelSpec model = moe_model();
  search::MegatronArguments emitted;
  emitted.arguments =
      "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --context-parallel-size 2 "
      "--expert-model-parallel-size 3 --micro-batch-size 1 --global-batch-size 9 --seq-length 4096 "
      "--max-position-embeddings 4096 --num-layers 8 --hidden-size 1024 --ffn-hidden-size 4096 "
      "--num-attention-heads 16 --num-experts 8 --moe-ffn-hidden-size 1024 --attention-backend unfused "
      "--recompute-granularity full --use-megatron-fsdp --use-tp-pp-dp-mapping";
  const std::vector<std::string> problems = validate_line(model, 16, emitted);
  using search::MegatronRule;
  for (MegatronRule rule : {MegatronRule::ExpertsDivisibleByEp, MegatronRule::MoeTpNeedsSequenceParallel,
                            MegatronRule::CpNeedsFusedAttention, MegatronRule::GlobalBatchDivisible,
                            MegatronRule::FullRecomputeNeedsMethod, MegatronRule::FsdpCheckpointFormat,
                            MegatronRule::FsdpWithoutPipeline, MegatronRule::ExpertGridDividesWorld})
    EXPECT_TRUE(mentions(problems, rule)) << search::describe(rule);
  // tp-pp-dp with cp = 2 and ep = 1: the expert grid's pipeline groups differ from the dense grid's.
  emitted.arguments =
      "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --context-parallel-size 2 "
      "--expert-model-parallel-size 1 --sequence-parallel --micro-batch-size 1 --global-batch-size 8 "
      "--seq-length 4096 --max-position-embeddings 4096 --num-layers 8 --hidden-size 1024 --ffn-hidden-size 4096 "
      "--num-attention-heads 16 --num-experts 8 --moe-ffn-hidden-size 1024 --attention-backend flash "
      "--use-tp-pp-dp-mapping";
  emitted.environment = {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
  const std::vector<std::string> mapping = validate_line(model, 16, emitted);
  ASSERT_FALSE(mapping.empty());
  for (const std::string& problem : mapping) EXPECT_EQ(problem, search::describe(MegatronRule::TpPpDpMappingGroups));
}

// Expert parallelism runs through one of Megatron's dispatchers; the flex
// dispatcher with DeepEP only over DeepEP's configured group sizes.
TEST(MegatronValidator, DispatchersAndDeepEpGroupSizes) {
  const ModelSpec model = moe_model();  // 8 experts
  search::MegatronArguments emitted;
  const std::string common =
      "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --micro-batch-size 1 --global-batch-size 16 "
      "--seq-length 4096 --max-position-embeddings 4096 --num-layers 8 --hidden-size 1024 --ffn-hidden-size 4096 "
      "--num-attention-heads 16 --num-experts 8 --moe-ffn-hidden-size 1024 --attention-backend flash --bf16 ";
  using search::MegatronRule;
  emitted.arguments = common + "--expert-model-parallel-size 8 --moe-token-dispatcher-type allgather";
  EXPECT_TRUE(mentions(validate_line(model, 16, emitted), MegatronRule::MoeDispatcher));
  emitted.arguments = common + "--expert-model-parallel-size 8 --moe-token-dispatcher-type flex "
                               "--moe-flex-dispatcher-backend deepep --moe-router-dtype fp32";
  EXPECT_TRUE(validate_line(model, 16, emitted).empty());
  EXPECT_EQ(plan_of_line(model, 16, parse_line(emitted.arguments)).a2a, AllToAllAlgorithm::DeepEp);
  // 8 experts over ep 8 x expert-tp 2 = 16 ranks is a DeepEP size; ep 4 x
  // expert-tp 3 is not a grid at all, ep 8 x expert-tp 1 on 16 ranks is.
  ModelSpec many = model;
  many.moe.num_experts = 24;
  emitted.arguments = common + "--expert-model-parallel-size 12 --moe-token-dispatcher-type flex";
  const std::vector<std::string> twelve = validate_line(many, 24, emitted);
  EXPECT_TRUE(mentions(twelve, MegatronRule::DeepEpGroupSize));
  // The same 12-rank group dispatches through alltoall without objection.
  emitted.arguments = common + "--expert-model-parallel-size 12 --moe-token-dispatcher-type alltoall";
  EXPECT_FALSE(mentions(validate_line(many, 24, emitted), MegatronRule::DeepEpGroupSize));
  EXPECT_FALSE(mentions(validate_line(many, 24, emitted), MegatronRule::MoeDispatcher));
}

// Selective recompute of more than core_attn: the line lists the modules
// (nargs '+'), the validator reads them back, and Megatron's refusals hold:
// moe_act without grouped-GEMM experts, and the EP all-to-all overlap beside
// moe (effective_overlap drops it, so the line does not ask for both).
TEST(MegatronValidator, RecomputeModulesOnTheLine) {
  const ModelSpec model = moe_model();
  Execution e = plan(2, 1, 8, 1, 8, Framework::MegatronCore);
  e.recompute_modules = parse_recompute_modules("core_attn,layernorm,moe_act", "test");
  e.stages = uniform_stages(model, compute_layout(small_cluster(), e), 1, 1, Recompute::Selective);
  const search::MegatronArguments emitted = search::megatron_arguments(model, e);
  EXPECT_NE(emitted.arguments.find("--recompute-granularity selective --recompute-modules core_attn layernorm moe_act"),
            std::string::npos)
      << emitted.arguments;
  EXPECT_TRUE(validate_line(model, 16, emitted).empty());
  EXPECT_EQ(plan_of_line(model, 16, parse_line(emitted.arguments)).recompute_modules, e.recompute_modules);
  // The default set is not spelled out.
  e.recompute_modules = kDefaultRecomputeModules;
  EXPECT_EQ(search::megatron_arguments(model, e).arguments.find("--recompute-modules"), std::string::npos);
  // moe beside the all-to-all overlap: not run together.
  e.recompute_modules = parse_recompute_modules("core_attn,moe", "test");
  EXPECT_FALSE(effective_overlap(e).moe_a2a);
  const search::MegatronArguments whole = search::megatron_arguments(model, e);
  EXPECT_EQ(whole.arguments.find("--overlap-moe-expert-parallel-comm"), std::string::npos);
  EXPECT_TRUE(validate_line(model, 16, whole).empty());
  // moe_act on a dense model, mla_up_proj without MLA: refused by the rules and on a line.
  ModelSpec dense = model;
  dense.moe = {};
  Execution d = plan(2, 1, 1, 1, 8, Framework::MegatronCore);
  d.recompute_modules = parse_recompute_modules("core_attn,moe_act", "test");
  d.stages = uniform_stages(dense, compute_layout(small_cluster(), d), 1, 1, Recompute::Selective);
  const std::vector<search::MegatronRule> broken = search::megatron_violations(dense, d);
  EXPECT_NE(std::find(broken.begin(), broken.end(), search::MegatronRule::RecomputeModulesApply), broken.end());
  search::MegatronArguments hand;
  hand.arguments =
      "--tensor-model-parallel-size 2 --sequence-parallel --micro-batch-size 1 --global-batch-size 64 --seq-length 4096 "
      "--max-position-embeddings 4096 --num-layers 8 --hidden-size 1024 --ffn-hidden-size 4096 --num-attention-heads 16 "
      "--attention-backend flash --bf16 --recompute-granularity selective --recompute-modules core_attn mla_up_proj";
  hand.environment = {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
  EXPECT_TRUE(mentions(validate_line(dense, 16, hand), search::MegatronRule::RecomputeModulesApply));
  hand.arguments += " bogus_module";
  EXPECT_FALSE(parse_line(hand.arguments).problems.empty());
}

TEST(MegatronValidator, OverlapFlagsNeedWhatUpstreamAsserts) {
  const ModelSpec model = moe_model();
  search::MegatronArguments emitted;
  // Weight-gather overlap without the distributed optimizer or --overlap-grad-reduce, TP overlap
  // without sp, the EP all-to-all overlap with the default (all-gather) dispatcher and pp 2 without
  // a virtual pipeline, blocking interleaved p2p at pp 2.
  emitted.arguments =
      "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --expert-model-parallel-size 2 "
      "--micro-batch-size 1 --global-batch-size 8 --seq-length 4096 --max-position-embeddings 4096 "
      "--num-layers 8 --hidden-size 1024 --ffn-hidden-size 4096 --num-attention-heads 16 --num-experts 8 "
      "--moe-ffn-hidden-size 1024 --attention-backend flash --bf16 --overlap-param-gather --tp-comm-overlap "
      "--overlap-moe-expert-parallel-comm --moe-shared-expert-intermediate-size 1024 --moe-shared-expert-overlap";
  emitted.environment = {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
  std::vector<std::string> problems = validate_line(model, 16, emitted);
  using search::MegatronRule;
  for (MegatronRule rule : {MegatronRule::ParamGatherOverlap, MegatronRule::TpCommOverlap, MegatronRule::MoeA2aOverlap,
                            MegatronRule::MoeSharedExpertOverlap, MegatronRule::MoeA2aConnections})
    EXPECT_TRUE(mentions(problems, rule)) << search::describe(rule);
  // The shared-expert overlap beside the shared_experts recompute module, with the alltoall dispatcher.
  emitted.arguments =
      "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 2 --expert-model-parallel-size 8 "
      "--micro-batch-size 1 --global-batch-size 8 --seq-length 4096 --max-position-embeddings 4096 "
      "--num-layers 8 --hidden-size 1024 --ffn-hidden-size 4096 --num-attention-heads 16 --num-experts 8 "
      "--moe-ffn-hidden-size 1024 --moe-shared-expert-intermediate-size 1024 --moe-token-dispatcher-type alltoall "
      "--attention-backend flash --bf16 --moe-shared-expert-overlap --recompute-granularity selective "
      "--recompute-modules shared_experts";
  EXPECT_TRUE(mentions(validate_line(model, 16, emitted), MegatronRule::MoeSharedExpertOverlap));
  // Delayed weight gradients without the EP all-to-all overlap.
  emitted.arguments =
      "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --expert-model-parallel-size 8 "
      "--micro-batch-size 1 --global-batch-size 8 --seq-length 4096 --max-position-embeddings 4096 "
      "--num-layers 8 --hidden-size 1024 --ffn-hidden-size 4096 --num-attention-heads 16 --num-experts 8 "
      "--moe-ffn-hidden-size 1024 --moe-token-dispatcher-type alltoall --attention-backend flash --bf16 "
      "--delay-wgrad-compute";
  EXPECT_TRUE(mentions(validate_line(model, 16, emitted), MegatronRule::DelayWgradCompute));
  emitted.arguments += " --overlap-moe-expert-parallel-comm";
  EXPECT_FALSE(mentions(validate_line(model, 16, emitted), MegatronRule::DelayWgradCompute));
  // The experts' wgrad beside the dispatch's backward excludes both (transformer_config.py:3084-3095).
  EXPECT_FALSE(mentions(validate_line(model, 16, emitted), MegatronRule::DispatchWgradOverlap));
  emitted.arguments += " --overlap-dispatch-backward-with-experts-wgrad";
  EXPECT_TRUE(mentions(validate_line(model, 16, emitted), MegatronRule::DispatchWgradOverlap));
  const std::string without_delay = " --delay-wgrad-compute --overlap-moe-expert-parallel-comm";
  emitted.arguments.erase(emitted.arguments.find(without_delay), without_delay.size());
  EXPECT_FALSE(mentions(validate_line(model, 16, emitted), MegatronRule::DispatchWgradOverlap)) << emitted.arguments;
  emitted.arguments += " --delay-wgrad-compute";
  EXPECT_TRUE(mentions(validate_line(model, 16, emitted), MegatronRule::DispatchWgradOverlap));
  emitted.arguments =
      "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --sequence-parallel "
      "--micro-batch-size 1 --global-batch-size 8 --seq-length 4096 --max-position-embeddings 4096 "
      "--num-layers 8 --hidden-size 1024 --ffn-hidden-size 4096 --num-attention-heads 16 --num-experts 8 "
      "--moe-ffn-hidden-size 1024 --attention-backend flash --num-layers-per-virtual-pipeline-stage 2 "
      "--no-overlap-p2p-communication";
  problems = validate_line(model, 16, emitted);
  EXPECT_TRUE(mentions(problems, MegatronRule::InterleavedNeedsPp));
  // The search keeps such plans out: interleaving at pp 2 priced with blocking p2p breaks the rule.
  Execution e = plan(2, 1, 1, 2, 4, Framework::MegatronCore);
  e.global_batch = 8;
  e.vpp = 2;
  e.overlap.p2p = false;
  const std::vector<MegatronRule> broken = search::megatron_violations(model, e);
  EXPECT_NE(std::find(broken.begin(), broken.end(), MegatronRule::InterleavedNeedsPp), broken.end());
  e.overlap.p2p = true;
  const std::vector<MegatronRule> fine = search::megatron_violations(model, e);
  EXPECT_EQ(std::find(fine.begin(), fine.end(), MegatronRule::InterleavedNeedsPp), fine.end());
}

// A model with a shared expert: the search's plan at pp 2 (no interleaving,
// so no 1F1B A2A overlap) runs it beside the dispatcher, and the line says so,
// passes the rules and reads back as the same plan.
TEST(MegatronValidator, SharedExpertOverlapOnTheLine) {
  ModelSpec model = moe_model();
  model.moe.shared_experts = 1;
  Execution e = plan(1, 1, 8, 2, 8, Framework::MegatronCore);
  e.stages = uniform_stages(model, compute_layout(small_cluster(), e), 2, 1, Recompute::None);
  ASSERT_TRUE(effective_overlap(e).moe_shared);
  const search::MegatronArguments emitted = search::megatron_arguments(model, e);
  EXPECT_NE(emitted.arguments.find("--moe-shared-expert-overlap"), std::string::npos) << emitted.arguments;
  EXPECT_TRUE(validate_line(model, 16, emitted).empty());
  EXPECT_TRUE(plan_of_line(model, 16, parse_line(emitted.arguments)).overlap.moe_shared);
  // The routed experts' wgrad beside the dispatch's backward runs there too, and reads back.
  ASSERT_TRUE(effective_overlap(e).moe_dispatch_wgrad);
  EXPECT_NE(emitted.arguments.find("--overlap-dispatch-backward-with-experts-wgrad"), std::string::npos);
  EXPECT_TRUE(plan_of_line(model, 16, parse_line(emitted.arguments)).overlap.moe_dispatch_wgrad);
  // Interleaved, the 1F1B A2A overlap runs instead and the line carries only it.
  Execution interleaved = e;
  interleaved.vpp = 2;
  interleaved.stages = uniform_stages(model, compute_layout(small_cluster(), interleaved), 2, 2, Recompute::None);
  const search::MegatronArguments a2a_line = search::megatron_arguments(model, interleaved);
  EXPECT_NE(a2a_line.arguments.find("--overlap-moe-expert-parallel-comm"), std::string::npos);
  EXPECT_EQ(a2a_line.arguments.find("--overlap-dispatch-backward-with-experts-wgrad"), std::string::npos);
  EXPECT_TRUE(validate_line(model, 16, a2a_line).empty());
}

ModelSpec latent_model() {
  ModelSpec model = moe_model();
  model.name = "test-mla";
  model.attention = AttentionKind::MultiLatent;
  model.mla = {384, 128, 64, 32, 64};
  model.moe.router = {RouterScore::Sigmoid, true, 2.5, 4, 2, RouterBalance::SeqAuxLoss, 0.0001};
  return model;
}

TEST(MegatronValidator, LatentAttentionLinesCarryTheModelAndTheRulesUpstreamAsserts) {
  const ModelSpec model = latent_model();
  Execution e = plan(2, 1, 2, 1, 8, Framework::MegatronCore);
  const search::MegatronArguments emitted = search::megatron_arguments(model, e);
  for (const char* flag : {"--multi-latent-attention", "--q-lora-rank 384", "--kv-lora-rank 128", "--qk-head-dim 64",
                           "--qk-pos-emb-head-dim 32", "--v-head-dim 64", "--qk-layernorm", "--rope-type rope",
                           "--no-rope-fusion", "--attention-backend fused", "--moe-router-score-function sigmoid",
                           "--moe-router-enable-expert-bias", "--moe-router-topk-scaling-factor 2.5",
                           "--moe-router-num-groups 4", "--moe-router-group-topk 2",
                           "--moe-router-load-balancing-type seq_aux_loss", "--moe-aux-loss-coeff 0.0001"})
    EXPECT_NE(emitted.arguments.find(flag), std::string::npos) << flag << " in " << emitted.arguments;
  EXPECT_TRUE(validate_line(model, 16, emitted).empty());

  using search::MegatronRule;
  auto broken = [&](const std::string& from, const std::string& to) {
    search::MegatronArguments edited = emitted;
    const std::size_t at = edited.arguments.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    edited.arguments.replace(at, from.size(), to);
    return validate_line(model, 16, edited);
  };
  EXPECT_TRUE(mentions(broken("--attention-backend fused", "--attention-backend flash"), MegatronRule::MlaAttentionBackend));
  EXPECT_TRUE(mentions(broken(" --no-rope-fusion", ""), MegatronRule::MlaRopeFusion));
  EXPECT_TRUE(mentions(broken("--multi-latent-attention", "--multi-latent-attention --group-query-attention"),
                       MegatronRule::MlaWithoutQueryGroups));
  EXPECT_TRUE(mentions(broken("--context-parallel-size 1", "--context-parallel-size 2"), MegatronRule::MlaContextParallel));
  EXPECT_TRUE(mentions(broken("--moe-router-score-function sigmoid", "--moe-router-score-function softmax"),
                       MegatronRule::RouterExpertBias));
  EXPECT_TRUE(mentions(broken("--moe-router-num-groups 4", "--moe-router-num-groups 3"), MegatronRule::RouterGroups));
  // Dropping a model flag is a different model, which the validator names.
  EXPECT_FALSE(broken(" --qk-layernorm", "").empty());
  EXPECT_FALSE(broken("--q-lora-rank 384", "--q-lora-rank 512").empty());
  EXPECT_FALSE(broken(" --moe-router-enable-expert-bias", "").empty());
  EXPECT_FALSE(broken("--moe-aux-loss-coeff 0.0001", "--moe-aux-loss-coeff 0.001").empty());

  // The search keeps MLA under cp > 1 out of the megatron-core space.
  const Execution cp = plan(2, 2, 2, 1, 4, Framework::MegatronCore);
  const std::vector<MegatronRule> rules = search::megatron_violations(model, cp);
  EXPECT_NE(std::find(rules.begin(), rules.end(), MegatronRule::MlaContextParallel), rules.end());
  const std::vector<MegatronRule> standard = search::megatron_violations(moe_model(), cp);
  EXPECT_EQ(std::find(standard.begin(), standard.end(), MegatronRule::MlaContextParallel), standard.end());
}

TEST(MegatronValidator, RankGroupsFollowParallelStateOrder) {
  // tp-cp-dp-pp with tp=2, cp=1, dp=2, pp=2: dp groups stride 2, pp groups stride 4.
  EXPECT_EQ(masked_groups({2, 1, 2, 2}, {false, false, true, false}),
            (RankGroups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(masked_groups({2, 1, 2, 2}, {false, false, false, true}),
            (RankGroups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

TEST(MegatronExpertGrid, PricedGroupsAreMegatronsWithCpAndEp) {
  const ModelSpec model = moe_model();
  const ClusterSpec cluster = small_cluster();
  // tp=1 cp=2 dp=4 ep=2 pp=1 on 8 GPUs: Megatron's ep group is ranks {0,1}
  // (next to tp, over the cp ranks: one node); carving ep out of dp would
  // put it at {0,2} (two nodes).
  Execution megatron = plan(1, 2, 2, 1, 4, Framework::MegatronCore);
  Execution nest = plan(1, 2, 2, 1, 4, Framework::Nest);
  for (Execution* e : {&megatron, &nest}) e->stages = uniform_stages(model, compute_layout(cluster, *e), 1, 1, Recompute::None);
  MegatronGroups groups;
  const std::vector<std::string> problems = validate_line(model, 8, search::megatron_arguments(model, megatron), &groups);
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(groups.ep.front(), (std::vector<int>{0, 1}));
  const ExecutionLayout ours = compute_layout(cluster, megatron);
  EXPECT_EQ(ours.ep_group.fanout, shape_of(cluster, groups.ep).fanout);
  EXPECT_EQ(ours.expert_dp_group.fanout, shape_of(cluster, groups.expert_dp).fanout);
  EXPECT_EQ(ours.dense_dp_group.fanout, shape_of(cluster, groups.dp_cp).fanout);
  EXPECT_NE(compute_layout(cluster, nest).ep_group.fanout, shape_of(cluster, groups.ep).fanout);
  // ep = 4 does not divide dp = 2 but divides cp*dp: Megatron runs it.
  Execution wide = plan(1, 2, 4, 1, 2, Framework::MegatronCore);
  EXPECT_TRUE(search::megatron_violations(model, wide).empty());
}

TEST(MegatronExpertGrid, TpPpDpMappingNeedsEpEqualToCp) {
  const ModelSpec model = moe_model();
  const ClusterSpec cluster = small_cluster();
  Execution e = plan(1, 2, 2, 2, 2, Framework::MegatronCore);
  e.placement = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp, ParallelDim::Dp};
  EXPECT_TRUE(search::megatron_violations(model, e).empty());
  e.stages = uniform_stages(model, compute_layout(cluster, e), 2, 1, Recompute::None);
  MegatronGroups groups;
  EXPECT_TRUE(validate_line(model, 8, search::megatron_arguments(model, e), &groups).empty());
  const ExecutionLayout ours = compute_layout(cluster, e);
  EXPECT_EQ(ours.ep_group.fanout, shape_of(cluster, groups.ep).fanout);
  EXPECT_EQ(ours.expert_dp_group.fanout, shape_of(cluster, groups.expert_dp).fanout);
  e.ep = 1;  // the expert grid's pp groups then differ from the dense grid's
  EXPECT_FALSE(search::megatron_violations(model, e).empty());
}

TEST(MegatronLayout, RepeatedChunksUnrollToTheStages) {
  ModelSpec model = moe_model();
  model.moe = {};
  model.num_layers = 10;
  Execution e = plan(1, 1, 1, 4, 1, Framework::MegatronCore);
  e.global_batch = 8;
  e.vpp = 3;  // 12 chunks for 10 blocks: an embedding-only and a head-only chunk
  const ClusterSpec cluster = small_cluster();
  e.stages = uniform_stages(model, compute_layout(cluster, e), 4, 3, Recompute::None);
  const std::string layout = search::pipeline_layout(model, e);
  EXPECT_EQ(layout, "E|(t|)*10L");
  const Execution back = plan_of_line(model, 4, parse_line(search::megatron_arguments(model, e).arguments));
  ASSERT_EQ(back.stages.size(), e.stages.size());
  for (std::size_t i = 0; i < e.stages.size(); ++i) {
    EXPECT_EQ(back.stages[i].first_layer, e.stages[i].first_layer) << i;
    EXPECT_EQ(back.stages[i].last_layer, e.stages[i].last_layer) << i;
  }
}

}  // namespace
}  // namespace nestfast::megatron_test
