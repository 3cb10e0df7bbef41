#pragma once
// The DP kernel's view of one instance on the CPU: stage time, memory fit
// and DP-sync key of a layer range on pipeline rank j, computed by the cost
// model's own stage_cost.hpp functions (the ones evaluate_plan uses), so the
// DP optimises exactly what evaluate_plan prices.
//
// Ranges are half-open [a, b) over the layer chain (0 = embedding,
// 1..L = blocks, L+1 = head); stage_cost.hpp takes inclusive [a, b-1].
#include <array>
#include <vector>

#include "solver/search/execution.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/level_dp_kernel.hpp"
#include "solver/search/stage_cost.hpp"

namespace nestfast::search {

struct StageChoice {
  double time_s = kDpInfinity;  // per micro-batch; kDpInfinity when no allowed mode fits
  Recompute recompute = Recompute::None;
};

class StageOracle {
 public:
  // `recompute_mask`: bit r allows Recompute mode r.
  StageOracle(const LayerTable& table, const ReplicaContext& replicas, const ExecutionLayout& layout, int pp,
              int micro_batches, double hbm_bytes, unsigned recompute_mask);

  // The fastest allowed recompute mode that fits, for a stage on rank j.
  StageChoice choose(int a, int b, int rank) const;
  double time(int a, int b, int rank) const { return choose(a, b, rank).time_s; }
  // DP sync + optimizer step of the stage's parameters (what max_r S_r takes).
  double params(int a, int b) const;
  // Compute of [a, b) (forward + backward GEMMs and memory-bound ops): every
  // stage time includes its share, so it bounds any split's summed time.
  double floor(int a, int b) const;
  // The least memory a stage on rank j needs over the allowed modes.
  double min_memory(int a, int b, int rank) const;

  double memory(int a, int b, int rank, Recompute mode) const;
  int boundary_level(int rank) const { return rank_level_[static_cast<std::size_t>(rank)]; }

 private:
  const LayerTable& table_;
  const ReplicaContext& replicas_;
  std::vector<int> rank_level_;
  std::vector<double> stash_;  // stash depth per rank
  double hbm_bytes_;
  std::array<Recompute, kRecomputeModes> modes_{};  // allowed modes, cheapest time first
  int mode_count_ = 0;
};

}  // namespace nestfast::search
