#include "solver/compat/compat_model.hpp"

#include <cmath>

namespace nestfast::compat {

CompatModel::CompatModel(const NestProblem& problem) : problem_(&problem), levels_(problem.network) {}

std::optional<double> CompatModel::stage_load(const ArtifactStageTimes& times, std::size_t first, std::size_t end,
                                              int position, int level_before, int level_after) const {
  if (position > times.max_in_flight(first, end)) return std::nullopt;
  const bool recomputes = problem_->recompute && position > 1;
  return times.forward(first, end, level_before) +
         (recomputes ? times.recompute_backward(first, end, level_after) : times.backward(first, end, level_after));
}

double CompatModel::allreduce(int dp, std::uint64_t pipeline_devices, double parameter_bytes) const {
  // create_partial_network (lines 648-693): the replicas' common group.
  const std::uint64_t last_replica = static_cast<std::uint64_t>(dp - 1) * pipeline_devices;
  const int tree_levels = levels_.common_level(last_replica) + 1;
  // hierarchical_allreduce (lines 695-718).
  const int steps = static_cast<int>(std::log2(dp));
  double total = 0.0;
  const double beta0 = 1 / levels_.bandwidth(0);
  for (int step = 0; step < steps; ++step) {
    const double data = parameter_bytes / std::pow(2, step);
    total += levels_.latency(0) + beta0 * data;
  }
  double lower = 0.0;
  for (int level = 1; level < tree_levels; ++level) {
    const double beta = 1 / levels_.bandwidth(level);
    total += (2 * (levels_.latency(level) + beta * parameter_bytes)) + lower;
    lower += total;
  }
  return total;
}

int CompatModel::micro_batches(int dp) const {
  const auto micro_batches = static_cast<int>(problem_->mbs_in_batch);
  return (micro_batches + dp - 1) / dp;
}

double CompatModel::time_per_batch(double max_stage_load, int stages, int dp, std::uint64_t pipeline_devices,
                                   double first_stage_parameters) const {
  const auto factor = static_cast<std::size_t>(micro_batches(dp)) + static_cast<std::size_t>(stages) - 1;
  return max_stage_load * static_cast<double>(factor) + allreduce(dp, pipeline_devices, first_stage_parameters);
}

}  // namespace nestfast::compat
