#include "solver/search/stage_oracle.hpp"

#include "solver/search/memory_model.hpp"

namespace nestfast::search {

StageOracle::StageOracle(const LayerTable& table, const ReplicaContext& replicas, const ExecutionLayout& layout,
                         int pp, int micro_batches, double hbm_bytes, unsigned recompute_mask)
    : table_(table), replicas_(replicas), hbm_bytes_(hbm_bytes) {
  for (int rank = 0; rank < pp; ++rank) {
    rank_level_.push_back(layout.stage_boundary_level(rank));
    stash_.push_back(stash_depth(rank, pp, 1, micro_batches));
  }
  // None recomputes nothing, selective the attention core, full everything:
  // that is also the order of their times (and the reverse of their memory).
  for (Recompute mode : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    if (recompute_mask & (1u << static_cast<unsigned>(mode))) modes_[static_cast<std::size_t>(mode_count_++)] = mode;
  }
}

double StageOracle::memory(int a, int b, int rank, Recompute mode) const {
  const StageFootprint footprint = stage_footprint(table_, a, b - 1, mode);
  return stage_memory(replicas_, footprint, stash_[static_cast<std::size_t>(rank)]).total_bytes();
}

StageChoice StageOracle::choose(int a, int b, int rank) const {
  // Without recompute a stage is never slower (recompute only adds backward
  // time), so when None is allowed and fits it wins; otherwise every allowed
  // mode that fits is priced and the fastest taken.
  StageChoice best;
  for (int k = 0; k < mode_count_; ++k) {
    const Recompute mode = modes_[static_cast<std::size_t>(k)];
    if (memory(a, b, rank, mode) > hbm_bytes_) continue;
    if (mode == Recompute::None) {
      best.time_s = stage_time(table_, replicas_, a, b - 1, rank_level_[static_cast<std::size_t>(rank)], mode).total_s();
      best.recompute = mode;
      return best;
    }
    const double t = stage_time(table_, replicas_, a, b - 1, rank_level_[static_cast<std::size_t>(rank)], mode).total_s();
    if (t < best.time_s) {
      best.time_s = t;
      best.recompute = mode;
    }
  }
  return best;
}

double StageOracle::params(int a, int b) const {
  const StageFootprint footprint = stage_footprint(table_, a, b - 1, Recompute::None);
  return sync_time(replicas_, footprint.dense_params, footprint.expert_params).total_s();
}

double StageOracle::floor(int a, int b) const {
  return (table_.sum(LayerColumn::ForwardCompute, a, b - 1) + table_.sum(LayerColumn::BackwardCompute, a, b - 1)) *
         (1 - 1e-9);
}

double StageOracle::min_memory(int a, int b, int rank) const {
  double least = kDpInfinity;
  for (int k = 0; k < mode_count_; ++k) {
    const double bytes = memory(a, b, rank, modes_[static_cast<std::size_t>(k)]);
    if (bytes < least) least = bytes;
  }
  return least;
}

}  // namespace nestfast::search
