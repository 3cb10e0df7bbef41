#pragma once
// The DP kernel's view of one instance: stage time, memory fit and DP-sync
// key of a layer range on pipeline rank j, computed by stage_cost_kernel.hpp
// (the functions evaluate_plan uses), so the DP optimises exactly what
// evaluate_plan prices. DpStageOracle is plain data over pointers and
// device-compilable: the CPU DP and the gpu/ batch kernel run the same code.
//
// Ranges are half-open [a, b) over the layer chain (0 = embedding,
// 1..L = blocks, L+1 = head); the stage cost functions take inclusive [a, b-1].
#include <vector>

#include "solver/cluster/host_device.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/level_dp_kernel.hpp"
#include "solver/search/stage_cost_kernel.hpp"

namespace nestfast::search {

struct StageChoice {
  double time_s = kDpInfinity;  // per micro-batch; kDpInfinity when no allowed mode fits
  Recompute recompute = Recompute::None;
};

struct DpStageOracle {
  LayerTableView table;
  ReplicaContext replicas;
  const int* rank_level = nullptr;  // per pipeline rank: level of its incoming p2p (< 0: none)
  const double* stash = nullptr;    // per pipeline rank: stash depth in micro-batches
  double hbm_bytes = 0;
  Recompute modes[kRecomputeModes] = {};  // allowed modes, cheapest time first
  int mode_count = 0;
  int full_layers = 0;  // under Full: 0 = every block, N > 0 = block recompute of the first N (StagePlan)

  // `recompute_mask`: bit r allows Recompute mode r. None recomputes nothing,
  // selective the attention core, full everything: that is also the order of
  // their times (and the reverse of their memory).
  NESTFAST_HD void allow_modes(unsigned recompute_mask) {
    mode_count = 0;
    for (int mode = 0; mode < kRecomputeModes; ++mode) {
      if (recompute_mask & (1u << mode)) modes[mode_count++] = static_cast<Recompute>(mode);
    }
  }

  NESTFAST_HD double memory(int a, int b, int rank, Recompute mode) const {
    const StageFootprint footprint = stage_kernel::stage_footprint(table, a, b - 1, mode, full_layers);
    return stage_kernel::stage_memory(replicas, footprint, stash[rank]).total_bytes();
  }

  // The fastest allowed recompute mode that fits, for a stage on rank j.
  // Without recompute a stage is never slower (recompute only adds backward
  // time), so when None is allowed and fits it wins; otherwise every allowed
  // mode that fits is priced and the fastest taken.
  NESTFAST_HD StageChoice choose(int a, int b, int rank) const {
    StageChoice best;
    for (int k = 0; k < mode_count; ++k) {
      const Recompute mode = modes[k];
      if (memory(a, b, rank, mode) > hbm_bytes) continue;
      const double t =
          stage_kernel::stage_time(table, replicas, rank, a, b - 1, rank_level[rank], mode, full_layers).total_s();
      if (mode == Recompute::None) {
        best.time_s = t;
        best.recompute = mode;
        return best;
      }
      if (t < best.time_s) {
        best.time_s = t;
        best.recompute = mode;
      }
    }
    return best;
  }

  NESTFAST_HD double time(int a, int b, int rank) const { return choose(a, b, rank).time_s; }

  // DP sync + optimizer step of the stage's parameters (what max_r S_r takes).
  NESTFAST_HD double params(int a, int b) const {
    const StageFootprint footprint = stage_kernel::stage_footprint(table, a, b - 1, Recompute::None);
    return stage_kernel::sync_time(replicas, footprint).total_s();
  }

  // Compute of [a, b) (forward + backward GEMMs and memory-bound ops): every
  // stage time includes its share, so it bounds any split's summed time.
  NESTFAST_HD double floor(int a, int b) const {
    return (table.sum(LayerColumn::ForwardCompute, a, b - 1) + table.sum(LayerColumn::BackwardCompute, a, b - 1)) *
           (1 - 1e-9);
  }

  // The least memory a stage on rank j needs over the allowed modes.
  NESTFAST_HD double min_memory(int a, int b, int rank) const {
    double least = kDpInfinity;
    for (int k = 0; k < mode_count; ++k) {
      const double bytes = memory(a, b, rank, modes[k]);
      if (bytes < least) least = bytes;
    }
    return least;
  }
};

// A DpStageOracle with the per-rank arrays it points to.
class StageOracle {
 public:
  StageOracle(const LayerTable& table, const ReplicaContext& replicas, const ExecutionLayout& layout, int pp,
              int micro_batches, double hbm_bytes, unsigned recompute_mask, int full_layers = 0);
  StageOracle(const StageOracle&) = delete;
  StageOracle& operator=(const StageOracle&) = delete;

  const DpStageOracle& kernel() const { return oracle_; }
  StageChoice choose(int a, int b, int rank) const { return oracle_.choose(a, b, rank); }
  double time(int a, int b, int rank) const { return oracle_.time(a, b, rank); }
  double params(int a, int b) const { return oracle_.params(a, b); }
  double floor(int a, int b) const { return oracle_.floor(a, b); }
  double min_memory(int a, int b, int rank) const { return oracle_.min_memory(a, b, rank); }
  double memory(int a, int b, int rank, Recompute mode) const { return oracle_.memory(a, b, rank, mode); }
  int boundary_level(int rank) const { return rank_level_[static_cast<std::size_t>(rank)]; }

 private:
  std::vector<int> rank_level_;
  std::vector<double> stash_;
  DpStageOracle oracle_;
};

}  // namespace nestfast::search
