// compute_layout's cost vs GPU count on h100-superpod (8 x 32 x unbounded):
// one call per iteration, cycling over three (degrees, placement) cases of
// the kind solve() meets (tp on NVLink with pp outside dp; dp innermost;
// cp and pp interleaved), so the figure is the mean of the three.
// Run: bench_search --benchmark_filter=ComputeLayout
#include <benchmark/benchmark.h>

#include <vector>

#include "io/presets/presets.hpp"
#include "solver/search/execution_layout.hpp"

namespace nestfast {
namespace {

Execution degrees(int gpus, int tp, int cp, int pp, std::vector<ParallelDim> placement) {
  Execution execution;
  execution.tp = tp;
  execution.cp = cp;
  execution.pp = pp;
  execution.dp = gpus / (tp * cp * pp);
  execution.placement = std::move(placement);
  return execution;
}

void BM_ComputeLayout(benchmark::State& state) {
  using D = ParallelDim;
  const int gpus = static_cast<int>(state.range(0));
  const ClusterSpec cluster = io::load_cluster("h100-superpod");
  const std::vector<Execution> cases = {
      degrees(gpus, 8, 1, 8, {D::Tp, D::Cp, D::Ep, D::Dp, D::Pp}),
      degrees(gpus, 2, 4, 4, {D::Dp, D::Pp, D::Tp, D::Cp, D::Ep}),
      degrees(gpus, 4, 8, 16, {D::Cp, D::Pp, D::Dp, D::Tp, D::Ep}),
  };
  std::size_t next = 0;
  for (auto _ : state) {
    const ExecutionLayout layout = compute_layout(cluster, cases[next]);
    benchmark::DoNotOptimize(layout.rank_boundary_level.data());
    next = (next + 1) % cases.size();
  }
}
BENCHMARK(BM_ComputeLayout)->Arg(1024)->Arg(16384)->Arg(65536)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace nestfast
