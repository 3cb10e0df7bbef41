#include "solver/search/plan_record.hpp"

#include <algorithm>
#include <stdexcept>

#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/megatron_args.hpp"
#include "solver/search/megatron_rules.hpp"
#include "solver/search/solve.hpp"
#include "solver/search/stage_cost.hpp"

namespace nestfast::search {
namespace {

void set_plan_fields(PlanRecord& record, const Execution& execution) {
  record.tp = execution.tp;
  record.cp = execution.cp;
  record.ep = execution.ep;
  record.etp = execution.etp();
  record.pp = execution.pp;
  record.dp = execution.dp;
  record.sp = execution.sp;
  record.micro_batch = execution.micro_batch;
  record.micro_batches = execution.dp > 0 && execution.micro_batch > 0 ? execution.micro_batches() : 0;
  record.zero_stage = execution.zero_stage;
  record.vpp = execution.vpp;
  record.recompute = recompute_summary(execution);
  record.recompute_modules = execution.recompute_modules;
  record.placement = execution.placement;
  record.optimizer = execution.optimizer;
  record.a2a = execution.a2a;
  record.moe_imbalance = execution.expert_imbalance;
  record.framework = execution.framework;
  record.attention = execution.attention;
  record.overlap = execution.overlap;
  record.grad_reduce = execution.grad_reduce;
}

// A plan of the NEST space that Megatron-Core runs exactly as priced (its
// rules hold, it has Megatron's attention, its placement is one of Megatron's
// rank orders, and with Megatron's expert grid it prices to the same time and
// memory) is a megatron-core plan:
// recorded, emitted and launched as one. Any other plan is returned as it is.
Execution as_priced_by_its_framework(const ModelSpec& model, const ClusterSpec& cluster, const Execution& execution,
                                     const PlanCost& cost) {
  if (execution.framework != Framework::Nest || !cost.feasible) return execution;
  Execution megatron = execution;
  megatron.framework = Framework::MegatronCore;
  if (plan_attention(Framework::MegatronCore, execution.attention, execution.cp) != execution.attention)
    return execution;
  const std::vector<ParallelDim> dp_pp = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Dp,
                                          ParallelDim::Pp};
  const std::vector<ParallelDim> pp_dp = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp,
                                          ParallelDim::Dp};
  // The same order of the dims larger than 1 (ep as the nest layout carves it).
  const ExecutionLayout nest_layout = compute_layout(cluster, execution);
  auto active = [&](const std::vector<ParallelDim>& order) {
    std::vector<ParallelDim> dims;
    for (ParallelDim dim : order)
      if (nest_layout.size[static_cast<std::size_t>(static_cast<int>(dim))] > 1) dims.push_back(dim);
    return dims;
  };
  for (const std::vector<ParallelDim>& order : {dp_pp, pp_dp}) {
    if (active(order) != active(execution.placement)) continue;
    megatron.placement = order;
    if (!megatron_violations(model, megatron).empty()) continue;
    try {
      derive_stage_layout(compute_layout(cluster, megatron), megatron);
      const PlanCost again = evaluate_plan(model, cluster, megatron);
      if (again.feasible && again.iteration_time_s == cost.iteration_time_s &&
          again.memory_peak_bytes == cost.memory_peak_bytes)
        return megatron;
    } catch (const std::invalid_argument&) {
    }
  }
  return execution;
}

}  // namespace

std::string recompute_summary(const Execution& execution) {
  if (execution.stages.empty()) return "none";
  const Recompute first = execution.stages.front().recompute;
  const bool uniform = std::all_of(execution.stages.begin(), execution.stages.end(),
                                   [&](const StagePlan& stage) { return stage.recompute == first; });
  if (!uniform) return "mixed";
  const int layers = execution.stages.front().recompute_layers;
  return first == Recompute::Full && layers > 0 ? "full/" + std::to_string(layers) : to_string(first);
}


PlanRecord unpriced_plan_record(const std::string& model, const std::string& cluster, int gpus, int global_batch,
                                int seq_len, const std::string& kind, int rank_k, const Execution* execution) {
  PlanRecord record;
  record.model = model;
  record.cluster = cluster;
  record.gpus = gpus;
  record.global_batch = global_batch;
  record.seq_len = seq_len;
  record.kind = kind;
  record.rank_k = rank_k;
  if (execution != nullptr) set_plan_fields(record, *execution);
  return record;
}

