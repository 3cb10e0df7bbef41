#pragma once
// Time and memory of ONE stage (a contiguous layer range on one pipeline
// rank), as pure O(1) functions over a LayerTable. evaluate_plan and the DP
// both call exactly these, so they agree by construction.
//
// The objective they build (plan_cost.hpp repeats it):
//   t_r  = sum over the rank's stages of stage_time(...).total_s()      (per micro-batch)
//   T    = (m + (pp - 1) / vpp) * max_r t_r  +  max_r sync_time(rank r's params)
#include "solver/cluster/cluster_spec.hpp"
#include "solver/cluster/collectives.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/memory_model.hpp"

namespace nestfast {

// Everything about the data-parallel replicas a stage's cost needs.
struct ReplicaContext {
  const ClusterSpec* cluster = nullptr;
  GroupShape dense_dp_group;   // dp * cp ranks
  GroupShape expert_dp_group;  // dp / ep * cp ranks
  int dense_dp_size = 1;       // dp * cp (exact, for ZeRO sharding)
  int expert_dp_size = 1;      // dp / ep * cp
  int zero_stage = 0;
  Optimizer optimizer = Optimizer::Adam;
};

ReplicaContext replica_context(const ClusterSpec& cluster, const Execution& execution, const ExecutionLayout& layout);

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

  double total_s() const {
    return forward_compute_s + backward_compute_s + recompute_s + tp_comm_s + cp_comm_s + ep_comm_s +
           zero3_gather_s + p2p_s;
  }

  StageTime& operator+=(const StageTime& other);  // part by part: the stages of one pipeline rank
};

// `boundary_level` < 0: no incoming p2p (first stage, or same rank).
StageTime stage_time(const LayerTable& table, const ReplicaContext& replicas, int first_layer, int last_layer,
                     int boundary_level, Recompute recompute);

// What a stage puts on its device, before stash depth and ZeRO are applied.
struct StageFootprint {
  double dense_params = 0;
  double expert_params = 0;
  double stash_bytes_per_microbatch = 0;  // under the stage's recompute mode
  double working_bytes = 0;               // max over its layers

  StageFootprint& operator+=(const StageFootprint& other);  // sums; working = max
};

StageFootprint stage_footprint(const LayerTable& table, int first_layer, int last_layer, Recompute recompute);

struct StageMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;  // stash of the in-flight micro-batches
  double working_bytes = 0;      // transient peak + runtime reserve

  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + working_bytes;
  }
};

// Memory of one device of a pipeline rank holding `footprint` (its stages
// summed) with `stash_microbatches` = stash_depth(rank, ...).
StageMemory stage_memory(const ReplicaContext& replicas, const StageFootprint& footprint, double stash_microbatches);

// Once per iteration on a rank: gradient sync that is not overlapped
// (all-reduce, or reduce-scatter + all-gather of the weights under ZeRO >= 1)
// over the dense and the expert dp groups, plus the optimizer step
// (HBM-bound) on the rank's shard.
struct SyncTime {
  double dp_sync_s = 0;
  double optimizer_s = 0;
  double total_s() const { return dp_sync_s + optimizer_s; }
};

SyncTime sync_time(const ReplicaContext& replicas, double dense_params, double expert_params);

}  // namespace nestfast
