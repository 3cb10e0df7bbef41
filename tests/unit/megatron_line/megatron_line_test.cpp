// The one Megatron-LM emitter (search::megatron_arguments): its rules on
// real presets, and the catalog round trip (a plan -> its /plans and /stages
// rows -> the record read back) giving the same line, for uniform, uneven,
// interleaved, MoE, block-recompute and (framework nest) mixed-recompute
// plans. The e2e tests check that solve, evaluate and query print it alike.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/catalog/plan_rows.hpp"
#include "io/presets/presets.hpp"
#include "solver/search/plan_record.hpp"
#include "solver/search/megatron_args.hpp"

namespace nestfast {
namespace {

// Stages over the chain 0..L+1 with the given block counts; the first holds
// the embedding, the last the head.
std::vector<StagePlan> stages_of(const std::vector<int>& blocks, const std::vector<Recompute>& modes) {
  std::vector<StagePlan> stages;
  int next = 1;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    StagePlan stage;
    stage.first_layer = i == 0 ? 0 : next;
    next += blocks[i];
    stage.last_layer = i + 1 == blocks.size() ? next : next - 1;
    stage.recompute = modes[i % modes.size()];
    stage.first_device = static_cast<int>(i);
    stage.boundary_level = i == 0 ? -1 : 1;
    stages.push_back(stage);
  }
  return stages;
}

Execution plan_of(int tp, int pp, int dp, int cp, int ep, int vpp, int zero, std::vector<StagePlan> stages) {
  Execution plan;
  plan.framework = Framework::MegatronCore;
  plan.tp = tp;
  plan.pp = pp;
  plan.dp = dp;
  plan.cp = cp;
  plan.ep = ep;
  plan.vpp = vpp;
  plan.sp = tp > 1;
  plan.zero_stage = zero;
  plan.micro_batch = 1;
  plan.global_batch = 1024;
  plan.stages = std::move(stages);
  return plan;
}

// What the catalog job stores for `plan` (its record as /plans and /stages
// rows) and what query reads back.
std::string stored_line(const ModelSpec& model, const Execution& plan) {
  search::PlanRecord record = search::unpriced_plan_record(model.name, "cluster", plan.devices(), plan.global_batch,
                                                           plan.seq_len > 0 ? plan.seq_len : model.seq_len, "nest", 0,
                                                           &plan);
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    search::StageRecord stage;
    stage.stage = static_cast<int>(i);
    stage.first_layer = plan.stages[i].first_layer;
    stage.last_layer = plan.stages[i].last_layer;
    stage.recompute = plan.stages[i].recompute;
    stage.recompute_layers = plan.stages[i].recompute_layers;
    stage.first_device = plan.stages[i].first_device;
    stage.boundary_level = plan.stages[i].boundary_level;
    record.stages.push_back(stage);
  }
  const io::PlanEntry entry = io::plan_entry(record);
  return search::megatron_arguments(model, search::execution_of(io::plan_record(entry.row, entry.stages))).arguments;
}

void expect_launch_line(const std::string& line) {
  EXPECT_EQ(line.find('#'), std::string::npos) << line;
  EXPECT_EQ(line.find('<'), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  for (const char* flag : {"--tensor-model-parallel-size ", "--pipeline-model-parallel-size ", "--context-parallel-size ",
                           "--micro-batch-size ", "--global-batch-size ", "--seq-length ", "--num-layers ",
                           "--hidden-size ", "--num-attention-heads "}) {
    EXPECT_NE(line.find(flag), std::string::npos) << flag << " missing in " << line;
  }
}

TEST(MegatronLine, EveryKindOfPlanRoundTripsThroughTheCatalog) {
  const ModelSpec llama = io::load_model("llama3-70b");    // 80 blocks
  const ModelSpec mixtral = io::load_model("mixtral-8x7b");  // 32 blocks, 8 experts
  const Recompute none = Recompute::None, selective = Recompute::Selective, full = Recompute::Full;
  struct Case {
    const char* name;
    const ModelSpec& model;
    Execution plan;
  };
  const std::vector<Case> cases = {
      {"uniform", llama, plan_of(8, 4, 4, 1, 1, 1, 1, stages_of({20, 20, 20, 20}, {none}))},
      {"uneven", llama, plan_of(4, 4, 8, 2, 1, 1, 0, stages_of({19, 21, 21, 19}, {selective}))},
      {"interleaved", llama, plan_of(8, 2, 8, 1, 1, 2, 1, stages_of({20, 20, 20, 20}, {full}))},
      {"moe", mixtral, plan_of(2, 2, 16, 1, 8, 1, 3, stages_of({16, 16}, {full}))},
      {"mixed", llama, plan_of(4, 4, 8, 1, 1, 1, 1, stages_of({20, 20, 20, 20}, {selective, none}))},
  };
  Execution block = plan_of(8, 4, 4, 1, 1, 1, 1, stages_of({20, 20, 20, 20}, {full}));
  for (StagePlan& stage : block.stages) stage.recompute_layers = 4;
  EXPECT_EQ(stored_line(llama, block), search::megatron_arguments(llama, block).arguments);
  EXPECT_NE(stored_line(llama, block).find("--recompute-method block --recompute-num-layers 4"), std::string::npos);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const search::MegatronArguments solved = search::megatron_arguments(c.model, c.plan);
    expect_launch_line(solved.arguments);
    EXPECT_EQ(stored_line(c.model, c.plan), solved.arguments);
  }
}

