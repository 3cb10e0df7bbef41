#pragma once
// Time and memory of ONE stage (a contiguous layer range on one pipeline
// rank), as pure O(1) functions over a LayerTable. evaluate_plan and the DP
// both call exactly these, and they compute with stage_cost_kernel.hpp's
// device-compilable functions, so the CPU and the gpu/ DP batch agree too.
//
// The objective they build (plan_cost.hpp repeats it):
//   t_r  = sum over the rank's stages of stage_time(...).total_s()      (per micro-batch)
//   T    = (m + (pp - 1) / vpp) * max_r t_r  +  W  +  max_r sync_time(rank r's footprint)
//   W    = sum over all stages of stage_time(...).p2p_warmup_s (interleaved with p2p overlap)
#include "solver/cluster/cluster_spec.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/stage_cost_kernel.hpp"

namespace nestfast {

ReplicaContext replica_context(const ClusterSpec& cluster, const Execution& execution, const ExecutionLayout& layout);

// `rank`: the stage's pipeline rank (its index in Execution::stages mod pp).
// `boundary_level` < 0: no incoming p2p (first stage, or same rank).
// `recompute_layers`: StagePlan::recompute_layers (block recompute under Full).
StageTime stage_time(const LayerTable& table, const ReplicaContext& replicas, int rank, int first_layer, int last_layer,
                     int boundary_level, Recompute recompute, int recompute_layers = 0);

StageFootprint stage_footprint(const LayerTable& table, int first_layer, int last_layer, Recompute recompute,
                               int recompute_layers = 0);

// Memory of one device of a pipeline rank holding `footprint` (its stages
// summed) with `stash_microbatches` = stash_depth(rank, ...).
StageMemory stage_memory(const ReplicaContext& replicas, const StageFootprint& footprint, double stash_microbatches);

// Once per iteration on a rank holding `footprint` (its stages summed):
// the gradient sync the step waits for (all-reduce, or reduce-scatter +
// all-gather of the weights under ZeRO >= 1, over the dense and the expert
// dp groups; with overlap only what the neighbouring layers' compute does
// not hide), plus the optimizer step (HBM-bound) on the rank's shard.
SyncTime sync_time(const ReplicaContext& replicas, const StageFootprint& footprint);

}  // namespace nestfast