PlanRecord plan_record(const ModelSpec& model, const ClusterSpec& cluster, const Execution& priced,
                       const PlanCost& cost, const std::string& kind, int rank_k) {
  const Execution execution = as_priced_by_its_framework(model, cluster, priced, cost);
  const int seq_len = execution.seq_len > 0 ? execution.seq_len : model.seq_len;
  PlanRecord record = unpriced_plan_record(model.name, cluster.name, execution.devices(), execution.global_batch,
                                           seq_len, kind, rank_k, &execution);
  record.overlap_priced = to_string(effective_overlap(execution, model));
  record.feasible = cost.feasible;
  record.infeasible_reason = cost.infeasible_reason;
  record.micro_batches = cost.micro_batches;
  record.iteration_time_s = cost.iteration_time_s;
  record.tokens_per_s = cost.tokens_per_s;
  record.mfu_pct = 100.0 * cost.mfu;
  record.memory_peak_bytes = cost.memory_peak_bytes;
  record.hbm_bytes = cost.hbm_bytes;
  record.breakdown = cost.breakdown;
  const MegatronArguments megatron = megatron_arguments(model, execution);
  record.megatron_args = megatron.arguments;
  record.megatron_environment = environment_line(megatron.environment);
  record.megatron_notes = megatron.notes;

  const ExecutionLayout layout = compute_layout(cluster, execution);
  const LayerTable table = build_layer_table(model, cluster, layer_table_config(model, execution, layout));
  const ReplicaContext replicas = replica_context(cluster, execution, layout);
  for (std::size_t s = 0; s < execution.stages.size(); ++s) {
    const StagePlan& stage = execution.stages[s];
    StageRecord out;
    out.stage = static_cast<int>(s);
    out.pipeline_rank = static_cast<int>(s % static_cast<std::size_t>(execution.pp));
    out.first_layer = stage.first_layer;
    out.last_layer = stage.last_layer;
    out.devices = execution.devices() / execution.pp;
    out.first_device = stage.first_device;
    out.boundary_level = stage.boundary_level;
    if (stage.boundary_level >= 0 && static_cast<std::size_t>(stage.boundary_level) < cluster.levels.size()) {
      out.boundary_level_name = cluster.levels[static_cast<std::size_t>(stage.boundary_level)].name;
    }
    out.recompute = stage.recompute;
    out.recompute_layers = stage.recompute_layers;
    const StageTime time = stage_time(table, replicas, out.pipeline_rank, stage.first_layer, stage.last_layer,
                                      stage.boundary_level, stage.recompute, stage.recompute_layers);
    double forward = 0;
    for (LayerColumn column : {LayerColumn::ForwardCompute, LayerColumn::ForwardTp, LayerColumn::ForwardCp,
                               LayerColumn::ForwardEp}) {
      forward += table.sum(column, stage.first_layer, stage.last_layer);
    }
    out.forward_per_microbatch_s = forward;
    out.p2p_per_microbatch_s = time.p2p_s;
    out.backward_per_microbatch_s = time.total_s() - forward - time.p2p_s;
    const auto rank = static_cast<std::size_t>(out.pipeline_rank);
    if (rank < cost.ranks.size()) {
      const StageMemory& memory = cost.ranks[rank].memory;
      out.memory_bytes = memory.total_bytes();
      out.weights_bytes = memory.weights_bytes;
      out.gradients_bytes = memory.gradients_bytes;
      out.optimizer_bytes = memory.optimizer_bytes;
      out.activations_bytes = memory.activations_bytes;
      out.working_bytes = memory.working_bytes;
    }
    record.stages.push_back(std::move(out));
  }
  return record;
}

PlanRecord price_plan_record(const ModelSpec& model, const ClusterSpec& cluster, Execution execution,
                             const std::string& kind, int rank_k) {
  const ExecutionLayout layout = compute_layout(cluster, execution);
  if (execution.stages.empty()) {
    execution.stages = uniform_stages(model, layout, execution.pp, execution.vpp, Recompute::None);
  } else {
    derive_stage_layout(layout, execution);
  }
  return plan_record(model, cluster, execution, evaluate_plan(model, cluster, execution), kind, rank_k);
}

Execution execution_of(const PlanRecord& record) {
  Execution execution;
  execution.tp = record.tp;
  execution.cp = record.cp;
  execution.ep = record.ep;
  execution.expert_tp = record.etp == record.tp ? 0 : record.etp;
  execution.pp = record.pp;
  execution.dp = record.dp;
  execution.sp = record.sp;
  execution.micro_batch = record.micro_batch;
  execution.global_batch = record.global_batch;
  execution.seq_len = record.seq_len;
  execution.zero_stage = record.zero_stage;
  execution.vpp = record.vpp;
  execution.optimizer = record.optimizer;
  execution.a2a = record.a2a;
  execution.expert_imbalance = record.moe_imbalance;
  execution.framework = record.framework;
  execution.attention = record.attention;
  execution.overlap = record.overlap;
  execution.grad_reduce = record.grad_reduce;
  execution.recompute_modules = record.recompute_modules;
  execution.placement = record.placement;
  for (const StageRecord& stage : record.stages) {
    StagePlan plan;
    plan.first_layer = stage.first_layer;
    plan.last_layer = stage.last_layer;
    plan.recompute = stage.recompute;
    plan.recompute_layers = stage.recompute_layers;
    execution.stages.push_back(plan);
  }
  return execution;
}

}  // namespace nestfast::search
