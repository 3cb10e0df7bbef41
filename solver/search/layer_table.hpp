#pragma once
// Per-layer costs of one sub-graph config (tp, cp, ep, sp), micro-batch size
// and placement, as flat prefix-summed columns so any stage [first, last]
// costs O(1). Built once per DP instance; evaluate_plan and the DP read the
// same table through stage_cost.hpp, so they agree exactly.
//
// Layer index: 0 = embedding, 1..L = transformer blocks, L+1 = head
// (final norm + LM head + cross-entropy loss). All values are per device and
// per micro-batch (one micro-batch = micro_batch sequences of one dp replica).
#include <array>
#include <cstdint>
#include <vector>

#include "solver/cluster/cluster_spec.hpp"
#include "solver/cluster/collectives.hpp"
#include "solver/cluster/host_device.hpp"
#include "solver/model/layer_work.hpp"
#include "solver/model/model_spec.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/execution_layout.hpp"

namespace nestfast {

// What a layer table depends on (and nothing else).
struct LayerTableConfig {
  int tp = 1;
  int cp = 1;
  int ep = 1;
  int etp = 0;  // 0 = tp
  bool sp = false;
  int micro_batch = 1;
  int seq_len = 0;  // resolved (never 0 here)
  GroupShape tp_group;
  GroupShape cp_group;
  GroupShape ep_group;
  GroupShape dense_dp_group;   // for each layer's own (bucketed) gradient and weight collectives
  GroupShape expert_dp_group;
  AllToAllAlgorithm a2a = AllToAllAlgorithm::Fast;
  double expert_imbalance = 1.0;
  Attention attention = Attention::Flash;
  bool causal = true;  // the model's mask (ModelSpec::causal)
  RecomputeModules recompute_modules = kDefaultRecomputeModules;  // what selective recompute checkpoints
  double grad_reduce_bytes_per_param = 4;  // the DP gradient collectives' dtype (Execution::grad_reduce)
  // Overlaps that apply to this configuration (Execution::overlap where
  // Megatron can run it): TP comm needs sp and tp > 1; the MoE all-to-all
  // overlap needs ep > 1 and, with pp > 1, interleaving; the shared-expert
  // overlap needs ep > 1 and not the former; so does the experts' weight
  // gradients beside the dispatch's backward.
  bool tp_comm_overlap = false;
  bool moe_a2a_overlap = false;
  bool moe_shared_overlap = false;
  bool moe_dispatch_wgrad_overlap = false;
};

LayerTableConfig layer_table_config(const ModelSpec& model, const Execution& execution,
                                    const ExecutionLayout& layout);

// How the config shards one layer (what layer_work prices): the table's rows
// and anything else that needs one layer's work under the plan.
Sharding layer_sharding(const LayerTableConfig& config);

// Summable per-layer quantities.
enum class LayerColumn : int {
  ForwardCompute,   // s: GEMMs on the efficiency curve + HBM-bound ops + fused attention + kernel overheads
  ForwardTp,        // s: TP all-reduces (or all-gather + reduce-scatter with sp); with tp_comm_overlap the
                    //    part the neighbouring GEMMs do not hide, plus their slowdown
  ForwardCp,        // s: CP ring K/V exchange not hidden behind attention
  ForwardEp,        // s: MoE dispatch + combine all-to-all (serial; under moe_shared_overlap what the
                    //    shared experts beside them do not hide, plus their slowdown; BackwardEp also
                    //    under moe_dispatch_wgrad_overlap, the dispatch's gradient beside the experts' wgrad)
  BackwardCompute,  // s
  BackwardTp,
  BackwardCp,
  BackwardEp,
  EpOverlapped,     // s: fw + bw all-to-alls under moe_a2a_overlap, behind another micro-batch's compute
  // Data-parallel collectives of the layer's own parameters, one bucket per
  // layer (Megatron-Core buckets them by layer in backward order), and
  // what of each is exposed when it overlaps the neighbouring layer's
  // compute (overlap.hpp); a stage's first layer has nothing to hide behind
  // (stage_cost_kernel.hpp adds its own time instead).
  GradAllReduce,          // s: ZeRO-0 all-reduce of the gradients
  GradAllReduceExposed,   //    ... behind the backward of the layer before it (processed next)
  GradReduceScatter,      // s: ZeRO >= 1 reduce-scatter of the gradients
  GradReduceScatterExposed,
  ParamAllGather,         // s: ZeRO >= 1 all-gather of the weights
  ParamAllGatherExposed,  //    ... behind the forward of the layer before it (run just before)
  ParamAllGatherExposedBackward,  // ... behind the backward of the layer after it (ZeRO-3's backward gathers)
  RecomputeSelective,  // s added to backward under selective recompute (attention core forward)
  RecomputeFull,       // s added under full recompute (the whole forward incl. its TP/CP/EP comm)
  DenseParams,         // parameters on this device replicated over the dense dp group
  ExpertParams,        // parameters on this device replicated over the expert dp group
  StashNone,           // bytes kept per in-flight micro-batch, no recompute
  StashSelective,      // ... selective recompute
  StashFull,           // ... full recompute (the block input only)
  ModelFlops,          // fw + bw FLOPs this device does per micro-batch (no recompute), for MFU
  RecomputeSelectiveFlops,
  RecomputeFullFlops,
  Count
};
inline constexpr int kLayerColumns = static_cast<int>(LayerColumn::Count);

// Rows of the working-set sparse table of `layers` layers (row k holds the
// maxima of 2^k consecutive layers): floor(log2(layers)) + 1.
NESTFAST_HD inline int working_table_rows(int layers) {
  int rows = 1;
  while ((2 << (rows - 1)) <= layers) ++rows;
  return rows;
}

// A LayerTable's storage seen through pointers (LayerTable::view()).
struct LayerTableView {
  int layers = 0;                           // chain length L + 2
  const double* prefix = nullptr;           // kLayerColumns x (layers + 1) prefix sums
  const double* working = nullptr;          // sparse table: row k (max of 2^k layers) at k * layers
  const double* output_bytes = nullptr;     // layers
  int levels = 0;
  const double* level_latency_s = nullptr;  // levels
  const double* level_bandwidth_Bps = nullptr;  // levels, effective
  double tied_head_params = 0;
  double overlap_slowdown = 0;    // GpuSpec::overlap_slowdown, for the overlaps priced per stage
  bool moe_a2a_overlap = false;   // LayerTableConfig::moe_a2a_overlap

