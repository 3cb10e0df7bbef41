// run_baselines: manual, Phaze-like, MCMC and (when small enough) exhaustive.
#include <omp.h>

#include <algorithm>
#include <future>

#include "solver/search/baselines.hpp"

namespace nestfast::search {

std::vector<BaselineResult> run_baselines(const SolveProblem& problem, const StrategySpace& space,
                                          const SolveOptions& options, const SearchStats& dp_stats) {
  std::vector<BaselineResult> baselines;
  // Equal budget: as many stage pricings as the DP made (its transitions).
  const std::uint64_t budget = std::max<std::uint64_t>(dp_stats.transitions, 1);
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  // The MCMC walk is sequential: with two threads or more it runs beside the
  // Phaze-like DP, which keeps the others.
  std::future<BaselineResult> mcmc;
  if (threads >= 2) {
    mcmc = std::async(std::launch::async,
                      [&] { return mcmc_baseline(problem, space, options.mcmc_seed, budget); });
  }
  baselines.push_back(manual_baseline(problem));
  baselines.push_back(phaze_baseline(problem, space, threads >= 2 ? threads - 1 : 1));
  baselines.push_back(mcmc.valid() ? mcmc.get() : mcmc_baseline(problem, space, options.mcmc_seed, budget));

  const std::vector<DpInstance> instances = enumerate_instances(problem, space);
  const std::uint64_t plans = exhaustive_plan_count(problem, instances);
  if (plans <= static_cast<std::uint64_t>(options.exhaustive_max_plans)) {
    baselines.push_back(exhaustive_baseline(problem, instances));
  } else {
    BaselineResult skipped;
    skipped.name = "exhaustive";
    const std::string count = plans >= (std::uint64_t{1} << 62) ? "more than 4.6e18" : std::to_string(plans);
    skipped.note = "skipped: " + count + " plans exceed the limit of " + std::to_string(options.exhaustive_max_plans);
    baselines.push_back(skipped);
  }
  return baselines;
}

}  // namespace nestfast::search
