#pragma once
// One run of the level-wise DP (level_dp_run over a DpStageOracle) as plain
// data, and a runner that takes many at once. solve_prepared_batch() hands
// the runs of many instances' Pareto walks to a runner together: on the CPU
// one after another (run_dp_batch_on_cpu), or in one GPU launch
// (gpu/batched_dp.hpp). Every runner must return exactly what
// level_dp_run returns, so the search's result does not depend on it.
#include <functional>
#include <span>
#include <vector>

#include "solver/search/level_dp_kernel.hpp"
#include "solver/search/stage_oracle.hpp"

namespace nestfast::search {

struct DpRun {
  DpStageOracle oracle;  // host pointers, valid while the batch runs
  int stages = 1;        // pp
  double param_cap = kDpInfinity;
  double bottleneck_limit = kDpInfinity;
};

struct DpRunResult {
  double bottleneck = kDpInfinity;  // kDpInfinity: no feasible partition under the cap and limit
  std::vector<int> boundaries;      // stages + 1 layer indices (0 ... chain) when feasible
  LevelDpCounters counters;
};

using DpBatchRunner = std::function<std::vector<DpRunResult>(std::span<const DpRun>)>;

std::vector<DpRunResult> run_dp_batch_on_cpu(std::span<const DpRun> runs);

}  // namespace nestfast::search
