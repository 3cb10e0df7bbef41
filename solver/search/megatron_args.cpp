#include "solver/search/megatron_args.hpp"

#include <algorithm>

namespace nestfast::search {
namespace {

std::string flag(const std::string& name, int value) { return " --" + name + " " + std::to_string(value); }

bool uniform_layers(const ModelSpec& model, const Execution& plan) {
  // Megatron's default split: blocks / (pp * vpp) per chunk, embedding on the
  // first, head on the last.
  const int chunks = static_cast<int>(plan.stages.size());
  if (chunks == 0 || model.num_layers % chunks != 0) return false;
  const int per_chunk = model.num_layers / chunks;
  for (int i = 0; i < chunks; ++i) {
    const StagePlan& stage = plan.stages[static_cast<std::size_t>(i)];
    const int first_block = std::max(stage.first_layer, 1);
    const int last_block = std::min(stage.last_layer, model.num_layers);
    if (last_block - first_block + 1 != per_chunk) return false;
  }
  return true;
}

std::string layout_string(const ModelSpec& model, const Execution& plan) {
  std::string layout;
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const StagePlan& stage = plan.stages[i];
    if (i > 0) layout += '|';
    if (stage.first_layer == 0) layout += 'E';
    const int blocks = std::min(stage.last_layer, model.num_layers) - std::max(stage.first_layer, 1) + 1;
    if (blocks > 0) layout += "t*" + std::to_string(blocks);
    if (stage.last_layer == model.num_layers + 1) layout += 'L';
  }
  return layout;
}

}  // namespace

MegatronArguments megatron_arguments(const ModelSpec& model, const Execution& plan) {
  MegatronArguments out;
  std::string& a = out.arguments;
  a += flag("tensor-model-parallel-size", plan.tp);
  a += flag("pipeline-model-parallel-size", plan.pp);
  a += flag("context-parallel-size", plan.cp);
  a += flag("expert-model-parallel-size", plan.ep);
  if (plan.sp && plan.tp > 1) a += " --sequence-parallel";
  a += flag("micro-batch-size", plan.micro_batch);
  a += flag("global-batch-size", plan.global_batch);
  a += flag("seq-length", plan.seq_len > 0 ? plan.seq_len : model.seq_len);
  a += flag("num-layers", model.num_layers);
  if (plan.vpp > 1) a += flag("num-layers-per-virtual-pipeline-stage", model.num_layers / (plan.pp * plan.vpp));
  if (plan.zero_stage == 1) a += " --use-distributed-optimizer";
  if (plan.zero_stage >= 2) {
    a += " --use-custom-fsdp --data-parallel-sharding-strategy ";
    a += plan.zero_stage == 2 ? "optim_grads" : "optim_grads_params";
  }
  if (plan.optimizer == Optimizer::Sgd) a += " --optimizer sgd";

  bool mixed = false;
  for (const StagePlan& stage : plan.stages) mixed = mixed || stage.recompute != plan.stages.front().recompute;
  // One setting for every stage; where the plan's stages differ, the one that
  // fits wherever the plan fits (a catalog keeps no per-stage modes, so the
  // stored plan must give the same line as the solved one).
  const Recompute recompute = plan.stages.empty() ? Recompute::None : mixed ? Recompute::Full : plan.stages.front().recompute;
  if (recompute == Recompute::Selective) a += " --recompute-granularity selective";
  if (recompute == Recompute::Full) a += " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1";
  if (mixed) {
    std::string per_stage;
    for (const StagePlan& stage : plan.stages) per_stage += std::string(per_stage.empty() ? "" : ",") + to_string(stage.recompute);
    out.notes.push_back("per-stage recompute (" + per_stage +
                        ") cannot be expressed; the line recomputes every stage fully (fits, slower than priced)");
  }
  if (plan.pp > 1 && !uniform_layers(model, plan)) {
    a += " --pipeline-model-parallel-layout \"" + layout_string(model, plan) + "\"";
  }
  const std::vector<ParallelDim> megatron_order = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Dp,
                                                   ParallelDim::Pp};
  std::vector<ParallelDim> used;
  const int sizes[kParallelDims] = {plan.tp, plan.cp, plan.ep, plan.pp, plan.dp / std::max(plan.ep, 1)};
  for (ParallelDim dim : plan.placement) {
    if (sizes[static_cast<int>(dim)] > 1) used.push_back(dim);
  }
  std::vector<ParallelDim> default_used;
  for (ParallelDim dim : megatron_order) {
    if (sizes[static_cast<int>(dim)] > 1) default_used.push_back(dim);
  }
  if (used != default_used) {
    std::string order;
    for (ParallelDim dim : plan.placement) order += std::string(order.empty() ? "" : "-") + to_string(dim);
    out.notes.push_back("rank order " + order + " (innermost first) differs from Megatron-LM's tp-cp-ep-dp-pp");
  }
  a.erase(0, 1);  // the leading space
  return out;
}

}  // namespace nestfast::search
