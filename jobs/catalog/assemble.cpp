#include "jobs/catalog/assemble.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "io/catalog/plan_rows.hpp"
#include "solver/cluster/collectives.hpp"
#include "solver/model/layer_work.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/megatron_args.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/stage_cost.hpp"

namespace nestfast::jobs {
namespace {

io::PlanEntry point_row(const PointWork& point, const char* kind, int rank_k) {
  io::PlanEntry entry;
  io::PlanRow& row = entry.row;
  row.point_id = point.point.id;
  io::set_fixed(row.model, point.problem.model.name);
  io::set_fixed(row.cluster, point.problem.cluster.name);
  row.gpus = point.point.gpus;
  row.global_batch = point.point.global_batch;
  row.seq_len = point.point.seq_len;
  io::set_fixed(row.kind, kind);
  row.rank_k = rank_k;
  return entry;
}

io::PlanEntry priced_entry(const PointWork& point, Execution plan, const char* kind, int rank_k,
                           double expected_time_s) {
  const ModelSpec& model = point.problem.model;
  const ClusterSpec& cluster = point.problem.cluster;
  // The stored rows do not carry these: every plan of a point is priced with its problem's.
  plan.attention = point.problem.attention;
  plan.overlap = point.problem.overlap;
  const ExecutionLayout layout = compute_layout(cluster, plan);
  derive_stage_layout(layout, plan);
  const PlanCost cost = evaluate_plan(model, cluster, plan);
  if (!cost.feasible || cost.iteration_time_s != expected_time_s) {
    throw std::runtime_error("point " + std::to_string(point.point.id) + " (" + kind + " #" + std::to_string(rank_k) +
                             "): the stored plan does not reproduce its iteration time (checkpoint from another build?)");
  }
  io::PlanEntry entry = point_row(point, kind, rank_k);
  io::PlanRow& row = entry.row;
  row.feasible = 1;
  io::set_plan_degrees(row, plan);
  row.iter_time_s = cost.iteration_time_s;
  row.tokens_per_s = cost.tokens_per_s;
  row.mfu = cost.mfu;
  row.mem_peak_bytes = static_cast<std::uint64_t>(cost.memory_peak_bytes);
  // What reproduces the plan: the same line solve and evaluate print.
  const search::MegatronArguments megatron = search::megatron_arguments(model, plan);
  io::set_fixed(row.megatron_args, megatron.arguments);
  io::set_fixed(row.megatron_env, search::environment_line(megatron.environment));

  const LayerTable table = build_layer_table(model, cluster, layer_table_config(model, plan, layout));
  const ReplicaContext replicas = replica_context(cluster, plan, layout);
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    const StagePlan& stage = plan.stages[s];
    const StageTime time = stage_time(table, replicas, stage.first_layer, stage.last_layer, stage.boundary_level,
                                      stage.recompute, stage.recompute_layers);
    io::StageRow out;
    io::set_stage_plan(out, stage, static_cast<int>(s), plan.pp);
    out.devices = plan.devices() / plan.pp;
    double forward = 0;
    for (LayerColumn column : {LayerColumn::ForwardCompute, LayerColumn::ForwardTp, LayerColumn::ForwardCp,
                               LayerColumn::ForwardEp}) {
      forward += table.sum(column, stage.first_layer, stage.last_layer);
    }
    out.fw_s = forward;
    out.p2p_s = time.p2p_s;
    out.bw_s = time.total_s() - forward - time.p2p_s;  // backward, recompute and ZeRO-3 gathers
    const std::size_t rank = s % static_cast<std::size_t>(plan.pp);
    out.mem_bytes = rank < cost.ranks.size() ? static_cast<std::uint64_t>(cost.ranks[rank].memory.total_bytes()) : 0;
    entry.stages.push_back(out);
  }
  return entry;
}

// The MoE all-to-all of one layer of `plan` as the solver prices it (FAST), for validation.
std::optional<comm::ValidationRequest> all_to_all_of(const PointWork& point, Execution plan) {
  const ModelSpec& model = point.problem.model;
  if (!model.moe.enabled()) return std::nullopt;
  int moe_layer = -1;
  for (int layer = 1; layer <= model.num_layers; ++layer) {
    if (layer_kind(model, layer) == LayerKind::MoeBlock) {
      moe_layer = layer;
      break;
    }
  }
  if (moe_layer < 0) return std::nullopt;
  const ExecutionLayout layout = compute_layout(point.problem.cluster, plan);
  const LayerWork work = layer_work(model, moe_layer, layer_sharding(layer_table_config(model, plan, layout)));
  comm::ValidationRequest request;
  request.ep = plan.ep;
  request.experts = model.moe.num_experts;
  request.top_k = model.moe.top_k;
  request.predicted_bytes_per_rank = static_cast<std::uint64_t>(work.ep_bytes);
  // The bound rests on the line rates the cluster declares: a GPU's NIC (the
  // first level above its node) and its scale-up link; oversubscription only
  // slows links down, so the raw rates keep the bound a bound.
  const auto& levels = point.problem.cluster.levels;
  if (!levels.empty()) request.gpu_scaleup_Bps = levels.front().bandwidth_Bps;
  if (levels.size() > 1) request.gpu_nic_Bps = levels[1].bandwidth_Bps;
  request.predicted_s = plan.ep > 1 ? all_to_all_fast_time(point.problem.cluster, layout.ep_group, work.ep_bytes,
                                                           plan.expert_imbalance)
                                    : 0.0;
  return request;
}

}  // namespace

Execution rebuild_instance_plan(const PointWork& point, std::size_t instance, const DecodedInstance& decoded) {
  Execution plan = search::execution_skeleton(point.problem, point.instances.at(instance));
  plan.stages = decoded.stages;
  return plan;
}

AssembledPoint assemble_point(const PointWork& point, const std::vector<DecodedInstance>& instances,
                              const std::vector<search::BaselineResult>& baselines, int top_k) {
  AssembledPoint out;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < instances.size(); ++i) {
    if (instances[i].feasible) order.push_back(i);
  }
  // Instance index i is the instance's ordinal (enumerate_instances order): the tie-break.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return instances[a].iteration_time_s < instances[b].iteration_time_s;
  });
  if (order.size() > static_cast<std::size_t>(top_k)) order.resize(static_cast<std::size_t>(top_k));
  if (order.empty()) {
    out.plans.push_back(point_row(point, "nest", 0));
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    const DecodedInstance& decoded = instances[order[k]];
    Execution plan = rebuild_instance_plan(point, order[k], decoded);
    out.plans.push_back(priced_entry(point, plan, "nest", static_cast<int>(k), decoded.iteration_time_s));
    if (k == 0) {
      out.best_all_to_all = all_to_all_of(point, plan);
    }
  }
  for (const search::BaselineResult& baseline : baselines) {
    if (baseline.feasible) {
      // The checkpoint keeps degrees and stages; framework, attention and overlaps follow from the point.
      Execution plan = baseline.plan;
      plan.framework = point.problem.framework;
      plan.attention = search::plan_attention(point.problem.framework, point.problem.attention, plan.cp);
      plan.overlap = point.problem.overlap;
      out.plans.push_back(priced_entry(point, plan, baseline.name.c_str(), 0, baseline.iteration_time_s));
    } else {
      io::PlanEntry entry = point_row(point, baseline.name.c_str(), 0);
      if (baseline.plan.tp > 0) io::set_plan_degrees(entry.row, baseline.plan);  // what was tried
      out.plans.push_back(std::move(entry));
    }
  }
  return out;
}

}  // namespace nestfast::jobs
