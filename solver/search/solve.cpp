// solve(): branch and bound over the instances on OpenMP threads.
// Instances are taken in order of their lower bound (then ordinal); the k-th
// best time found so far bounds the rest. Each thread reduces as it goes.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <numeric>
#include <stdexcept>
#include <string>

#include "solver/search/level_dp_kernel.hpp"
#include "solver/search/search_context.hpp"
#include "solver/search/solve.hpp"

namespace nestfast::search {
namespace {

// The k best times found so far; bound() = the k-th (inf until k are known).
class Incumbents {
 public:
  explicit Incumbents(int k) : k_(static_cast<std::size_t>(k)) {}

  double bound() const {
    double value;
#pragma omp atomic read
    value = bound_;
    return value;
  }

  void offer(double time) {
#pragma omp critical(nestfast_incumbents)
    {
      times_.insert(std::upper_bound(times_.begin(), times_.end(), time), time);
      if (times_.size() > k_) times_.pop_back();
      if (times_.size() == k_) {
#pragma omp atomic write
        bound_ = times_.back();
      }
    }
  }

 private:
  std::size_t k_;
  std::vector<double> times_;
  double bound_ = kDpInfinity;
};

}  // namespace

SolveResult solve(const SolveProblem& problem, const StrategySpace& space, const SolveOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<DpInstance> instances = enumerate_instances(problem, space);
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  const int top_k = std::max(options.top_k, 1);
  SearchContext context(problem, instances);
  std::vector<double> lower(instances.size());
  for (std::size_t i = 0; i < instances.size(); ++i) lower[i] = context.lower_bound(i);
  std::vector<std::size_t> order(instances.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return lower[a] != lower[b] ? lower[a] < lower[b] : a < b;
  });

  Incumbents incumbents(top_k);
  const auto count = static_cast<std::int64_t>(instances.size());
  std::vector<SolveResult> partial(static_cast<std::size_t>(threads));
  // The error of the lowest-numbered failing instance, so the message does
  // not depend on the thread schedule.
  std::size_t failed_ordinal = instances.size();
  std::string failure;
#pragma omp parallel num_threads(threads)
  {
    SolveResult& mine = partial[static_cast<std::size_t>(omp_get_thread_num())];
    std::vector<InstanceResult> batch;
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t k = 0; k < count; ++k) {
      const std::size_t i = order[static_cast<std::size_t>(k)];
      const double bound = incumbents.bound();
      if (lower[i] > bound || context.surely_infeasible(i)) {
        ++mine.stats.pruned_instances;
        ++mine.stats.instances;
        continue;
      }
      try {
        const PreparedInstance prepared = context.prepare(i);
        // Infeasible instances are diagnosed only if nothing fits (below).
        InstanceResult result = solve_prepared(problem, instances[i], *prepared.layout, *prepared.table, bound, false);
        if (result.feasible) incumbents.offer(result.iteration_time_s);
        if (result.pruned_by_bound) ++result.stats.pruned_instances;
        batch.push_back(std::move(result));
      } catch (const std::exception& error) {
#pragma omp critical(nestfast_solve_failure)
        if (i < failed_ordinal) {
          failed_ordinal = i;
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
  if (failed_ordinal < instances.size()) {
    throw std::runtime_error("solving instance " + std::to_string(failed_ordinal) + ": " + failure);
  }

  SolveResult result;
  for (const SolveResult& part : partial) result = merge(result, part, top_k);
  if (!result.feasible) {
    // Nothing fits anywhere: now name the tightest constraint (every
    // instance's least memory), which the first pass skipped.
    std::vector<InstanceResult> diagnosed(instances.size());
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
    for (std::int64_t k = 0; k < count; ++k) {
      const std::size_t i = static_cast<std::size_t>(k);
      const PreparedInstance prepared = context.prepare(i);
      diagnosed[i] = solve_prepared(problem, instances[i], *prepared.layout, *prepared.table, kDpInfinity, true);
    }
    const SolveResult explained = reduce(diagnosed, top_k);
    result.infeasible_reason = explained.infeasible_reason;
    result.tightest_memory_bytes = explained.tightest_memory_bytes;
    result.tightest_ordinal = explained.tightest_ordinal;
  }
  result.stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.baselines) result.baselines = run_baselines(problem, space, options, result.stats);
  return result;
}

}  // namespace nestfast::search
