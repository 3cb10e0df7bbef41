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
#include "solver/search/combined_1f1b.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/memory_model.hpp"
#include "solver/search/overlap.hpp"

namespace nestfast {

// Everything about the data-parallel replicas a stage's cost needs, and the
// plan-wide switches priced per stage, as plain data (replica_context() in
// stage_cost.hpp fills it).
struct ReplicaContext {
  FlatGroup dense_dp_group;   // dp * cp ranks
  FlatGroup expert_dp_group;  // dp / ep * cp ranks
  int dense_dp_size = 1;      // exact, for ZeRO sharding
  int expert_dp_size = 1;
  int zero_stage = 0;
  double state_bytes_per_param = kAdamStateBytesPerParam;  // optimizer state
  double grad_bytes_per_param = 4;            // gradient buffer, and what the DP collectives reduce
  double step_grad_copy_bytes_per_param = 0;  // the optimizer's fp32 copy of bf16 gradients, at the step
  double step_bytes_per_param = kAdamStepBytesPerParam;    // HBM traffic of the optimizer step
  double hbm_step_Bps = 1;  // hbm_bandwidth_Bps * hbm_efficiency
  bool grad_overlap = false;   // Overlap::grad_reduce: per-layer buckets behind the backward
  bool param_overlap = false;  // Overlap::param_gather: per-layer weight gathers behind the forward
  bool p2p_overlap = false;    // Overlap::p2p with interleaving (vpp > 1)
  // The schedule, for what the combined 1F1B schedule of the MoE
  // all-to-all overlap runs alone on each pipeline rank (combined_1f1b.hpp).
  int pp = 1;
  int vpp = 1;
  int micro_batches = 1;
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
  // Interleaved with p2p overlap: the whole transfer at the incoming
  // boundary, which the steady state hides but warm-up and cool-down wait
  // for (pipeline_time.hpp). Not part of total_s(); 0 when p2p is blocking.
  double p2p_warmup_s = 0;

  NESTFAST_HD double total_s() const {
    return forward_compute_s + backward_compute_s + recompute_s + tp_comm_s + cp_comm_s + ep_comm_s +
           zero3_gather_s + p2p_s;
  }

  StageTime& operator+=(const StageTime& other);  // part by part: the stages of one pipeline rank
};

// What a stage puts on its device, before stash depth and ZeRO are applied,
// and what its parameters' overlapped DP collectives leave exposed.
struct StageFootprint {
  double dense_params = 0;
  double expert_params = 0;
  double stash_bytes_per_microbatch = 0;  // under the stage's recompute mode
  double working_bytes = 0;               // max over its layers

  // The overlapped DP collectives (layer_table.hpp's Grad*/Param* columns):
  // `first` is the collective of the stage's first layer, which nothing
  // hides (it is the last backward and the first forward of the stage),
  // `rest` the exposed part of every other layer's.
  double grad_all_reduce_first_s = 0;
  double grad_all_reduce_rest_s = 0;
  double grad_reduce_scatter_first_s = 0;
  double grad_reduce_scatter_rest_s = 0;
  double param_gather_first_s = 0;
  double param_gather_rest_s = 0;
  // What the first layer's collectives cost when another chunk's compute
  // hides them: overlap_slowdown x their time, the SMs and HBM bandwidth
  // they take from that compute (overlap.hpp), as for every other hidden
  // collective.
  double grad_all_reduce_first_hidden_s = 0;
  double grad_reduce_scatter_first_hidden_s = 0;
  double param_gather_first_hidden_s = 0;
  int chunks = 0;  // stages summed into this footprint

