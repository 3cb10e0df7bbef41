#include "solver/compat/level_map.hpp"

#include <algorithm>

namespace nestfast::compat {

LevelMap::LevelMap(const NestNetwork& network)
    : bandwidth_(network.bandwidth_Bps), latency_(network.latency_s) {
  std::uint64_t group = 1;
  for (int count : network.devices_per_level) {
    group *= static_cast<std::uint64_t>(count);
    group_size_.push_back(group);
  }
  double slowest = bandwidth_.empty() ? 0.0 : bandwidth_.front();
  for (double bandwidth : bandwidth_) {
    slowest = std::min(slowest, bandwidth);
    clipped_bandwidth_.push_back(slowest);
  }
}

int LevelMap::boundary_level(std::uint64_t devices_before) const {
  if (devices_before == 0) return 0;
  const std::uint64_t left = devices_before - 1;
  for (int level = 0; level < levels(); ++level) {
    if (left / group_size_[level] == devices_before / group_size_[level]) return level;
  }
  return levels() - 1;
}

int LevelMap::common_level(std::uint64_t last_device) const {
  for (int level = 0; level < levels(); ++level) {
    if (last_device < group_size_[level]) return level;
  }
  return levels() - 1;
}

}  // namespace nestfast::compat
