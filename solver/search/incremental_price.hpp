#pragma once
// price_plan's price of one plan, kept up to date under the local changes a
// random walk makes, re-pricing only the pipeline ranks a change touches:
// a boundary move re-prices the two ranks beside it, a recompute change
// its rank, each rank O(1) per stage (stage_cost.hpp on the instance's
// LayerTable). Per rank it keeps t_r, S_r and whether the rank fits in HBM;
// the maxima of t_r and S_r are updated per change (a rescan only when the
// rank holding a maximum drops). A rank is re-priced from its stages in
// stage order, exactly as price_plan sums them, so price() equals
// price_plan bit for bit (a unit test checks it over random walks).
#include <cstdint>
#include <vector>

#include "solver/search/execution.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/plan_pricer.hpp"
#include "solver/search/solve.hpp"
#include "solver/search/stage_cost.hpp"

namespace nestfast::search {

class IncrementalPrice {
 public:
  // Prices every stage of `plan`, which must be valid for `layout` (derived
  // fields filled); the table must outlive this object's use of it.
  // Returns the stages priced (pp * vpp).
  std::uint64_t reset(const SolveProblem& problem, Execution plan, const ExecutionLayout& layout,
                      const LayerTable& table);

  // Stage `stage` (>= 1) starts at `first_layer` and stage - 1 ends just
  // before it; first_layer must lie in (stages[stage-1].first_layer,
  // stages[stage].last_layer]. Returns the stages priced (vpp per rank).
  std::uint64_t move_boundary(int stage, int first_layer);
  // Every stage of pipeline rank `rank` gets `mode`. Returns the stages priced.
  // `recompute_layers`: StagePlan::recompute_layers of the new mode.
  std::uint64_t set_rank_recompute(int rank, Recompute mode, int recompute_layers = 0);

  // Keep, or take back, the changes since the last reset/commit/undo.
  void commit();
  void undo();

  PlanPrice price() const;
  const Execution& plan() const { return plan_; }

 private:
  struct Totals {
    double max_time_s = 0;
    int max_time_rank = 0;
    double max_sync_s = 0;
    int max_sync_rank = 0;
    int ranks_over_hbm = 0;
  };

  RankPrice price_rank(int rank) const {
    return search::price_rank(plan_, rank, *table_, replicas_, hbm_bytes_);
  }
  std::uint64_t reprice(int rank);  // logs the old value for undo
  void rescan_maxima();

  const LayerTable* table_ = nullptr;
  ReplicaContext replicas_;
  double hbm_bytes_ = 0;
  int micro_batches_ = 0;
  Execution plan_;
  std::vector<RankPrice> ranks_;
  Totals totals_;

  // Undo log since the last commit.
  bool changed_ = false;
  Totals saved_totals_;
  std::vector<std::pair<int, StagePlan>> saved_stages_;
  std::vector<std::pair<int, RankPrice>> saved_ranks_;
};

}  // namespace nestfast::search
