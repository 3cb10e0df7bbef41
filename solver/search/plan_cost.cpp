#include "solver/search/plan_cost.hpp"

#include <algorithm>
#include <cstdio>

#include "solver/cluster/gpu_throughput.hpp"
#include "solver/model/layer_work.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/memory_model.hpp"
#include "solver/search/pipeline_time.hpp"

namespace nestfast {

namespace {

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1ull << 30));
  return text;
}

}  // namespace

PlanCost evaluate_plan(const ModelSpec& model, const ClusterSpec& cluster, const Execution& input) {
  validate_model(model);
  validate_cluster(cluster);
  validate_degrees(model, cluster, input, input.devices());
  const ExecutionLayout layout = compute_layout(cluster, input);
  Execution execution = input;
  if (execution.stages.empty())
    execution.stages = uniform_stages(model, layout, execution.pp, execution.vpp, Recompute::None);
  else
    validate_stages(model, layout, execution);

  const LayerTable table = build_layer_table(model, cluster, layer_table_config(model, execution, layout));
  const ReplicaContext replicas = replica_context(cluster, execution, layout);
  const int pp = execution.pp;
  const int m = execution.micro_batches();

  PlanCost cost;
  cost.micro_batches = m;
  cost.hbm_bytes = static_cast<double>(cluster.gpu.hbm_bytes);
  cost.ranks.resize(static_cast<std::size_t>(pp));
  std::vector<StageFootprint> footprints(static_cast<std::size_t>(pp));
  std::vector<std::vector<double>> chunk_stash(static_cast<std::size_t>(pp));  // per rank, its chunks in order
  double recompute_flops = 0;
  for (std::size_t i = 0; i < execution.stages.size(); ++i) {
    const StagePlan& stage = execution.stages[i];
    RankCost& rank = cost.ranks[i % static_cast<std::size_t>(pp)];
    rank.stages.push_back(static_cast<int>(i));
    rank.layers += stage.last_layer - stage.first_layer + 1;
    rank.time += stage_time(table, replicas, static_cast<int>(i) % pp, stage.first_layer, stage.last_layer,
                            stage.boundary_level, stage.recompute, stage.recompute_layers);
    const StageFootprint chunk =
        stage_footprint(table, stage.first_layer, stage.last_layer, stage.recompute, stage.recompute_layers);
    footprints[i % static_cast<std::size_t>(pp)] += chunk;
    chunk_stash[i % static_cast<std::size_t>(pp)].push_back(chunk.stash_bytes_per_microbatch);
    if (stage.recompute == Recompute::Selective)
      recompute_flops += table.sum(LayerColumn::RecomputeSelectiveFlops, stage.first_layer, stage.last_layer);
    if (stage.recompute == Recompute::Full)
      recompute_flops += table.sum(LayerColumn::RecomputeFullFlops, stage.first_layer,
                                   stage_kernel::recompute_last(stage.first_layer, stage.last_layer, stage.recompute,
                                                                stage.recompute_layers));
  }

  double bottleneck = -1;
  double worst_sync = -1;
  int sync_rank = 0;
  for (int r = 0; r < pp; ++r) {
    RankCost& rank = cost.ranks[static_cast<std::size_t>(r)];
    const StageFootprint& footprint = footprints[static_cast<std::size_t>(r)];
    rank.rank = r;
    rank.first_device = layout.rank_first_device[static_cast<std::size_t>(r)];
    rank.time_per_microbatch_s = rank.time.total_s();
    rank.stash_microbatches = interleaved_stash_depth(r, pp, execution.vpp, m, chunk_stash[static_cast<std::size_t>(r)]);
    rank.memory = stage_memory(replicas, footprint, rank.stash_microbatches);
    rank.sync = sync_time(replicas, footprint);
    if (rank.time_per_microbatch_s > bottleneck) {
      bottleneck = rank.time_per_microbatch_s;
      cost.bottleneck_rank = r;
    }
    if (rank.sync.total_s() > worst_sync) {
      worst_sync = rank.sync.total_s();
      sync_rank = r;
    }
    cost.memory_peak_bytes = std::max(cost.memory_peak_bytes, rank.memory.total_bytes());
  }

  double warmup_p2p = 0;
  for (const RankCost& rank : cost.ranks) warmup_p2p += rank.time.p2p_warmup_s;
  const PipelineTime pipeline = pipeline_time(m, pp, execution.vpp, bottleneck, warmup_p2p);
  const RankCost& slowest = cost.ranks[static_cast<std::size_t>(cost.bottleneck_rank)];
  const SyncTime& sync = cost.ranks[static_cast<std::size_t>(sync_rank)].sync;
  cost.iteration_time_s = pipeline.total_s() + sync.total_s();

  TimeBreakdown& parts = cost.breakdown;
  parts.compute_s = m * (slowest.time.forward_compute_s + slowest.time.backward_compute_s);
  parts.recompute_s = m * slowest.time.recompute_s;
  parts.tp_comm_s = m * slowest.time.tp_comm_s;
  parts.cp_comm_s = m * slowest.time.cp_comm_s;
  parts.ep_comm_s = m * slowest.time.ep_comm_s;
  parts.zero3_gather_s = m * slowest.time.zero3_gather_s;
  parts.p2p_s = m * slowest.time.p2p_s;
  parts.bubble_s = pipeline.bubble_s;
  parts.dp_sync_s = sync.dp_sync_s;
  parts.optimizer_s = sync.optimizer_s;

  const int seq = execution.seq_len > 0 ? execution.seq_len : model.seq_len;
  const double replicas_per_rank = static_cast<double>(execution.tp) * execution.cp * execution.dp;
  cost.model_flops = m * replicas_per_rank * table.sum(LayerColumn::ModelFlops, 0, table.layers() - 1);
  cost.hardware_flops = cost.model_flops + m * replicas_per_rank * recompute_flops;
  const double peak = cost.iteration_time_s * execution.devices() * cluster.gpu.peak_flops_bf16;
  cost.mfu = cost.model_flops / peak;
  cost.hfu = cost.hardware_flops / peak;
  cost.sequences_per_s = execution.global_batch / cost.iteration_time_s;
  cost.tokens_per_s = cost.sequences_per_s * seq;

  cost.feasible = true;
  for (const RankCost& rank : cost.ranks) {
    if (rank.memory.total_bytes() <= cost.hbm_bytes) continue;
    cost.feasible = false;
    const StagePlan& first = execution.stages[static_cast<std::size_t>(rank.stages.front())];
    const StagePlan& last = execution.stages[static_cast<std::size_t>(rank.stages.back())];
    cost.infeasible_reason = "pipeline rank " + std::to_string(rank.rank) + " (layers " +
                             std::to_string(first.first_layer) + ".." + std::to_string(last.last_layer) + ") needs " +
                             gib(rank.memory.total_bytes()) + " per device, HBM is " + gib(cost.hbm_bytes);
    break;
  }
  return cost;
}

}  // namespace nestfast