  NESTFAST_HD double sum(LayerColumn column, int first, int last) const {
    const double* p = prefix + static_cast<int>(column) * (layers + 1);
    return p[last + 1] - p[first];
  }

  NESTFAST_HD double max_working_bytes(int first, int last) const {
    const int k = working_table_rows(last - first + 1) - 1;
    const double left = working[k * layers + first];
    const double right = working[k * layers + last + 1 - (1 << k)];
    return left > right ? left : right;
  }

  // p2p of `bytes` at `level` (clamped to the levels there are).
  NESTFAST_HD double p2p_time(int level, double bytes) const {
    const int l = level < 0 ? 0 : (level >= levels ? levels - 1 : level);
    return level_latency_s[l] + bytes / level_bandwidth_Bps[l];
  }
};

class LayerTable {
 public:
  LayerTable() = default;
  // `values[c][i]` = column c of layer i; working_bytes[i] = the transient
  // peak while layer i runs (not summed: a range max).
  LayerTable(const std::array<std::vector<double>, kLayerColumns>& values, std::vector<double> output_bytes,
             std::vector<double> working_bytes, std::vector<NetworkLevel> levels, double tied_head_params = 0,
             double overlap_slowdown = 0, bool moe_a2a_overlap = false);

  int layers() const { return layers_; }  // L + 2

  // Sum of column c over layers first..last (inclusive). O(1).
  double sum(LayerColumn column, int first, int last) const { return view().sum(column, first, last); }
  double value(LayerColumn column, int layer) const { return sum(column, layer, layer); }

  // Activation bytes layer i hands to layer i+1 (the p2p payload when a
  // stage boundary sits after layer i).
  double output_bytes(int layer) const { return output_bytes_[static_cast<std::size_t>(layer)]; }

  // Max working set over layers first..last. O(1) (sparse table).
  double max_working_bytes(int first, int last) const { return view().max_working_bytes(first, last); }

  // With tied embeddings the head keeps its own copy of the embedding
  // matrix (Megatron-LM does so on the last pipeline stage); a stage that
  // holds both ends of the chain keeps one. These are the head's copy's
  // parameters (0 when untied).
  double tied_head_params() const { return tied_head_params_; }

  // p2p of `bytes` at `level` (alpha + bytes / effective bandwidth).
  double p2p_time(int level, double bytes) const { return view().p2p_time(level, bytes); }

  // The storage as plain pointers, valid while the table lives.
  LayerTableView view() const;

 private:
  int layers_ = 0;
  std::vector<double> prefix_;  // kLayerColumns x (layers_ + 1)
  std::vector<double> output_bytes_;
  std::vector<double> working_max_;  // sparse table, [k * layers_ + i] = max of 2^k layers from i
  std::vector<double> level_latency_s_;
  std::vector<double> level_bandwidth_Bps_;
  double tied_head_params_ = 0;
  double overlap_slowdown_ = 0;
  bool moe_a2a_overlap_ = false;
};

LayerTable build_layer_table(const ModelSpec& model, const ClusterSpec& cluster, const LayerTableConfig& config);

}  // namespace nestfast
