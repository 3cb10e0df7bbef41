#include "solver/compat/compat_model.hpp"

#include <cmath>

namespace nestfast::compat {

bool stage_fits_memory(const NestProblem& problem, const ChainTable& chain, std::size_t first, std::size_t end,
                       int remaining) {
  // long double: no overflow for any byte counts the reader accepts.
  const auto parameters = static_cast<long double>(chain.parameter_bytes(first, end));
  const auto activations = static_cast<long double>(chain.activation_bytes(first, end));
  // Adam keeps fp32 moments and master weights: 12 bytes per 2-byte parameter.
  const long double optimizer = problem.optimizer == NestOptimizer::Adam ? 6 * parameters : 0;
  const long double stash =
      problem.recompute ? static_cast<long double>(chain.incoming(first, end).bytes) : activations;
  const long double total = 2 * parameters + optimizer + activations + static_cast<long double>(remaining - 1) * stash;
  return total <= static_cast<long double>(problem.memory_per_device);
}

CompatModel::CompatModel(const NestProblem& problem) : problem_(&problem), levels_(problem.network) {}

double CompatModel::transfer(int level, EdgeSum edges) const {
  if (edges.count == 0) return 0.0;
  const double bytes = static_cast<double>(edges.bytes);
  const double count = static_cast<double>(edges.count);
  if (level == 0) return bytes / levels_.clipped_bandwidth(0) + count * levels_.latency(0);
  return 2.0 * (bytes / levels_.clipped_bandwidth(level) + count * levels_.latency(level));
}

std::optional<double> CompatModel::stage_load(const ChainTable& chain, std::size_t first, std::size_t end,
                                              int remaining, std::uint64_t devices_after) const {
  if (!stage_fits_memory(*problem_, chain, first, end, remaining)) return std::nullopt;
  const bool last = remaining == 1;
  const double fw = chain.fw_ms(first, end);
  const double bw = chain.bw_ms(first, end);
  const bool recomputes = problem_->recompute && !last;
  const int level = levels_.boundary_level(devices_after);
  double load = fw + bw + (recomputes ? bw : 0.0) + transfer(level, chain.incoming(first, end));
  if (!recomputes) load += transfer(level, chain.outgoing(first, end));
  return load;
}

double CompatModel::allreduce(int dp, std::uint64_t parameter_bytes) const {
  if (dp < 2) return 0.0;
  const double bytes = static_cast<double>(parameter_bytes);
  const int steps = static_cast<int>(std::floor(std::log2(static_cast<double>(dp))));
  double time = 0.0;
  for (int step = 1; step <= steps; ++step) {
    time += 4.0 * bytes / std::ldexp(1.0, step) / levels_.bandwidth(0) + 2.0 * levels_.latency(0);
  }
  const int level_count = levels_.levels();
  for (int level = 1; level < level_count; ++level) {
    time += 2.0 * (level_count - level) * (bytes / levels_.bandwidth(level) + levels_.latency(level));
  }
  return time;
}

int CompatModel::micro_batches(int dp) const {
  return static_cast<int>(std::ceil(problem_->mbs_in_batch / static_cast<double>(dp)));
}

double CompatModel::time_per_batch(double max_stage_load, int stages, int dp,
                                   std::uint64_t first_stage_parameters) const {
  return max_stage_load * (micro_batches(dp) + stages - 1) + allreduce(dp, first_stage_parameters);
}

}  // namespace nestfast::compat
