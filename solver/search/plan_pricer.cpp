#include "solver/search/plan_pricer.hpp"

#include <algorithm>

#include "solver/search/memory_model.hpp"
#include "solver/search/pipeline_time.hpp"
#include "solver/search/stage_cost.hpp"

namespace nestfast::search {

RankPrice price_rank(const Execution& plan, int rank, const LayerTable& table, const ReplicaContext& replicas,
                     double hbm_bytes) {
  StageTime time;
  StageFootprint footprint;
  std::vector<double> chunk_stash;
  for (std::size_t i = static_cast<std::size_t>(rank); i < plan.stages.size(); i += static_cast<std::size_t>(plan.pp)) {
    const StagePlan& stage = plan.stages[i];
    time += stage_time(table, replicas, rank, stage.first_layer, stage.last_layer, stage.boundary_level,
                       stage.recompute, stage.recompute_layers);
    const StageFootprint chunk =
        stage_footprint(table, stage.first_layer, stage.last_layer, stage.recompute, stage.recompute_layers);
    footprint += chunk;
    chunk_stash.push_back(chunk.stash_bytes_per_microbatch);
  }
  const double depth = interleaved_stash_depth(rank, plan.pp, plan.vpp, plan.micro_batches(), chunk_stash);
  RankPrice price;
  price.time_s = time.total_s();
  price.warmup_p2p_s = time.p2p_warmup_s;
  price.sync_s = sync_time(replicas, footprint).total_s();
  price.fits = !(stage_memory(replicas, footprint, depth).total_bytes() > hbm_bytes);
  return price;
}

PlanPrice price_plan(const SolveProblem& problem, const Execution& plan, const ExecutionLayout& layout,
                     const LayerTable& table) {
  const ReplicaContext replicas = replica_context(problem.cluster, plan, layout);
  const int micro_batches = plan.micro_batches();
  PlanPrice price;
  price.feasible = true;
  double bottleneck = -1;
  double worst_sync = -1;
  double warmup_p2p = 0;
  const double hbm = static_cast<double>(problem.cluster.gpu.hbm_bytes);
  for (int r = 0; r < plan.pp; ++r) {
    const RankPrice rank = price_rank(plan, r, table, replicas, hbm);
    bottleneck = std::max(bottleneck, rank.time_s);
    worst_sync = std::max(worst_sync, rank.sync_s);
    warmup_p2p += rank.warmup_p2p_s;
    if (!rank.fits) price.feasible = false;
  }
  price.iteration_time_s = pipeline_time(micro_batches, plan.pp, plan.vpp, bottleneck, warmup_p2p).total_s() + worst_sync;
  return price;
}

}  // namespace nestfast::search
