#include <stdexcept>

#include "comm/exec/algo_auto.hpp"
#include "comm/exec/algo_fanout.hpp"
#include "comm/exec/algo_fast.hpp"
#include "comm/exec/algo_mpi.hpp"
#include "comm/exec/algo_pairwise.hpp"

namespace nestfast::comm {

const std::vector<std::string>& alltoallv_algorithm_names() {
  static const std::vector<std::string> names = {"fast", "mpi", "pairwise", "fanout", "auto"};
  return names;
}

std::unique_ptr<Alltoallv> make_alltoallv(const std::string& name, const AlgorithmSettings& settings) {
  if (name == "fast") {
    return std::make_unique<FastAlltoallv>(
        FastPlanOptions{.quantum = settings.fast_quantum, .stage_cost_bytes = settings.fast_stage_cost_bytes},
        settings.fast_chunk_bytes);
  }
  if (name == "auto") return std::make_unique<AutoAlltoallv>(settings);
  if (name == "mpi") return std::make_unique<MpiAlltoallv>();
  if (name == "pairwise") return std::make_unique<PairwiseAlltoallv>();
  if (name == "fanout") return std::make_unique<FanoutAlltoallv>();
  std::string known;
  for (const auto& candidate : alltoallv_algorithm_names()) known += (known.empty() ? "" : ", ") + candidate;
  throw std::invalid_argument("unknown alltoallv algorithm '" + name + "' (known: " + known + ")");
}

}  // namespace nestfast::comm
