#pragma once
// Where an Execution's communication groups and pipeline boundaries sit on
// the cluster's levels (rules in execution.hpp). Computed once per
// (degrees, placement) and shared by evaluate_plan and the DP.
#include <array>
#include <cstdint>
#include <vector>

#include "solver/cluster/cluster_spec.hpp"
#include "solver/cluster/collectives.hpp"
#include "solver/model/model_spec.hpp"
#include "solver/search/execution.hpp"

namespace nestfast {

struct ExecutionLayout {
  std::array<int, kParallelDims> size{};    // per ParallelDim: tp, cp, ep, pp, dp/ep
  std::array<int, kParallelDims> stride{};  // device-index stride of each dim

  // Shapes (worst copy, level by level) of the groups a layer talks in.
  GroupShape tp_group;
  GroupShape cp_group;
  GroupShape ep_group;
  GroupShape dense_dp_group;   // dp * cp ranks holding the same dense weights
  GroupShape expert_dp_group;  // dp/ep * cp ranks holding the same experts

  // Per pipeline rank r (size pp): the device of rank r with all other
  // coordinates 0, and the level of the p2p from rank r-1 into rank r
  // (index 0: the wrap-around rank pp-1 -> 0 that interleaving uses;
  // -1 when pp == 1).
  std::vector<int> rank_first_device;
  std::vector<int> rank_boundary_level;

  // Level of the p2p into stage `stage` of an execution with these degrees
  // (-1 for stage 0 or pp == 1).
  int stage_boundary_level(int stage) const;
  int stage_first_device(int stage) const;
};

// Throws std::invalid_argument naming the offending flag (--tp, --dp, --ep,
// --placement, ...) when the degrees do not fit the model or the cluster:
// product != devices, tp not dividing heads / kv_heads, ep not dividing dp
// or the expert count, cp not dividing seq_len, global batch not divisible
// by dp * micro_batch, vpp > 1 with layers that cannot be split, a bad
// placement, more devices than the cluster has.
void validate_degrees(const ModelSpec& model, const ClusterSpec& cluster, const Execution& execution,
                      int devices);

ExecutionLayout compute_layout(const ClusterSpec& cluster, const Execution& execution);

// Devices in one block of each level, innermost first (products of the group
// sizes; int64 max for an unbounded level and above).
std::vector<std::int64_t> level_spans(const ClusterSpec& cluster);

// Uniform stages (Megatron's default: blocks split as evenly as possible,
// earlier stages take the remainder; embedding on stage 0, head on the last;
// with more stages than blocks the embedding and then the head get a stage
// of their own), all with `recompute`; first_device and boundary_level
// filled in.
std::vector<StagePlan> uniform_stages(const ModelSpec& model, const ExecutionLayout& layout, int pp,
                                      int vpp, Recompute recompute);

// Megatron's uneven first / last pipeline stage
// (--decoder-first-pipeline-num-layers F, --decoder-last-pipeline-num-layers
// L; 0 = not given): pipeline rank 0 holds F blocks, rank pp-1 holds L, the
// other ranks split the rest evenly, and every rank splits its blocks evenly
// over its vpp chunks (megatron/core/transformer/transformer_block.py:103);
// the embedding on the first chunk, the head on the last. Throws
// std::invalid_argument naming the flag when the split is not even.
std::vector<StagePlan> first_last_stages(const ModelSpec& model, const ExecutionLayout& layout, int pp, int vpp,
                                         int first_blocks, int last_blocks, Recompute recompute);

// Fill first_device and boundary_level of execution.stages from the layout.
void derive_stage_layout(const ExecutionLayout& layout, Execution& execution);

// Throws std::invalid_argument when the stages do not cover the chain
// 0..L+1 in order, their count is not pp*vpp, or a derived field disagrees
// with the layout.
void validate_stages(const ModelSpec& model, const ExecutionLayout& layout, const Execution& execution);

}  // namespace nestfast
