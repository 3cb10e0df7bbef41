// solve(): branch and bound over the instances, in waves on OpenMP threads or
// through a DP batch runner. Instances are taken in order of their lower
// bound (then ordinal); the k-th best time found before a wave bounds it.
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
// Offered between waves, on one thread.
class Incumbents {
 public:
  explicit Incumbents(int k) : k_(static_cast<std::size_t>(k)) {}

  double bound() const { return times_.size() == k_ ? times_.back() : kDpInfinity; }

  void offer(double time) {
    times_.insert(std::upper_bound(times_.begin(), times_.end(), time), time);
    if (times_.size() > k_) times_.pop_back();
  }

 private:
  std::size_t k_;
  std::vector<double> times_;
};

// The error of the lowest-numbered failing instance, so the message does
// not depend on the thread schedule.
class LowestFailure {
 public:
  void record(std::size_t instance, const char* what) {
#pragma omp critical(nestfast_solve_failure)
    if (instance < instance_) {
      instance_ = instance;
      what_ = what;
    }
  }

  void throw_if_any() const {
    if (instance_ != kNone) throw std::runtime_error("solving instance " + std::to_string(instance_) + ": " + what_);
  }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t instance_ = kNone;
  std::string what_;
};

// Whether instance i is skipped: it cannot beat `bound` (the k-th best time
// so far) or surely does not fit. Skipped instances are counted as pruned.
bool skipped(const SearchContext& context, std::size_t i, double bound, SearchStats& stats) {
  if (!(context.lower_bound(i) > bound || context.surely_infeasible(i))) return false;
  ++stats.pruned_instances;
  ++stats.instances;
  return true;
}

// Instances in waves, best lower bound first: the first wave is small so
// that a bound exists soon, later ones double up to kMaxWave. Every instance
// of a wave is bounded by the k-th best time known when the wave starts, so
// which instances run, how far, and so every statistic, depend only on the
// problem and top_k: never on the thread count, the thread schedule or the
// device (the MCMC baseline's budget is the DP's stage pricings, so it is
// reproducible too). A wave's layouts and tables are prepared on OpenMP
// threads; its DP runs go to `runner` when one is given (a GPU batch), else
// each instance is solved on its thread.
SolveResult solve_in_waves(const SolveProblem& problem, const std::vector<DpInstance>& instances,
                           SearchContext& context, const std::vector<std::size_t>& order, int threads, int top_k,
                           const DpBatchRunner& runner) {
  constexpr std::size_t kMaxWave = 16384;
  Incumbents incumbents(top_k);
  SolveResult result;
  std::size_t wave = static_cast<std::size_t>(8 * top_k);
  for (std::size_t first = 0; first < order.size(); first += wave, wave = std::min(2 * wave, kMaxWave)) {
    const double bound = incumbents.bound();
    std::vector<std::size_t> chosen;
    for (std::size_t k = first; k < std::min(first + wave, order.size()); ++k) {
      if (!skipped(context, order[k], bound, result.stats)) chosen.push_back(order[k]);
    }
    std::vector<PreparedInstance> prepared(chosen.size());
    std::vector<InstanceResult> batch(runner ? 0 : chosen.size());
    LowestFailure failure;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(chosen.size()); ++k) {
      const auto slot = static_cast<std::size_t>(k);
      const std::size_t i = chosen[slot];
      try {
        prepared[slot] = context.prepare(i);
        // Infeasible instances are diagnosed only if nothing fits (see solve).
        if (!runner) {
          batch[slot] = solve_prepared(problem, instances[i], *prepared[slot].layout, *prepared[slot].table, bound, false);
          prepared[slot] = {};
        }
      } catch (const std::exception& error) {
        failure.record(i, error.what());
      }
    }
    failure.throw_if_any();
    if (runner) {
      std::vector<PreparedItem> items;
      for (std::size_t k = 0; k < chosen.size(); ++k) {
        items.push_back({&problem, &instances[chosen[k]], prepared[k].layout.get(), prepared[k].table.get()});
      }
      batch = solve_prepared_batch(items, bound, false, runner);
    }
    for (InstanceResult& instance_result : batch) {
      if (instance_result.feasible) incumbents.offer(instance_result.iteration_time_s);
      if (instance_result.pruned_by_bound) ++instance_result.stats.pruned_instances;
    }
    result = merge(result, reduce(batch, top_k), top_k);
  }
  return result;
}

}  // namespace

SolveResult solve(const SolveProblem& problem, const StrategySpace& space, const SolveOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<DpInstance> instances = enumerate_instances(problem, space);
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  const int top_k = std::max(options.top_k, 1);
  SearchContext context(problem, instances);
  const std::vector<double>& lower = context.lower_bounds();
  std::vector<std::size_t> order(instances.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return lower[a] != lower[b] ? lower[a] < lower[b] : a < b;
  });
  const auto count = static_cast<std::int64_t>(instances.size());
  SolveResult result = solve_in_waves(problem, instances, context, order, threads, top_k, options.dp_batch_runner);
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
