#include "solver/search/plan_pricer.hpp"

#include <algorithm>
#include <vector>

#include "solver/search/memory_model.hpp"
#include "solver/search/pipeline_time.hpp"
#include "solver/search/stage_cost.hpp"

namespace nestfast::search {

PlanPrice price_plan(const SolveProblem& problem, const Execution& plan, const ExecutionLayout& layout,
                     const LayerTable& table) {
  const ReplicaContext replicas = replica_context(problem.cluster, plan, layout);
  const auto pp = static_cast<std::size_t>(plan.pp);
  const int micro_batches = plan.micro_batches();
  std::vector<StageTime> times(pp);
  std::vector<StageFootprint> footprints(pp);
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const StagePlan& stage = plan.stages[i];
    times[i % pp] +=
        stage_time(table, replicas, stage.first_layer, stage.last_layer, stage.boundary_level, stage.recompute);
    footprints[i % pp] += stage_footprint(table, stage.first_layer, stage.last_layer, stage.recompute);
  }
  PlanPrice price;
  price.feasible = true;
  double bottleneck = -1;
  double worst_sync = -1;
  const double hbm = static_cast<double>(problem.cluster.gpu.hbm_bytes);
  for (std::size_t r = 0; r < pp; ++r) {
    bottleneck = std::max(bottleneck, times[r].total_s());
    const double depth = stash_depth(static_cast<int>(r), plan.pp, plan.vpp, micro_batches);
    if (stage_memory(replicas, footprints[r], depth).total_bytes() > hbm) price.feasible = false;
    worst_sync = std::max(worst_sync, sync_time(replicas, footprints[r].dense_params, footprints[r].expert_params).total_s());
  }
  price.iteration_time_s = pipeline_time(micro_batches, plan.pp, plan.vpp, bottleneck).total_s() + worst_sync;
  return price;
}

}  // namespace nestfast::search
