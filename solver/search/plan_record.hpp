#pragma once
// The one record of a priced plan: what `solve`, `query` and `evaluate` print
// (text and --json) and what the catalog stores (/plans and /stages). Every
// field name carries its unit (_s seconds, _bytes bytes, _pct percent,
// _per_microbatch_s seconds per micro-batch); a name without a suffix is a
// count, a degree, a flag or a name. io/record_json writes and reads it as
// JSON, io/catalog as HDF5 rows, jobs/plan_text.cpp as text, all with these
// names. execution_of() turns a record back into the Execution that was
// priced, so any printed plan can be priced again (`evaluate --plan`).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/plan_cost.hpp"

namespace nestfast::search {

struct StageRecord {
  int stage = 0;          // index in pipeline order (pp * vpp stages)
  int pipeline_rank = 0;  // stage % pp
  int first_layer = 0;    // inclusive, in the chain 0 = embedding, 1..L = blocks, L+1 = head
  int last_layer = 0;
  int devices = 0;        // devices running the stage (gpus / pp)
  int first_device = 0;
  int boundary_level = -1;          // network level of the p2p into the stage; -1: none
  std::string boundary_level_name;  // that level's name; "" when boundary_level is -1
  Recompute recompute = Recompute::None;
  int recompute_layers = 0;  // full: 0 = every block, N > 0 = the first N (Megatron's block method)
  double forward_per_microbatch_s = 0;   // forward compute + TP/CP/EP communication
  double backward_per_microbatch_s = 0;  // backward + recompute + ZeRO-3 gathers
  double p2p_per_microbatch_s = 0;       // the incoming pipeline send
  // Memory per device of the pipeline rank running the stage (with vpp > 1
  // several stages share a rank and so these numbers).
  double memory_bytes = 0;
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double working_bytes = 0;
};

struct PlanRecord {
  std::optional<std::uint64_t> point_id;  // the sweep point, for plans read from a catalog
  std::string model;
  std::string cluster;
  int gpus = 0;
  int global_batch = 0;  // sequences
  int seq_len = 0;       // tokens per sequence (resolved: never 0)
  std::string kind;      // "nest", "manual", "phaze", "mcmc", "exhaustive", "given"
  int rank_k = 0;        // nest: 0 = best, 1.. alternatives; 0 for the others
  bool feasible = false;
  std::string infeasible_reason;  // empty when feasible (not stored in catalogs)

  int tp = 0, cp = 0, ep = 0, pp = 0, dp = 0;
  int etp = 0;  // expert tensor parallelism (Execution::etp(): tp, or 1 for whole experts); 0 = tp
  bool sp = false;
  int micro_batch = 0;    // sequences per micro-batch
  int micro_batches = 0;  // per iteration and data-parallel replica
  int zero_stage = 0;
  int vpp = 0;
  std::string recompute;  // "none", "selective", "full", "full/N" (block method, N layers), or "mixed" (per stage then)
  RecomputeModules recompute_modules = kDefaultRecomputeModules;  // what selective stages checkpoint
  std::vector<ParallelDim> placement;  // innermost first
  Optimizer optimizer = Optimizer::Adam;
  AllToAllAlgorithm a2a = AllToAllAlgorithm::Fast;
  double moe_imbalance = 1;  // hottest expert device's tokens / mean
  Framework framework = Framework::Nest;
  Attention attention = Attention::Flash;
  Overlap overlap;             // the overlaps asked for (stored)
  std::string overlap_priced;  // the ones Megatron-LM runs for the plan, so priced (effective_overlap with the
                               // model: set by plan_record and query; empty on an unpriced record)
  GradReduce grad_reduce = GradReduce::Fp32;  // the gradients' dtype, kept and reduced
  // What Megatron-LM runs for the plan (solver/search/megatron_args.hpp):
  // the argument line and its environment are stored with the plan, the
  // notes (why framework nest cannot run as priced) are derived again.
  std::string megatron_args;
  std::string megatron_environment;
  std::vector<std::string> megatron_notes;

  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double mfu_pct = 0;
  double memory_peak_bytes = 0;
  double hbm_bytes = 0;  // per device
  TimeBreakdown breakdown;
  std::vector<StageRecord> stages;
};

// A priced plan. `execution` has its stage layout derived (first_device,
// boundary_level); `cost` is evaluate_plan's price of it. A framework-nest
// plan that Megatron-Core runs exactly as priced (its rules, its rank order
// and expert grid, the same time and memory) is recorded as megatron-core.
PlanRecord plan_record(const ModelSpec& model, const ClusterSpec& cluster, const Execution& execution,
                       const PlanCost& cost, const std::string& kind, int rank_k);

// Prices `execution` (deriving its stage layout) and records it.
PlanRecord price_plan_record(const ModelSpec& model, const ClusterSpec& cluster, Execution execution,
                             const std::string& kind, int rank_k);

// A plan that does not exist (no feasible plan) or does not fit: identity and
// whatever degrees `execution` has (none when it is null), no price.
PlanRecord unpriced_plan_record(const std::string& model, const std::string& cluster, int gpus, int global_batch,
                                int seq_len, const std::string& kind, int rank_k, const Execution* execution);

// The Execution the record describes (degrees, options, placement, stage
// ranges and recompute modes); the stage layout is left to derive_stage_layout.
Execution execution_of(const PlanRecord& record);

// "none" / "selective" / "full" (or "full/N" with block recompute of N
// layers) when every stage agrees, else "mixed".
std::string recompute_summary(const Execution& execution);


}  // namespace nestfast::search
