#pragma once
// The arithmetic of stage_cost.hpp over plain pointers: header-only,
// allocation-free and device-compilable. stage_cost.cpp (evaluate_plan, the
// CPU DP) and the gpu/ DP batch both call these functions, so a stage costs
// the same to the last bit wherever it is priced.
//
// Layer ranges here are inclusive [first, last] over the chain
// (0 = embedding, 1..L = blocks, L+1 = head), as in stage_cost.hpp.
#include "solver/cluster/collective_kernel.hpp"
#include "solver/cluster/host_device.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/memory_model.hpp"

namespace nestfast {

// Everything about the data-parallel replicas a stage's cost needs, as plain
// data (replica_context() in stage_cost.hpp fills it).
struct ReplicaContext {
  FlatGroup dense_dp_group;   // dp * cp ranks
  FlatGroup expert_dp_group;  // dp / ep * cp ranks
  int dense_dp_size = 1;      // exact, for ZeRO sharding
  int expert_dp_size = 1;
  int zero_stage = 0;
  double state_bytes_per_param = kAdamStateBytesPerParam;  // optimizer state
  double step_bytes_per_param = kAdamStepBytesPerParam;    // HBM traffic of the optimizer step
  double hbm_step_Bps = 1;  // hbm_bandwidth_Bps * hbm_efficiency
};

// Per micro-batch. forward_s + backward_s + p2p_s is the stage's share of t_r.
struct StageTime {
  double forward_compute_s = 0;
  double backward_compute_s = 0;  // without recompute
  double recompute_s = 0;         // extra backward time of the recompute mode
  double tp_comm_s = 0;           // fw + bw (+ recomputed fw under full recompute: in recompute_s)
  double cp_comm_s = 0;
  double ep_comm_s = 0;
  double zero3_gather_s = 0;      // ZeRO-3: weights all-gathered for fw and again for bw
  double p2p_s = 0;               // activation in (fw) + its gradient out (bw) at the incoming boundary

  NESTFAST_HD double total_s() const {
    return forward_compute_s + backward_compute_s + recompute_s + tp_comm_s + cp_comm_s + ep_comm_s +
           zero3_gather_s + p2p_s;
  }

  StageTime& operator+=(const StageTime& other);  // part by part: the stages of one pipeline rank
};

// What a stage puts on its device, before stash depth and ZeRO are applied.
struct StageFootprint {
  double dense_params = 0;
  double expert_params = 0;
  double stash_bytes_per_microbatch = 0;  // under the stage's recompute mode
  double working_bytes = 0;               // max over its layers

  StageFootprint& operator+=(const StageFootprint& other);  // sums; working = max
};

struct StageMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;  // stash of the in-flight micro-batches
  double working_bytes = 0;      // transient peak + runtime reserve

  NESTFAST_HD double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + working_bytes;
  }
};

struct SyncTime {
  double dp_sync_s = 0;
  double optimizer_s = 0;
  NESTFAST_HD double total_s() const { return dp_sync_s + optimizer_s; }
};