  // Sums; working = max. Summed over a pipeline rank's chunks in stage
  // order, only the first chunk's first layer stays exposed: the others end
  // their last backward (and start their first forward) with the first
  // chunk's pipeline-deep backward (forward) still to run beside them, and
  // cost that compute their *_first_hidden_s.
  StageFootprint& operator+=(const StageFootprint& other);
};

struct StageMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;  // stash of the in-flight micro-batches
  // Transient peak + runtime reserve: the largest layer's working set beside
  // the stash, or, when more, at the optimizer step (no stash then) the fp32
  // copy of the bf16 gradients the rank owns.
  double working_bytes = 0;

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

// `rank`: the stage's pipeline rank. `boundary_level` < 0: no incoming p2p.
NESTFAST_HD inline StageTime stage_time(const LayerTableView& table, const ReplicaContext& replicas, int rank, int first,
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
  // Megatron's EP all-to-all overlap refuses full recompute (transformer_config.py).
  const double ep_serial_s = table.sum(LayerColumn::ForwardEp, a, b) + table.sum(LayerColumn::BackwardEp, a, b);
  if (table.moe_a2a_overlap && recompute != Recompute::Full) {
    const double hidden_s = table.sum(LayerColumn::EpOverlapped, a, b);
    const double alone = combined_1f1b_alone_fraction(replicas.pp, replicas.vpp, replicas.micro_batches, rank);
    time.ep_comm_s = hidden_s + alone * (ep_serial_s - hidden_s);
  } else {
    time.ep_comm_s = ep_serial_s;
  }
  if (replicas.zero_stage >= 3) {
    if (replicas.param_overlap) {
      // Prefetched one layer ahead: forward in layer order, backward in reverse.
      time.zero3_gather_s = table.sum(LayerColumn::ParamAllGather, a, a) +
                            table.sum(LayerColumn::ParamAllGatherExposed, a + 1, b) +
                            table.sum(LayerColumn::ParamAllGather, b, b) +
                            table.sum(LayerColumn::ParamAllGatherExposedBackward, a, b - 1);
    } else {
      const double gather =
          group_half_seconds(replicas.dense_dp_group, dense_params(table, a, b) * kWeightBytesPerParam) +
          group_half_seconds(replicas.expert_dp_group,
                             table.sum(LayerColumn::ExpertParams, a, b) * kWeightBytesPerParam);
      time.zero3_gather_s = 2 * gather;  // once for the forward, once for the backward
    }
  }
  if (boundary_level >= 0) {
    time.p2p_s = 2 * table.p2p_time(boundary_level, table.output_bytes[a - 1]);
    // Interleaved 1F1B posts the chunk's receive early and sends
    // asynchronously: the transfer hides behind the chunk's compute.
    if (replicas.p2p_overlap) {
      time.p2p_warmup_s = time.p2p_s;
      time.p2p_s = exposed_seconds(time.p2p_s, time.forward_compute_s + time.backward_compute_s, table.overlap_slowdown);
    }
  }
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
  footprint.grad_all_reduce_first_s = table.sum(LayerColumn::GradAllReduce, first, first);
  footprint.grad_all_reduce_rest_s = table.sum(LayerColumn::GradAllReduceExposed, first + 1, last);
  footprint.grad_reduce_scatter_first_s = table.sum(LayerColumn::GradReduceScatter, first, first);
  footprint.grad_reduce_scatter_rest_s = table.sum(LayerColumn::GradReduceScatterExposed, first + 1, last);
  footprint.param_gather_first_s = table.sum(LayerColumn::ParamAllGather, first, first);
  footprint.param_gather_rest_s = table.sum(LayerColumn::ParamAllGatherExposed, first + 1, last);
  footprint.grad_all_reduce_first_hidden_s = table.overlap_slowdown * footprint.grad_all_reduce_first_s;
  footprint.grad_reduce_scatter_first_hidden_s = table.overlap_slowdown * footprint.grad_reduce_scatter_first_s;
  footprint.param_gather_first_hidden_s = table.overlap_slowdown * footprint.param_gather_first_s;
  footprint.chunks = 1;
  return footprint;
}

NESTFAST_HD inline StageMemory stage_memory(const ReplicaContext& replicas, const StageFootprint& footprint,
                                            double stash_microbatches) {
  const ParamStateBytes dense =
      param_state_bytes_of(footprint.dense_params, replicas.dense_dp_size, replicas.zero_stage,
                           replicas.state_bytes_per_param, replicas.grad_bytes_per_param);
  const ParamStateBytes expert =
      param_state_bytes_of(footprint.expert_params, replicas.expert_dp_size, replicas.zero_stage,
                           replicas.state_bytes_per_param, replicas.grad_bytes_per_param);
  StageMemory memory;
  memory.weights_bytes = dense.weights + expert.weights;
  memory.gradients_bytes = dense.gradients + expert.gradients;
  memory.optimizer_bytes = dense.optimizer + expert.optimizer;
  memory.activations_bytes = stash_microbatches * footprint.stash_bytes_per_microbatch;
  // The step's gradient copy covers what the rank's optimizer owns (its
  // shard under the distributed optimizer, everything without it).
  const bool sharded = replicas.zero_stage >= 1;
  const double owned = footprint.dense_params / (sharded ? replicas.dense_dp_size : 1) +
                       footprint.expert_params / (sharded ? replicas.expert_dp_size : 1);
  const double step_copy = owned * replicas.step_grad_copy_bytes_per_param - memory.activations_bytes;
  memory.working_bytes = (footprint.working_bytes > step_copy ? footprint.working_bytes : step_copy) +
                         kRuntimeReserveBytes;
  return memory;
}

// Gradient sync of one dp group: all-reduce, or reduce-scatter (+ the
// all-gather of the updated weights under ZeRO-1/2; ZeRO-3 gathers them per
// micro-batch instead), of gradients of `grad_bytes` per parameter.
NESTFAST_HD inline double group_sync(const FlatGroup& group, int zero_stage, double params, double grad_bytes) {
  if (zero_stage == 0) return group_all_reduce_seconds(group, params * grad_bytes);
  const double scatter = group_half_seconds(group, params * grad_bytes);
  if (zero_stage == 3) return scatter;
  return scatter + group_half_seconds(group, params * kWeightBytesPerParam);
}

// The DP sync of a rank's parameters that the step waits for.
//  - No overlap: one collective over all of them after the last backward
//    (group_sync), as Megatron without --overlap-grad-reduce runs it.
//  - --overlap-grad-reduce: layer-sized buckets, each behind the backward of
//    the layer processed after it; the first layer's bucket is exposed.
//  - ZeRO >= 1 with --overlap-param-gather: the updated weights are gathered
//    layer by layer behind the next forward (ZeRO-1/2; ZeRO-3 gathers per
//    micro-batch in stage_time instead); without it, one all-gather after
//    the optimizer step.
NESTFAST_HD inline SyncTime sync_time(const ReplicaContext& replicas, const StageFootprint& footprint) {
  const double dense_params = footprint.dense_params;
  const double expert_params = footprint.expert_params;
  const int zero = replicas.zero_stage;
  SyncTime time;
  if (!replicas.grad_overlap) {
    time.dp_sync_s = group_sync(replicas.dense_dp_group, zero, dense_params, replicas.grad_bytes_per_param) +
                     group_sync(replicas.expert_dp_group, zero, expert_params, replicas.grad_bytes_per_param);
  } else {
    if (zero == 0) {
      time.dp_sync_s = footprint.grad_all_reduce_first_s + footprint.grad_all_reduce_rest_s;
    } else {
      time.dp_sync_s = footprint.grad_reduce_scatter_first_s + footprint.grad_reduce_scatter_rest_s;
    }
    if (zero == 1 || zero == 2) {
      if (replicas.param_overlap) {
        time.dp_sync_s += footprint.param_gather_first_s + footprint.param_gather_rest_s;
      } else {
        time.dp_sync_s += group_half_seconds(replicas.dense_dp_group, dense_params * kWeightBytesPerParam) +
                          group_half_seconds(replicas.expert_dp_group, expert_params * kWeightBytesPerParam);
      }
    }
  }
  const bool sharded = zero >= 1;
  const double owned = dense_params / (sharded ? replicas.dense_dp_size : 1) +
                       expert_params / (sharded ? replicas.expert_dp_size : 1);
  const double step_bytes = owned * replicas.step_bytes_per_param;
  time.optimizer_s = step_bytes <= 0 ? 0 : step_bytes / replicas.hbm_step_Bps;
  return time;
}

}  // namespace stage_kernel
}  // namespace nestfast
