#pragma once
// What the instances of one problem share, for solve()'s branch and bound:
//  - a lower bound per instance, computed without a placement (the compute
//    columns of a layer table do not depend on where the groups sit; a unit
//    test checks that), so instances that cannot enter the top-k are
//    dropped before their layout is ever computed;
//  - layouts and layer tables built on first use and cached (thread-safe):
//    one per distinct (degrees, placement), one per distinct layer-table
//    config; ZeRO, schedule and micro-batch variants reuse them.
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "solver/search/dp_batch.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/solve.hpp"
#include "solver/search/stage_cost.hpp"

namespace nestfast::search {

struct PreparedInstance {
  std::shared_ptr<const ExecutionLayout> layout;
  std::shared_ptr<const LayerTable> table;
};

class SearchContext {
 public:
  SearchContext(const SolveProblem& problem, const std::vector<DpInstance>& instances);

  // An iteration time no plan of instance i beats.
  double lower_bound(std::size_t i) const { return lower_bound_[i]; }
  const std::vector<double>& lower_bounds() const { return lower_bound_; }
  // Whether no plan of instance i can fit (memory_floor exceeds HBM).
  bool surely_infeasible(std::size_t i) const { return surely_infeasible_[i] != 0; }
  // Layout and layer table of instance i; safe to call from many threads.
  PreparedInstance prepare(std::size_t i);

  std::size_t layouts_built() const { return layouts_.size(); }
  std::size_t tables_built() const { return tables_.size(); }

 private:
  const SolveProblem& problem_;
  const std::vector<DpInstance>& instances_;
  std::vector<double> lower_bound_;
  std::vector<char> surely_infeasible_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const ExecutionLayout>> layouts_;
  std::map<std::string, std::shared_ptr<const LayerTable>> tables_;
};

// The layout and layer table of one instance, built afresh (SearchContext::
// prepare builds each distinct one once and shares it).
PreparedInstance prepare_instance(const SolveProblem& problem, const DpInstance& instance);

// The layer table of (tp, cp, ep, sp, mbs) with every group on one node:
// its compute columns are those of any placement.
LayerTable compute_only_table(const SolveProblem& problem, const DpInstance& instance);

// Per-device memory no plan of the instance goes below, from a placement-
// free table: the rank with the most dense (expert) parameters holds at
// least 1/pp of them, and every single layer sits on some rank with its own
// weights and working set (stash counted as 0, memory grows with each part).
double memory_floor(const SolveProblem& problem, const DpInstance& instance, const LayerTable& table);

// A DP-sync + optimizer time no plan beats: the most loaded rank holds at
// least 1/pp of the dense parameters and exposes at least the smallest
// layer's own bucket, and sync_time grows with every part of its footprint.
// Shaved by 1e-9 relative against rounding.
double sync_floor(const ReplicaContext& replicas, const LayerTable& table, int pp);

// The pipeline time of max(all compute / pp, the largest layer's compute),
// shaved by 1e-9 relative so rounding never lifts it above a real plan's.
double pipeline_floor(const SolveProblem& problem, const DpInstance& instance, const LayerTable& table);

// solve_instance on a prepared layout and table, returning only plans whose
// time is <= time_bound (an instance whose optimum is worse comes back with
// pruned_by_bound set). With explain = false an infeasible instance skips
// its diagnosis (min_memory_bytes, infeasible_reason), which only matters
// when no instance is feasible. With time_bound = +inf and explain = true
// it is solve_instance exactly.
InstanceResult solve_prepared(const SolveProblem& problem, const DpInstance& instance, const ExecutionLayout& layout,
                              const LayerTable& table, double time_bound, bool explain);

// One instance of a batch with its problem and prepared layout and table.
struct PreparedItem {
  const SolveProblem* problem = nullptr;
  const DpInstance* spec = nullptr;
  const ExecutionLayout* layout = nullptr;
  const LayerTable* table = nullptr;
};

// solve_prepared on every item, their Pareto walks advanced in rounds: each
// round hands one DP run of every unfinished walk to `runner` at once (a GPU
// batch). Equal to solve_prepared item by item whatever the runner, as long
// as it returns what level_dp_run does.
std::vector<InstanceResult> solve_prepared_batch(std::span<const PreparedItem> items, double time_bound, bool explain, const DpBatchRunner& runner);

}  // namespace nestfast::search
