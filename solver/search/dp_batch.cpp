#include "solver/search/dp_batch.hpp"

namespace nestfast::search {

std::vector<DpRunResult> run_dp_batch_on_cpu(std::span<const DpRun> runs) {
  std::vector<DpRunResult> results(runs.size());
  std::vector<double> value;
  std::vector<int> cut;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const DpRun& run = runs[k];
    const int chain = run.oracle.table.layers;
    const std::size_t cells = static_cast<std::size_t>(run.stages + 1) * static_cast<std::size_t>(chain + 1);
    value.resize(cells);
    cut.resize(cells);
    DpRunResult& result = results[k];
    result.bottleneck = level_dp_run(run.oracle, chain, run.stages, run.param_cap, run.bottleneck_limit,
                                     value.data(), cut.data(), &result.counters);
    if (result.bottleneck < kDpInfinity) {
      result.boundaries.resize(static_cast<std::size_t>(run.stages) + 1);
      level_dp_boundaries(cut.data(), chain, run.stages, result.boundaries.data());
    }
  }
  return results;
}

}  // namespace nestfast::search