TEST(MegatronLine, RecomputeIsOneSettingForEveryStage) {
  const ModelSpec llama = io::load_model("llama3-70b");
  const auto line = [&](std::vector<Recompute> modes) {
    return search::megatron_arguments(llama, plan_of(4, 4, 8, 1, 1, 1, 1, stages_of({20, 20, 20, 20}, modes)));
  };
  const std::string full_flags = "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1";
  EXPECT_NE(line({Recompute::Full}).arguments.find(full_flags), std::string::npos);
  EXPECT_TRUE(line({Recompute::Full}).notes.empty());
  EXPECT_NE(line({Recompute::Selective}).arguments.find("--recompute-granularity selective"), std::string::npos);
  EXPECT_EQ(line({Recompute::None}).arguments.find("--recompute"), std::string::npos);
  // Stages that differ are a framework-nest plan: Megatron-LM cannot run it as priced, and the notes say why.
  Execution mixed_plan = plan_of(4, 4, 8, 1, 1, 1, 1, stages_of({20, 20, 20, 20}, {Recompute::Selective, Recompute::None}));
  mixed_plan.framework = Framework::Nest;
  const search::MegatronArguments mixed = search::megatron_arguments(llama, mixed_plan);
  ASSERT_GE(mixed.notes.size(), 2U);
  EXPECT_NE(mixed.notes[0].find("framework nest"), std::string::npos) << mixed.notes[0];
  EXPECT_NE(mixed.notes[1].find("one setting applied to every pipeline stage"), std::string::npos) << mixed.notes[1];
}

TEST(MegatronLine, LayersAreSpelledOutNeverLeftToTheReader) {
  const ModelSpec llama = io::load_model("llama3-70b");
  const std::string interleaved =
      search::megatron_arguments(llama, plan_of(8, 2, 8, 1, 1, 2, 1, stages_of({20, 20, 20, 20}, {Recompute::None})))
          .arguments;
  EXPECT_NE(interleaved.find("--num-layers 80 "), std::string::npos) << interleaved;
  EXPECT_NE(interleaved.find("--num-layers-per-virtual-pipeline-stage 20"), std::string::npos) << interleaved;
  const std::string uneven =
      search::megatron_arguments(llama, plan_of(4, 4, 8, 1, 1, 1, 1, stages_of({19, 21, 21, 19}, {Recompute::None})))
          .arguments;
  EXPECT_NE(uneven.find("--pipeline-model-parallel-layout \"Et*19|(t*21|)*2t*19L\""), std::string::npos) << uneven;
}

