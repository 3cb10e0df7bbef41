// solve(): every instance over OpenMP threads, reduced as it goes (each
// thread keeps its own top-k), then the baselines.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <string>

#include "solver/search/solve.hpp"

namespace nestfast::search {

SolveResult solve(const SolveProblem& problem, const StrategySpace& space, const SolveOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<DpInstance> instances = enumerate_instances(problem, space);
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  const int top_k = std::max(options.top_k, 1);
  const auto count = static_cast<std::int64_t>(instances.size());

  std::vector<SolveResult> partial(static_cast<std::size_t>(threads));
  // The error of the lowest-numbered failing instance, so the message does
  // not depend on the thread schedule.
  std::int64_t failed_index = count;
  std::string failure;
#pragma omp parallel num_threads(threads)
  {
    SolveResult& mine = partial[static_cast<std::size_t>(omp_get_thread_num())];
    std::vector<InstanceResult> batch;
#pragma omp for schedule(dynamic, 8)
    for (std::int64_t i = 0; i < count; ++i) {
      try {
        batch.push_back(solve_instance(problem, instances[static_cast<std::size_t>(i)]));
      } catch (const std::exception& error) {
#pragma omp critical(nestfast_solve_failure)
        if (i < failed_index) {
          failed_index = i;
          failure = error.what();
        }
      }
      if (batch.size() >= 256) {
        mine = merge(mine, reduce(batch, top_k), top_k);
        batch.clear();
      }
    }
    mine = merge(mine, reduce(batch, top_k), top_k);
  }
  if (failed_index < count) throw std::runtime_error("solving instance " + std::to_string(failed_index) + ": " + failure);

  SolveResult result;
  for (const SolveResult& part : partial) result = merge(result, part, top_k);
  result.stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.baselines) result.baselines = run_baselines(problem, space, options, result.stats);
  return result;
}

}  // namespace nestfast::search
