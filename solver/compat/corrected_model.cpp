#include "solver/compat/corrected_model.hpp"

#include <algorithm>
#include <cmath>

#include "solver/compat/stage_memory.hpp"

namespace nestfast::compat {

CorrectedModel::CorrectedModel(const NestProblem& problem) : problem_(&problem), levels_(problem.network) {}

double CorrectedModel::transfer(int level, EdgeSum edges) const {
  return static_cast<double>(edges.count) * levels_.latency(level) +
         static_cast<double>(edges.bytes) / levels_.clipped_bandwidth(level);
}

std::optional<double> CorrectedModel::stage_load(const ChainTable& chain, std::size_t first, std::size_t end,
                                                 int remaining, std::uint64_t devices_after,
                                                 int stage_devices) const {
  const auto activations = static_cast<double>(chain.activation_bytes(first, end));
  const double stash = problem_->recompute ? static_cast<double>(chain.incoming(first, end).bytes) : activations;
  if (remaining > max_in_flight(*problem_, static_cast<double>(chain.parameter_bytes(first, end)), activations, stash)) {
    return std::nullopt;
  }
  const bool recomputes = problem_->recompute && remaining > 1;
  const double fw = chain.fw_ms(first, end);
  const double compute_s = (fw + chain.bw_ms(first, end) + (recomputes ? fw : 0.0)) * kSecondsPerMs;
  const int level_before = levels_.boundary_level(devices_after + static_cast<std::uint64_t>(stage_devices));
  const int level_after = levels_.boundary_level(devices_after);
  return compute_s + transfer(level_before, chain.incoming(first, end)) +
         transfer(level_after, chain.outgoing(first, end));
}

double CorrectedModel::allreduce(int dp, int pipeline_devices, std::uint64_t bytes) const {
  if (dp < 2) return 0.0;
  // Replicas sharing one group of each level, innermost first; the hierarchy
  // reduce-scatters inside each level, so the data shrinks by each factor.
  double time = 0.0;
  double data = static_cast<double>(bytes);
  double below = 1.0;
  for (int level = 0; level < levels_.levels(); ++level) {
    const bool top = level + 1 == levels_.levels();
    const double members =
        top ? static_cast<double>(dp)
            : std::clamp(std::floor(static_cast<double>(levels_.group_size(level)) / pipeline_devices), 1.0,
                         static_cast<double>(dp));
    const double factor = std::max(1.0, members / below);
    if (factor > 1.0) {
      time += 2.0 * (factor - 1.0) / factor * data / levels_.clipped_bandwidth(level) +
              2.0 * (factor - 1.0) * levels_.latency(level);
      data /= factor;
    }
    below = std::max(below, members);
  }
  return time;
}

int CorrectedModel::micro_batches(int dp) const {
  return static_cast<int>(std::ceil(problem_->mbs_in_batch / static_cast<double>(dp)));
}

double CorrectedModel::time_per_batch(double max_stage_load, int stages, int dp, int pipeline_devices,
                                      std::uint64_t max_stage_parameters) const {
  return max_stage_load * (micro_batches(dp) + stages - 1) + allreduce(dp, pipeline_devices, max_stage_parameters);
}

}  // namespace nestfast::compat
