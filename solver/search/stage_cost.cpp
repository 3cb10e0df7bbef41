#include "solver/search/stage_cost.hpp"

#include <algorithm>

namespace nestfast {

ReplicaContext replica_context(const ClusterSpec& cluster, const Execution& execution, const ExecutionLayout& layout) {
  ReplicaContext context;
  context.dense_dp_group = flat_group(cluster, layout.dense_dp_group);
  context.expert_dp_group = flat_group(cluster, layout.expert_dp_group);
  context.dense_dp_size = execution.dp * execution.cp;
  context.expert_dp_size = execution.expert_dp_size();
  context.zero_stage = execution.zero_stage;
  context.state_bytes_per_param = optimizer_state_bytes_per_param(execution.optimizer);
  context.grad_bytes_per_param = grad_bytes_per_param(execution.grad_reduce);
  context.step_grad_copy_bytes_per_param = step_grad_copy_bytes_per_param(execution.grad_reduce);
  context.step_bytes_per_param =
      execution.optimizer == Optimizer::Adam ? kAdamStepBytesPerParam : kSgdStepBytesPerParam;
  context.hbm_step_Bps = cluster.gpu.hbm_bandwidth_Bps * cluster.gpu.hbm_efficiency;
  const Overlap overlap = effective_overlap(execution);
  context.grad_overlap = overlap.grad_reduce;
  context.param_overlap = overlap.param_gather;
  context.p2p_overlap = overlap.p2p;
  context.pp = execution.pp;
  context.vpp = execution.vpp;
  context.micro_batches = execution.micro_batches();
  return context;
}

StageTime stage_time(const LayerTable& table, const ReplicaContext& replicas, int rank, int first_layer, int last_layer,
                     int boundary_level, Recompute recompute, int recompute_layers) {
  return stage_kernel::stage_time(table.view(), replicas, rank, first_layer, last_layer, boundary_level, recompute,
                                  recompute_layers);
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
  p2p_warmup_s += other.p2p_warmup_s;
  return *this;
}

StageFootprint& StageFootprint::operator+=(const StageFootprint& other) {
  dense_params += other.dense_params;
  expert_params += other.expert_params;
  stash_bytes_per_microbatch += other.stash_bytes_per_microbatch;
  working_bytes = std::max(working_bytes, other.working_bytes);
  if (chunks == 0) {
    grad_all_reduce_first_s = other.grad_all_reduce_first_s;
    grad_reduce_scatter_first_s = other.grad_reduce_scatter_first_s;
    param_gather_first_s = other.param_gather_first_s;
    grad_all_reduce_first_hidden_s = other.grad_all_reduce_first_hidden_s;
    grad_reduce_scatter_first_hidden_s = other.grad_reduce_scatter_first_hidden_s;
    param_gather_first_hidden_s = other.param_gather_first_hidden_s;
  } else {
    grad_all_reduce_rest_s += other.grad_all_reduce_first_hidden_s;
    grad_reduce_scatter_rest_s += other.grad_reduce_scatter_first_hidden_s;
    param_gather_rest_s += other.param_gather_first_hidden_s;
  }
  grad_all_reduce_rest_s += other.grad_all_reduce_rest_s;
  grad_reduce_scatter_rest_s += other.grad_reduce_scatter_rest_s;
  param_gather_rest_s += other.param_gather_rest_s;
  chunks += other.chunks;
  return *this;
}

StageFootprint stage_footprint(const LayerTable& table, int first_layer, int last_layer, Recompute recompute,
                               int recompute_layers) {
  return stage_kernel::stage_footprint(table.view(), first_layer, last_layer, recompute, recompute_layers);
}

StageMemory stage_memory(const ReplicaContext& replicas, const StageFootprint& footprint, double stash_microbatches) {
  return stage_kernel::stage_memory(replicas, footprint, stash_microbatches);
}

SyncTime sync_time(const ReplicaContext& replicas, const StageFootprint& footprint) {
  return stage_kernel::sync_time(replicas, footprint);
}

}  // namespace nestfast
