#include "solver/search/stage_cost.hpp"

#include <algorithm>

#include "solver/cluster/gpu_throughput.hpp"

namespace nestfast {

ReplicaContext replica_context(const ClusterSpec& cluster, const Execution& execution, const ExecutionLayout& layout) {
  ReplicaContext context;
  context.cluster = &cluster;
  context.dense_dp_group = layout.dense_dp_group;
  context.expert_dp_group = layout.expert_dp_group;
  context.dense_dp_size = execution.dp * execution.cp;
  context.expert_dp_size = execution.dp / execution.ep * execution.cp;
  context.zero_stage = execution.zero_stage;
  context.optimizer = execution.optimizer;
  return context;
}

namespace {

// A stage holding the whole chain keeps one copy of tied embeddings.
double stage_dense_params(const LayerTable& table, int first_layer, int last_layer) {
  double params = table.sum(LayerColumn::DenseParams, first_layer, last_layer);
  if (first_layer == 0 && last_layer == table.layers() - 1) params -= table.tied_head_params();
  return params;
}

}  // namespace

StageTime stage_time(const LayerTable& table, const ReplicaContext& replicas, int first_layer, int last_layer,
                     int boundary_level, Recompute recompute) {
  const int a = first_layer, b = last_layer;
  StageTime time;
  time.forward_compute_s = table.sum(LayerColumn::ForwardCompute, a, b);
  time.backward_compute_s = table.sum(LayerColumn::BackwardCompute, a, b);
  if (recompute == Recompute::Selective) time.recompute_s = table.sum(LayerColumn::RecomputeSelective, a, b);
  if (recompute == Recompute::Full) time.recompute_s = table.sum(LayerColumn::RecomputeFull, a, b);
  time.tp_comm_s = table.sum(LayerColumn::ForwardTp, a, b) + table.sum(LayerColumn::BackwardTp, a, b);
  time.cp_comm_s = table.sum(LayerColumn::ForwardCp, a, b) + table.sum(LayerColumn::BackwardCp, a, b);
  time.ep_comm_s = table.sum(LayerColumn::ForwardEp, a, b) + table.sum(LayerColumn::BackwardEp, a, b);
  if (replicas.zero_stage >= 3) {
    const ClusterSpec& cluster = *replicas.cluster;
    const double gather =
        all_gather_time(cluster, replicas.dense_dp_group, stage_dense_params(table, a, b) * kWeightBytesPerParam) +
        all_gather_time(cluster, replicas.expert_dp_group, table.sum(LayerColumn::ExpertParams, a, b) * kWeightBytesPerParam);
    time.zero3_gather_s = 2 * gather;  // once for the forward, once for the backward
  }
  if (boundary_level >= 0) time.p2p_s = 2 * table.p2p_time(boundary_level, table.output_bytes(a - 1));
  return time;
}

StageTime& StageTime::operator+=(const StageTime& other) {
  forward_compute_s += other.forward_compute_s;
  backward_compute_s += other.backward_compute_s;
  recompute_s += other.recompute_s;
  tp_comm_s += other.tp_comm_s;
  cp_comm_s += other.cp_comm_s;
  ep_comm_s += other.ep_comm_s;
  zero3_gather_s += other.zero3_gather_s;
  p2p_s += other.p2p_s;
  return *this;
}

StageFootprint& StageFootprint::operator+=(const StageFootprint& other) {
  dense_params += other.dense_params;
  expert_params += other.expert_params;
  stash_bytes_per_microbatch += other.stash_bytes_per_microbatch;
  working_bytes = std::max(working_bytes, other.working_bytes);
  return *this;
}

StageFootprint stage_footprint(const LayerTable& table, int first_layer, int last_layer, Recompute recompute) {
  static constexpr LayerColumn kStash[kRecomputeModes] = {LayerColumn::StashNone, LayerColumn::StashSelective,
                                                          LayerColumn::StashFull};
  StageFootprint footprint;
  footprint.dense_params = stage_dense_params(table, first_layer, last_layer);
  footprint.expert_params = table.sum(LayerColumn::ExpertParams, first_layer, last_layer);
  footprint.stash_bytes_per_microbatch = table.sum(kStash[static_cast<int>(recompute)], first_layer, last_layer);
  footprint.working_bytes = table.max_working_bytes(first_layer, last_layer);
  return footprint;
}

StageMemory stage_memory(const ReplicaContext& replicas, const StageFootprint& footprint, double stash_microbatches) {
  const ParamStateBytes dense =
      param_state_bytes(footprint.dense_params, replicas.dense_dp_size, replicas.zero_stage, replicas.optimizer);
  const ParamStateBytes expert =
      param_state_bytes(footprint.expert_params, replicas.expert_dp_size, replicas.zero_stage, replicas.optimizer);
  StageMemory memory;
  memory.weights_bytes = dense.weights + expert.weights;
  memory.gradients_bytes = dense.gradients + expert.gradients;
  memory.optimizer_bytes = dense.optimizer + expert.optimizer;
  memory.activations_bytes = stash_microbatches * footprint.stash_bytes_per_microbatch;
  memory.working_bytes = footprint.working_bytes + kRuntimeReserveBytes;
  return memory;
}

SyncTime sync_time(const ReplicaContext& replicas, double dense_params, double expert_params) {
  const ClusterSpec& cluster = *replicas.cluster;
  SyncTime time;
  auto group_sync = [&](const GroupShape& group, double params) {
    if (replicas.zero_stage == 0) return all_reduce_time(cluster, group, params * kGradReduceBytesPerParam);
    const double scatter = reduce_scatter_time(cluster, group, params * kGradReduceBytesPerParam);
    // ZeRO-1/2 gather the updated weights back; ZeRO-3 gathers them per micro-batch instead.
    if (replicas.zero_stage == 3) return scatter;
    return scatter + all_gather_time(cluster, group, params * kWeightBytesPerParam);
  };
  time.dp_sync_s = group_sync(replicas.dense_dp_group, dense_params) + group_sync(replicas.expert_dp_group, expert_params);
  const bool sharded = replicas.zero_stage >= 1;
  const double owned = dense_params / (sharded ? replicas.dense_dp_size : 1) +
                       expert_params / (sharded ? replicas.expert_dp_size : 1);
  const double step_bytes = replicas.optimizer == Optimizer::Adam ? kAdamStepBytesPerParam : kSgdStepBytesPerParam;
  time.optimizer_s = hbm_time(cluster.gpu, owned * step_bytes);
  return time;
}

}  // namespace nestfast
