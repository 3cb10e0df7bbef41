// The MCMC baseline's cost at the DP's budget (as `solve` runs it) for
// llama3-70b on h100-superpod, gbs 2048, vs GPU count. The budget (the
// DP's stage pricings, one thread) is computed before the timed loop.
// Run: bench_search --benchmark_filter=Mcmc
#include <benchmark/benchmark.h>

#include "io/presets/presets.hpp"
#include "solver/search/baselines.hpp"

namespace nestfast::search {
namespace {

void BM_McmcAtDpBudget(benchmark::State& state) {
  SolveProblem problem;
  problem.model = io::load_model("llama3-70b");
  problem.cluster = io::load_cluster("h100-superpod");
  problem.gpus = static_cast<int>(state.range(0));
  problem.global_batch = 2048;
  SolveOptions options;
  options.baselines = false;
  options.threads = 1;
  const std::uint64_t budget = solve(problem, StrategySpace{}, options).stats.transitions;
  BaselineResult result;
  for (auto _ : state) {
    result = mcmc_baseline(problem, StrategySpace{}, 1, budget);
    benchmark::DoNotOptimize(result.iteration_time_s);
  }
  state.counters["stage_budget"] = static_cast<double>(budget);
  state.counters["plans"] = static_cast<double>(result.plans_evaluated);
}
BENCHMARK(BM_McmcAtDpBudget)->Arg(1024)->Arg(16384)->Arg(65536)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace nestfast::search
