#include "solver/search/incremental_price.hpp"

#include <utility>

#include "solver/search/memory_model.hpp"
#include "solver/search/pipeline_time.hpp"

namespace nestfast::search {

std::uint64_t IncrementalPrice::reset(const SolveProblem& problem, Execution plan, const ExecutionLayout& layout,
                                      const LayerTable& table) {
  table_ = &table;
  replicas_ = replica_context(problem.cluster, plan, layout);
  hbm_bytes_ = static_cast<double>(problem.cluster.gpu.hbm_bytes);
  micro_batches_ = plan.micro_batches();
  plan_ = std::move(plan);
  const int pp = plan_.pp;
  ranks_.resize(static_cast<std::size_t>(pp));
  totals_.ranks_over_hbm = 0;
  for (int r = 0; r < pp; ++r) {
    ranks_[static_cast<std::size_t>(r)] = price_rank(r);
    if (!ranks_[static_cast<std::size_t>(r)].fits) ++totals_.ranks_over_hbm;
  }
  rescan_maxima();
  commit();
  return plan_.stages.size();
}

void IncrementalPrice::rescan_maxima() {
  totals_.max_time_s = -1;
  totals_.max_sync_s = -1;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    if (ranks_[r].time_s > totals_.max_time_s) {
      totals_.max_time_s = ranks_[r].time_s;
      totals_.max_time_rank = static_cast<int>(r);
    }
    if (ranks_[r].sync_s > totals_.max_sync_s) {
      totals_.max_sync_s = ranks_[r].sync_s;
      totals_.max_sync_rank = static_cast<int>(r);
    }
  }
}

std::uint64_t IncrementalPrice::reprice(int rank) {
  RankPrice& slot = ranks_[static_cast<std::size_t>(rank)];
  saved_ranks_.emplace_back(rank, slot);
  const RankPrice old = slot;
  slot = price_rank(rank);
  totals_.ranks_over_hbm += (slot.fits ? 0 : 1) - (old.fits ? 0 : 1);
  bool rescan = false;
  if (slot.time_s >= totals_.max_time_s) {
    totals_.max_time_s = slot.time_s;
    totals_.max_time_rank = rank;
  } else if (totals_.max_time_rank == rank) {
    rescan = true;
  }
  if (slot.sync_s >= totals_.max_sync_s) {
    totals_.max_sync_s = slot.sync_s;
    totals_.max_sync_rank = rank;
  } else if (totals_.max_sync_rank == rank) {
    rescan = true;
  }
  if (rescan) rescan_maxima();
  return static_cast<std::uint64_t>(plan_.vpp);
}

std::uint64_t IncrementalPrice::move_boundary(int stage, int first_layer) {
  if (!changed_) saved_totals_ = totals_;
  changed_ = true;
  StagePlan& before = plan_.stages[static_cast<std::size_t>(stage - 1)];
  StagePlan& after = plan_.stages[static_cast<std::size_t>(stage)];
  saved_stages_.emplace_back(stage - 1, before);
  saved_stages_.emplace_back(stage, after);
  before.last_layer = first_layer - 1;
  after.first_layer = first_layer;
  const int pp = plan_.pp;
  std::uint64_t priced = reprice(stage % pp);
  if ((stage - 1) % pp != stage % pp) priced += reprice((stage - 1) % pp);
  return priced;
}

std::uint64_t IncrementalPrice::set_rank_recompute(int rank, Recompute mode, int recompute_layers) {
  if (!changed_) saved_totals_ = totals_;
  changed_ = true;
  for (std::size_t i = static_cast<std::size_t>(rank); i < plan_.stages.size(); i += static_cast<std::size_t>(plan_.pp)) {
    saved_stages_.emplace_back(static_cast<int>(i), plan_.stages[i]);
    plan_.stages[i].recompute = mode;
    plan_.stages[i].recompute_layers = recompute_layers;
  }
  return reprice(rank);
}

void IncrementalPrice::commit() {
  changed_ = false;
  saved_stages_.clear();
  saved_ranks_.clear();
}

void IncrementalPrice::undo() {
  if (!changed_) return;
  for (auto it = saved_stages_.rbegin(); it != saved_stages_.rend(); ++it)
    plan_.stages[static_cast<std::size_t>(it->first)] = it->second;
  for (auto it = saved_ranks_.rbegin(); it != saved_ranks_.rend(); ++it)
    ranks_[static_cast<std::size_t>(it->first)] = it->second;
  totals_ = saved_totals_;
  commit();
}

PlanPrice IncrementalPrice::price() const {
  PlanPrice price;
  price.feasible = totals_.ranks_over_hbm == 0;
  // Summed afresh in rank order, as price_plan does (a running sum would drift in the last bits).
  double warmup_p2p = 0;
  for (const RankPrice& rank : ranks_) warmup_p2p += rank.warmup_p2p_s;
  price.iteration_time_s =
      pipeline_time(micro_batches_, plan_.pp, plan_.vpp, totals_.max_time_s, warmup_p2p).total_s() + totals_.max_sync_s;
  return price;
}

}  // namespace nestfast::search