// The line switches on exactly the overlaps the price assumes, and the
// attention kernel it was priced with.
TEST(MegatronLine, OverlapAndAttentionFlagsAreWhatThePriceAssumes) {
  const ModelSpec llama = io::load_model("llama3-70b");
  const ModelSpec mixtral = io::load_model("mixtral-8x7b");
  const auto has = [](const std::string& line, const char* flag) { return line.find(flag) != std::string::npos; };
  Execution plan = plan_of(8, 2, 8, 1, 1, 2, 1, stages_of({20, 20, 20, 20}, {Recompute::None}));
  std::string line = search::megatron_arguments(llama, plan).arguments;
  for (const char* flag : {"--attention-backend flash", "--overlap-grad-reduce", "--overlap-param-gather", "--tp-comm-overlap"})
    EXPECT_TRUE(has(line, flag)) << flag << " missing in " << line;
  EXPECT_FALSE(has(line, "--no-overlap-p2p-communication")) << line;  // Megatron's default when interleaved
  EXPECT_FALSE(has(line, "--overlap-moe-expert-parallel-comm")) << line;  // no experts

  plan.overlap = Overlap::none();
  plan.attention = Attention::Unfused;
  line = search::megatron_arguments(llama, plan).arguments;
  EXPECT_TRUE(has(line, "--attention-backend unfused")) << line;
  EXPECT_TRUE(has(line, "--no-overlap-p2p-communication")) << line;
  for (const char* flag : {"--overlap-grad-reduce", "--overlap-param-gather", "--tp-comm-overlap"})
    EXPECT_FALSE(has(line, flag)) << flag << " in " << line;

  // Only what Megatron can run: no weight-gather overlap without the
  // distributed optimizer, no TP overlap without sequence parallelism.
  plan = plan_of(8, 2, 8, 1, 1, 1, 0, stages_of({40, 40}, {Recompute::None}));
  plan.sp = false;
  line = search::megatron_arguments(llama, plan).arguments;
  EXPECT_TRUE(has(line, "--overlap-grad-reduce")) << line;
  EXPECT_FALSE(has(line, "--overlap-param-gather")) << line;
  EXPECT_FALSE(has(line, "--tp-comm-overlap")) << line;

  // The EP all-to-all overlap: with experts, and not with full recompute.
  Execution moe = plan_of(1, 1, 8, 1, 8, 1, 1, stages_of({32}, {Recompute::None}));
  EXPECT_TRUE(has(search::megatron_arguments(mixtral, moe).arguments, "--overlap-moe-expert-parallel-comm"));
  // ... with the delayed weight gradients its price assumes (combined_layer_pair_exposed).
  EXPECT_TRUE(has(search::megatron_arguments(mixtral, moe).arguments, "--delay-wgrad-compute"));
  // ... on more than one hardware queue beside tp (moe/README.md:437; 32 as the Model Zoo runs it),
  // where without the overlap tp needs exactly one (arguments.py:1477).
  auto connections = [&](const Execution& candidate) {
    for (const search::EnvironmentSetting& setting : search::megatron_arguments(mixtral, candidate).environment)
      if (setting.name == "CUDA_DEVICE_MAX_CONNECTIONS") return setting.value;
    return std::string("<none>");
  };
  Execution tp_moe = plan_of(2, 1, 8, 1, 8, 1, 1, stages_of({32}, {Recompute::None}));
  EXPECT_EQ(connections(tp_moe), "32");
  tp_moe.overlap.moe_a2a = false;
  EXPECT_EQ(connections(tp_moe), "1");
  EXPECT_EQ(connections(moe), "<none>");  // tp 1, cp 1: the driver's default (8)
  // ... whose all-to-all is the priced one (Megatron's default dispatcher all-gathers).
  EXPECT_TRUE(has(search::megatron_arguments(mixtral, moe).arguments, "--moe-token-dispatcher-type alltoall"));
  moe.stages.front().recompute = Recompute::Full;
  EXPECT_FALSE(has(search::megatron_arguments(mixtral, moe).arguments, "--overlap-moe-expert-parallel-comm"));
  EXPECT_FALSE(has(search::megatron_arguments(mixtral, moe).arguments, "--delay-wgrad-compute"));

  // The shared-expert overlap: only on a model with shared experts, over ep > 1,
  // and not beside the EP all-to-all overlap (transformer_config.py:3040), which
  // takes over where Megatron runs it (pp 1, or interleaved).
  EXPECT_FALSE(has(search::megatron_arguments(mixtral, moe).arguments, "--moe-shared-expert-overlap"));
  ModelSpec shared = mixtral;
  shared.moe.shared_experts = 1;
  moe.stages.front().recompute = Recompute::None;
  EXPECT_FALSE(has(search::megatron_arguments(shared, moe).arguments, "--moe-shared-expert-overlap"));  // pp 1: a2a
  Execution piped = plan_of(1, 2, 8, 1, 8, 1, 1, stages_of({16, 16}, {Recompute::None}));
  line = search::megatron_arguments(shared, piped).arguments;
  EXPECT_TRUE(has(line, "--moe-shared-expert-overlap")) << line;
  EXPECT_FALSE(has(line, "--overlap-moe-expert-parallel-comm")) << line;
  piped.recompute_modules = module_bit(RecomputeModule::SharedExperts);
  piped.stages = stages_of({16, 16}, {Recompute::Selective});
  EXPECT_FALSE(has(search::megatron_arguments(shared, piped).arguments, "--moe-shared-expert-overlap"));
  // tp 2 without Megatron-FSDP: CUDA_DEVICE_MAX_CONNECTIONS=1, one hardware queue, nothing overlaps.
  Execution tp_piped = plan_of(2, 2, 4, 1, 8, 1, 1, stages_of({16, 16}, {Recompute::None}));
  line = search::megatron_arguments(shared, tp_piped).arguments;
  EXPECT_FALSE(has(line, "--moe-shared-expert-overlap")) << line;
  piped = plan_of(1, 2, 8, 1, 8, 1, 1, stages_of({16, 16}, {Recompute::None}));
  piped.overlap.moe_shared = false;
  EXPECT_FALSE(has(search::megatron_arguments(shared, piped).arguments, "--moe-shared-expert-overlap"));

  // bf16 gradients exactly when priced so (Megatron keeps fp32 ones under --bf16 unless told).
  EXPECT_FALSE(has(search::megatron_arguments(llama, plan).arguments, "--grad-reduce-in-bf16"));
  plan.grad_reduce = GradReduce::Bf16;
  line = search::megatron_arguments(llama, plan).arguments;
  EXPECT_TRUE(has(line, "--bf16 --grad-reduce-in-bf16")) << line;
}

}  // namespace
}  // namespace nestfast
