#pragma once
// The price of one complete plan: the objective the DP minimises, spelled
// out once.
//
//   m    = global_batch / (dp * micro_batch)
//   t_r  = sum over the stages on pipeline rank r of stage_time().total_s()
//          (forward + backward + recompute + TP/CP/EP comm + ZeRO-3 gathers
//          + the incoming p2p, per micro-batch; stage_cost.hpp)
//   S_r  = sync_time(rank r's footprint).total_s()
//          (the dp gradient sync the step waits for + optimizer step)
//   T    = (m + (pp - 1) / vpp) * max_r t_r  +  W  +  max_r S_r   (W: pipeline_time.hpp)
//   feasible  <=>  for every rank r: stage_memory(...).total_bytes() <= HBM
//
// Throughput = global_batch * seq_len / T tokens/s.
// MFU = model FLOPs (fw + bw, no recompute) / (T * devices * peak bf16);
// HFU counts the recomputed forward too (the Megatron-LM paper's "% of peak").
#include <string>
#include <vector>

#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/stage_cost.hpp"

namespace nestfast {

struct TimeBreakdown {
  // Summed over one iteration on the bottleneck rank's critical path:
  // m * (that rank's per-micro-batch parts) ...
  double compute_s = 0;      // forward + backward GEMMs and HBM-bound ops
  double recompute_s = 0;
  double tp_comm_s = 0;
  double cp_comm_s = 0;
  double ep_comm_s = 0;
  double zero3_gather_s = 0;
  double p2p_s = 0;
  double bubble_s = 0;       // (pp - 1) / vpp * t_max + the warm-up / cool-down transfers (pipeline_time.hpp)
  double dp_sync_s = 0;      // max_r S_r split into its two parts
  double optimizer_s = 0;
};

struct RankCost {
  int rank = 0;
  int first_device = 0;
  std::vector<int> stages;   // indices into Execution::stages
  int layers = 0;            // layers (chain entries) on the rank
  double time_per_microbatch_s = 0;  // t_r
  StageTime time;                    // summed over the rank's stages
  SyncTime sync;
  StageMemory memory;
  double stash_microbatches = 0;
};

struct PlanCost {
  bool feasible = false;
  std::string infeasible_reason;  // empty when feasible
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double sequences_per_s = 0;
  double mfu = 0;
  double hfu = 0;
  double model_flops = 0;     // per iteration, all devices
  double hardware_flops = 0;  // including recompute
  int bottleneck_rank = 0;
  int micro_batches = 0;
  TimeBreakdown breakdown;
  std::vector<RankCost> ranks;  // one per pipeline rank
  double memory_peak_bytes = 0;
  double hbm_bytes = 0;
};

// Validates the inputs (std::invalid_argument naming the offending flag or
// field) and prices the plan. An execution without stages gets uniform ones
// (recompute None). Memory overflow is not an error: feasible = false.
PlanCost evaluate_plan(const ModelSpec& model, const ClusterSpec& cluster, const Execution& execution);

}  // namespace nestfast
