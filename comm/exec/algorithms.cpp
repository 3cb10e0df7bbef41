#include <stdexcept>

#include "comm/exec/algo_fanout.hpp"
#include "comm/exec/algo_fast.hpp"
#include "comm/exec/algo_mpi.hpp"
#include "comm/exec/algo_pairwise.hpp"

namespace nestfast::comm {

const std::vector<std::string>& alltoallv_algorithm_names() {
  static const std::vector<std::string> names = {"fast", "mpi", "pairwise", "fanout"};
  return names;
}

std::unique_ptr<Alltoallv> make_alltoallv(const std::string& name) {
  if (name == "fast") return std::make_unique<FastAlltoallv>();
  if (name == "mpi") return std::make_unique<MpiAlltoallv>();
  if (name == "pairwise") return std::make_unique<PairwiseAlltoallv>();
  if (name == "fanout") return std::make_unique<FanoutAlltoallv>();
  std::string known;
  for (const auto& candidate : alltoallv_algorithm_names()) known += (known.empty() ? "" : ", ") + candidate;
  throw std::invalid_argument("unknown alltoallv algorithm '" + name + "' (known: " + known + ")");
}

}  // namespace nestfast::comm
