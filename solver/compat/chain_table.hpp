#pragma once
// Per-stage sums over one layer chain, so that every cost of a stage
// [first, end) is O(1): compute latencies (summed layer by layer from
// `first`, so stages of identical layers cost bit-identically), parameter and
// activation bytes, and the bytes and counts of the edges entering and leaving
// the stage. The corrected model's search and evaluator both read stages
// through this table, so a plan costs bit-identically in both (compat mode
// reads the artifact's own per-stage passes from ArtifactStageTimes).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "solver/compat/nest_problem.hpp"

namespace nestfast::compat {

struct EdgeSum {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
};

class ChainTable {
 public:
  explicit ChainTable(const NestGraph& graph);

  std::size_t size() const { return parameter_prefix_.size() - 1; }
  const NestGraph& graph() const { return *graph_; }

  double fw_ms(std::size_t first, std::size_t end) const { return fw_sum_[index(first, end)]; }
  double bw_ms(std::size_t first, std::size_t end) const { return bw_sum_[index(first, end)]; }
  std::uint64_t parameter_bytes(std::size_t first, std::size_t end) const {
    return parameter_prefix_[end] - parameter_prefix_[first];
  }
  std::uint64_t activation_bytes(std::size_t first, std::size_t end) const {
    return activation_prefix_[end] - activation_prefix_[first];
  }
  // Edges from before `first` into [first, end).
  EdgeSum incoming(std::size_t first, std::size_t end) const;
  // Edges from [first, end) to `end` or later.
  EdgeSum outgoing(std::size_t first, std::size_t end) const;

 private:
  std::size_t index(std::size_t first, std::size_t end) const { return first * (size() + 1) + end; }

  const NestGraph* graph_;
  std::vector<double> fw_sum_;  // (size+1)^2, by index(first, end)
  std::vector<double> bw_sum_;
  std::vector<std::uint64_t> parameter_prefix_;
  std::vector<std::uint64_t> activation_prefix_;
  std::vector<EdgeSum> incoming_;  // (size+1)^2, by index(first, end)
  std::vector<EdgeSum> outgoing_;
};

}  // namespace nestfast::compat
