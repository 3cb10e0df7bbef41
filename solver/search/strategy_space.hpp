#pragma once
// What the search may choose, and what the user restricted it to.
// An empty list means "every valid value"; a non-empty list is the user's
// restriction, and values that are invalid for the model or GPU count are
// dropped by enumerate_instances (not an error unless nothing is left).
#include <string>
#include <vector>

#include "solver/model/model_spec.hpp"
#include "solver/search/execution.hpp"

namespace nestfast::search {

struct StrategySpace {
  std::vector<int> tp;
  std::vector<int> cp;
  std::vector<int> ep;
  std::vector<int> pp;
  std::vector<int> dp;
  std::vector<int> micro_batch;
  std::vector<int> sp;          // 0 = off, 1 = on
  std::vector<int> zero_stage;  // 0..3
  std::vector<int> vpp;         // 1 = plain 1F1B, v > 1 = interleaved with v chunks
  // The recompute modes each stage may pick from (the DP picks per stage;
  // under MegatronCore each mode is its own instance: one setting per plan).
  std::vector<Recompute> recompute;
  // Block recompute (Megatron's --recompute-method block) of the first N
  // blocks of every stage, N from this list; empty = powers of two below the
  // blocks per stage. 0 in the list = no block recompute (full means every
  // layer). Under Nest these are the MegatronCore plans of its space.
  std::vector<int> recompute_layers;
  // The module sets a selectively recomputed stage may checkpoint (Megatron's
  // --recompute-modules; one per instance). Empty = default_module_sets.
  std::vector<RecomputeModules> recompute_modules;
  // MegatronCore: ZeRO-2/3 (Megatron-FSDP) with pp > 1, which no upstream
  // test runs (megatron_rules.hpp, FsdpWithoutPipeline).
  bool allow_fsdp_with_pipeline = false;
  // Placement orders to try, each a permutation of the five dims, innermost
  // first. Empty = every order of the dims whose degree exceeds 1.
  std::vector<std::vector<ParallelDim>> placements;
  // false: pipeline stages get (as near as possible) equal block counts, as
  // Megatron-LM's --num-layers-per-virtual-pipeline-stage does.
  bool uneven_layers = true;
};

// What a restriction may list, on the command line and in job files alike.
struct ListRange {
  int minimum;
  int maximum;
};
inline constexpr ListRange kTpRange{1, 1024};
inline constexpr ListRange kCpRange{1, 1024};
inline constexpr ListRange kEpRange{1, 4096};
inline constexpr ListRange kPpRange{1, 4096};
inline constexpr ListRange kDpRange{1, 1 << 24};
inline constexpr ListRange kMicroBatchRange{1, 4096};
inline constexpr ListRange kZeroRange{0, 3};
inline constexpr ListRange kVppRange{1, 64};
inline constexpr ListRange kRecomputeLayersRange{0, 4096};  // block recompute; 0 = every layer

// Defaults when a list is empty (beyond "divides what it must"):
inline constexpr int kDefaultMaxCp = 8;
inline constexpr int kDefaultMaxMicroBatch = 8;
inline constexpr int kDefaultMaxVpp = 4;

// A placement order as text, innermost first: "tp,cp,ep,dp,pp", or a partial
// order whose missing dims go outermost in the default order. The inverse of
// placement_to_string; evaluate --placement, each order of solve --placement
// and a catalog's placement_order read it. Throws std::invalid_argument
// naming `what` on an unknown or repeated dim.
std::vector<ParallelDim> parse_placement(const std::string& text, const std::string& what);

std::string placement_to_string(const std::vector<ParallelDim>& placement);

// The module sets searched when none are given: Megatron's default
// (core_attn) and, where the model has them, core_attn with the modules whose
// forward is cheap to run again (layernorm, moe_act, mla_up_proj: memory-bound
// ops and MLA's small up projections), as Megatron's MoE recipes run them.
// mlp, moe and shared_experts rerun GEMMs and collectives, which full
// recompute of N blocks already trades; they are searched when listed.
std::vector<RecomputeModules> default_module_sets(const ModelSpec& model);

}  // namespace nestfast::search
