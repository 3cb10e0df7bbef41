#pragma once
// Which network level a pipeline boundary crosses. Devices are numbered
// 0..N-1 and grouped innermost first (devices_per_level). A boundary that
// sits after `devices_before` devices crosses the lowest level whose group
// holds both neighbouring devices. Pipeline transfers on level l run at the
// slowest bandwidth of levels 0..l (the prefix minimum).
#include <cstdint>
#include <vector>

#include "solver/compat/nest_problem.hpp"

namespace nestfast::compat {

class LevelMap {
 public:
  explicit LevelMap(const NestNetwork& network);

  int levels() const { return static_cast<int>(group_size_.size()); }
  // Level of the boundary after `devices_before` devices; 0 at the pipeline's start.
  int boundary_level(std::uint64_t devices_before) const;
  // The lowest level whose first group holds devices 0..last_device (the
  // outermost level when none does).
  int common_level(std::uint64_t last_device) const;
  // Devices in one group of level l.
  std::uint64_t group_size(int level) const { return group_size_[level]; }
  double bandwidth(int level) const { return bandwidth_[level]; }
  double clipped_bandwidth(int level) const { return clipped_bandwidth_[level]; }
  double latency(int level) const { return latency_[level]; }

 private:
  std::vector<std::uint64_t> group_size_;
  std::vector<double> bandwidth_;
  std::vector<double> clipped_bandwidth_;
  std::vector<double> latency_;
};

}  // namespace nestfast::compat
