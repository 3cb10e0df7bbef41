#pragma once
// The levels the NEST artifact's evaluator charges a stage's transfers at,
// read from its networkSkeleton (nest/Solver/device_placement/
// device_placement.cpp at 3e163ad): getTimePerBatchForResult takes the level
// between the devices holding positions first-1 and first for the incoming
// edges and between last and last+1 for the outgoing ones, with first
// clamped to 1 and last to n-2 (lines 1977-1985). getLoadIdx (lines 836-858)
// finds each position on the first listed device that holds it
// (findDevice, lines 745-752; -1 when none does) and returns the lowest level
// whose group ids (devices divided by devices_per_level, level by level, as
// C++ int division) agree, -1 when none does.
// The skeleton is the placement the artifact's DP built; its `stages` are
// reconstructed separately and can disagree with it at a tied boundary
// (5 of the 21 reference fixtures), and then these levels are the ones its
// finalTimePerBatch was priced with.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "solver/compat/nest_plan.hpp"
#include "solver/compat/nest_problem.hpp"

namespace nestfast::compat {

class SkeletonLevels {
 public:
  SkeletonLevels(const NetworkSkeleton& skeleton, const NestNetwork& network, std::size_t positions);

  // (level before, level after) of the stage [first, end); -1 where the
  // artifact's getLoadIdx finds no common level.
  std::pair<int, int> stage_levels(std::size_t first, std::size_t end) const;

 private:
  int between(std::size_t previous, std::size_t next) const;

  std::vector<std::int64_t> device_of_;  // by position, -1: on no device
  std::vector<int> devices_per_level_;
  std::size_t positions_;
};

}  // namespace nestfast::compat
