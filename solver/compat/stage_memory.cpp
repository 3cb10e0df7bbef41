#include "solver/compat/stage_memory.hpp"

#include <cmath>

namespace nestfast::compat {

int max_in_flight(const NestProblem& problem, double parameter_bytes, double activation_bytes, double stash_bytes) {
  const double p = parameter_bytes;
  const double optimizer = problem.optimizer == NestOptimizer::Adam ? 2 * p + 2 * p + 2 * p : 0.0;
  const double constant = 2 * p + optimizer + activation_bytes;
  const auto memory = static_cast<double>(problem.memory_per_device);
  if (constant + (problem.max_devices - 1) * stash_bytes <= memory) return problem.max_devices;
  if (constant > memory) return 0;
  return static_cast<int>(1 + std::floor((memory - constant) / stash_bytes));
}

}  // namespace nestfast::compat
