#pragma once
// What the search may choose, and what the user restricted it to.
// An empty list means "every valid value"; a non-empty list is the user's
// restriction, and values that are invalid for the model or GPU count are
// dropped by enumerate_instances (not an error unless nothing is left).
#include <string>
#include <vector>

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
  // The recompute modes each stage may pick from (the DP picks per stage).
  std::vector<Recompute> recompute;
  // Placement orders to try, each a permutation of the five dims, innermost
  // first. Empty = every order of the dims whose degree exceeds 1.
  std::vector<std::vector<ParallelDim>> placements;
  // false: pipeline stages get (as near as possible) equal block counts, as
  // Megatron-LM's --num-layers-per-virtual-pipeline-stage does.
  bool uneven_layers = true;
};

// Defaults when a list is empty (beyond "divides what it must"):
inline constexpr int kDefaultMaxCp = 8;
inline constexpr int kDefaultMaxMicroBatch = 8;
inline constexpr int kDefaultMaxVpp = 4;

// "1,2,4" -> {1,2,4}; "all" or "" -> {}. Throws std::invalid_argument naming
// `what` (a flag) on anything else or on a value < `minimum`.
std::vector<int> parse_int_list(const std::string& text, const std::string& what, int minimum);
// "none,selective,full" or "all".
std::vector<Recompute> parse_recompute_list(const std::string& text, const std::string& what);
// "tp,cp,ep,dp,pp" (a full permutation, or a partial one whose missing dims are
// appended in the default order); several orders separated by ';' or "all".
std::vector<std::vector<ParallelDim>> parse_placement_list(const std::string& text, const std::string& what);

std::string placement_to_string(const std::vector<ParallelDim>& placement);

}  // namespace nestfast::search
