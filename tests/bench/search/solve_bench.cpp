// The search's cost: `solve` (DP over the full space, no baselines) for
// llama3-70b on h100-superpod, vs GPU count, vs layer count, and with 1 or
// 2 OpenMP threads. Run: bench_search [--benchmark_filter=...]
// Counters: instances, states and stage candidates priced per solve.
#include <benchmark/benchmark.h>

#include "io/presets/presets.hpp"
#include "solver/search/solve.hpp"

namespace nestfast::search {
namespace {

SolveProblem llama_problem(int gpus, int layers) {
  SolveProblem problem;
  problem.model = io::load_model("llama3-70b");
  if (layers > 0) problem.model.num_layers = layers;
  problem.cluster = io::load_cluster("h100-superpod");
  problem.gpus = gpus;
  problem.global_batch = 2048;
  return problem;
}

void run(benchmark::State& state, const SolveProblem& problem, int threads) {
  SolveOptions options;
  options.baselines = false;
  options.threads = threads;
  SearchStats stats;
  for (auto _ : state) {
    const SolveResult result = solve(problem, StrategySpace{}, options);
    benchmark::DoNotOptimize(result.top.data());
    stats = result.stats;
  }
  state.counters["instances"] = static_cast<double>(stats.instances);
  state.counters["states"] = static_cast<double>(stats.states);
  state.counters["stage_evals"] = static_cast<double>(stats.transitions);
}

// Time vs GPUs, one thread.
void BM_SolveGpus(benchmark::State& state) {
  run(state, llama_problem(static_cast<int>(state.range(0)), 0), 1);
}
BENCHMARK(BM_SolveGpus)->Arg(256)->Arg(1024)->Arg(4096)->Arg(16384)->Arg(65536)->Unit(benchmark::kMillisecond)->Iterations(1);

// Time vs layers at 1024 GPUs, one thread.
void BM_SolveLayers(benchmark::State& state) {
  run(state, llama_problem(1024, static_cast<int>(state.range(0))), 1);
}
BENCHMARK(BM_SolveLayers)->Arg(20)->Arg(40)->Arg(80)->Arg(160)->Unit(benchmark::kMillisecond)->Iterations(1);

// OpenMP speed-up at 1024 GPUs.
void BM_SolveThreads(benchmark::State& state) {
  run(state, llama_problem(1024, 0), static_cast<int>(state.range(0)));
}
BENCHMARK(BM_SolveThreads)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

}  // namespace
}  // namespace nestfast::search

BENCHMARK_MAIN();
