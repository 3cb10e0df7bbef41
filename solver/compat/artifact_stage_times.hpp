#pragma once
// The NEST artifact's per-stage numbers for every contiguous stage [first,
// end) of one layer chain, computed the way its getLoadOfStageForA does
// (nest/Solver/device_placement/device_placement.cpp at 3e163ad, lines
// 1384-1595), in the same order of floating-point operations, so that compat
// mode reproduces its times bit for bit:
//  - forward(first, end, l): a forward pass over the stage in chain order in
//    which a layer starts when its predecessor in the stage has finished and
//    every edge from an earlier stage has arrived at level l (lines
//    1395-1432): x = max(x, arrival) + fw, starting from 0. An edge arrives
//    after c/bw_0 + lat_0 on level 0 and 2*(c/bw_l + lat_l) on level l >= 1
//    (lines 1416-1421), bandwidths clipped to the prefix minimum (205-210).
//  - backward(first, end, l): the same in reverse chain order with the
//    backward latencies and the edges to later stages (lines 1442-1469).
//  - recompute_backward(first, end, l): the recomputed forward, priced with
//    the *backward* latencies (line 1488), then the backward pass, whose last
//    layer starts when both the recomputation is done and its outgoing
//    gradients have arrived (lines 1477-1523).
//  - max_in_flight(first, end): the most micro-batches the stage can hold,
//    2P + O + A + (s-1) * stash <= HBM, stash = the bytes of the edges from
//    earlier stages with recomputation and A without (lines 1528-1572).
// A stage's load is forward at the level of the boundary before it plus
// (recompute_)backward at the level of the boundary after it (line 1577-1578).
#include <cstddef>
#include <vector>

#include "solver/compat/level_map.hpp"
#include "solver/compat/nest_problem.hpp"

namespace nestfast::compat {

class ArtifactStageTimes {
 public:
  ArtifactStageTimes(const NestProblem& problem, const NestGraph& graph, const LevelMap& levels);

  std::size_t size() const { return size_; }
  double forward(std::size_t first, std::size_t end, int level) const { return forward_[at(first, end, level)]; }
  double backward(std::size_t first, std::size_t end, int level) const { return backward_[at(first, end, level)]; }
  double recompute_backward(std::size_t first, std::size_t end, int level) const {
    return recompute_backward_[at(first, end, level)];
  }
  // The artifact's max_s_memory_feasible: 0 when even one micro-batch does
  // not fit, maxDevices when any number does.
  int max_in_flight(std::size_t first, std::size_t end) const { return max_in_flight_[pair(first, end)]; }
  // Parameter bytes summed layer by layer in chain order (line 1529-1531).
  double parameter_bytes(std::size_t first, std::size_t end) const { return parameters_[pair(first, end)]; }

 private:
  std::size_t pair(std::size_t first, std::size_t end) const { return first * (size_ + 1) + end; }
  std::size_t at(std::size_t first, std::size_t end, int level) const {
    return pair(first, end) * levels_ + static_cast<std::size_t>(level);
  }

  std::size_t size_;
  std::size_t levels_;
  std::vector<double> forward_;  // (size+1)^2 * levels, by at()
  std::vector<double> backward_;
  std::vector<double> recompute_backward_;
  std::vector<int> max_in_flight_;  // (size+1)^2, by pair()
  std::vector<double> parameters_;
};

}  // namespace nestfast::compat