namespace stage_kernel {

// A stage holding the whole chain keeps one copy of tied embeddings.
NESTFAST_HD inline double dense_params(const LayerTableView& table, int first, int last) {
  double params = table.sum(LayerColumn::DenseParams, first, last);
  if (first == 0 && last == table.layers - 1) params -= table.tied_head_params;
  return params;
}

// The last layer of [first, last] that `recompute` covers: `last`, or under
// block recompute (Full with recompute_layers = N > 0) the N-th block of the
// stage (Megatron checkpoints the first N layers of each model chunk,
// megatron/core/recompute.py:167; the embedding and the head are not
// transformer layers and stay outside).
NESTFAST_HD inline int recompute_last(int first, int last, Recompute recompute, int recompute_layers) {
  if (recompute != Recompute::Full || recompute_layers <= 0) return last;
  const int first_block = first < 1 ? 1 : first;
  const int end = first_block + recompute_layers - 1;
  return end < last ? end : last;
}

// `boundary_level` < 0: no incoming p2p.
NESTFAST_HD inline StageTime stage_time(const LayerTableView& table, const ReplicaContext& replicas, int first,
                                        int last, int boundary_level, Recompute recompute, int recompute_layers = 0) {
  const int a = first, b = last;
  StageTime time;
  time.forward_compute_s = table.sum(LayerColumn::ForwardCompute, a, b);
  time.backward_compute_s = table.sum(LayerColumn::BackwardCompute, a, b);
  if (recompute == Recompute::Selective) time.recompute_s = table.sum(LayerColumn::RecomputeSelective, a, b);
  if (recompute == Recompute::Full)
    time.recompute_s = table.sum(LayerColumn::RecomputeFull, a, recompute_last(a, b, recompute, recompute_layers));
  time.tp_comm_s = table.sum(LayerColumn::ForwardTp, a, b) + table.sum(LayerColumn::BackwardTp, a, b);
  time.cp_comm_s = table.sum(LayerColumn::ForwardCp, a, b) + table.sum(LayerColumn::BackwardCp, a, b);
  time.ep_comm_s = table.sum(LayerColumn::ForwardEp, a, b) + table.sum(LayerColumn::BackwardEp, a, b);
  if (replicas.zero_stage >= 3) {
    const double gather =
        group_half_seconds(replicas.dense_dp_group, dense_params(table, a, b) * kWeightBytesPerParam) +
        group_half_seconds(replicas.expert_dp_group, table.sum(LayerColumn::ExpertParams, a, b) * kWeightBytesPerParam);
    time.zero3_gather_s = 2 * gather;  // once for the forward, once for the backward
  }
  if (boundary_level >= 0) time.p2p_s = 2 * table.p2p_time(boundary_level, table.output_bytes[a - 1]);
  return time;
}

NESTFAST_HD inline StageFootprint stage_footprint(const LayerTableView& table, int first, int last,
                                                  Recompute recompute, int recompute_layers = 0) {
  const LayerColumn stash = recompute == Recompute::None        ? LayerColumn::StashNone
                            : recompute == Recompute::Selective ? LayerColumn::StashSelective
                                                                : LayerColumn::StashFull;
  StageFootprint footprint;
  footprint.dense_params = dense_params(table, first, last);
  footprint.expert_params = table.sum(LayerColumn::ExpertParams, first, last);
  const int covered = recompute_last(first, last, recompute, recompute_layers);
  footprint.stash_bytes_per_microbatch = table.sum(stash, first, covered);
  if (covered < last) footprint.stash_bytes_per_microbatch += table.sum(LayerColumn::StashNone, covered + 1, last);
  footprint.working_bytes = table.max_working_bytes(first, last);
  return footprint;
}

NESTFAST_HD inline StageMemory stage_memory(const ReplicaContext& replicas, const StageFootprint& footprint,
                                            double stash_microbatches) {
  const ParamStateBytes dense = param_state_bytes_of(footprint.dense_params, replicas.dense_dp_size,
                                                     replicas.zero_stage, replicas.state_bytes_per_param);
  const ParamStateBytes expert = param_state_bytes_of(footprint.expert_params, replicas.expert_dp_size,
                                                      replicas.zero_stage, replicas.state_bytes_per_param);
  StageMemory memory;
  memory.weights_bytes = dense.weights + expert.weights;
  memory.gradients_bytes = dense.gradients + expert.gradients;
  memory.optimizer_bytes = dense.optimizer + expert.optimizer;
  memory.activations_bytes = stash_microbatches * footprint.stash_bytes_per_microbatch;
  memory.working_bytes = footprint.working_bytes + kRuntimeReserveBytes;
  return memory;
}

// Gradient sync of one dp group: all-reduce, or reduce-scatter (+ the
// all-gather of the updated weights under ZeRO-1/2; ZeRO-3 gathers them per
// micro-batch instead).
NESTFAST_HD inline double group_sync(const FlatGroup& group, int zero_stage, double params) {
  if (zero_stage == 0) return group_all_reduce_seconds(group, params * kGradReduceBytesPerParam);
  const double scatter = group_half_seconds(group, params * kGradReduceBytesPerParam);
  if (zero_stage == 3) return scatter;
  return scatter + group_half_seconds(group, params * kWeightBytesPerParam);
}

NESTFAST_HD inline SyncTime sync_time(const ReplicaContext& replicas, double dense_params, double expert_params) {
  SyncTime time;
  time.dp_sync_s = group_sync(replicas.dense_dp_group, replicas.zero_stage, dense_params) +
                   group_sync(replicas.expert_dp_group, replicas.zero_stage, expert_params);
  const bool sharded = replicas.zero_stage >= 1;
  const double owned = dense_params / (sharded ? replicas.dense_dp_size : 1) +
                       expert_params / (sharded ? replicas.expert_dp_size : 1);
  const double step_bytes = owned * replicas.step_bytes_per_param;
  time.optimizer_s = step_bytes <= 0 ? 0 : step_bytes / replicas.hbm_step_Bps;
  return time;
}

}  // namespace stage_kernel
}  // namespace nestfast
