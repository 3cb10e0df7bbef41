#include "solver/compat/skeleton_levels.hpp"

namespace nestfast::compat {

SkeletonLevels::SkeletonLevels(const NetworkSkeleton& skeleton, const NestNetwork& network, std::size_t positions)
    : device_of_(positions + 1, -1), devices_per_level_(network.devices_per_level), positions_(positions) {
  // The first listed device holding a position wins (findDevice).
  for (const auto& entry : skeleton) {
    for (std::size_t position : entry.positions) {
      if (position < device_of_.size() && device_of_[position] == -1) device_of_[position] = entry.device;
    }
  }
}

int SkeletonLevels::between(std::size_t previous, std::size_t next) const {
  const auto device = [&](std::size_t position) { return position < positions_ ? device_of_[position] : -1; };
  std::int64_t group_previous = device(previous);
  std::int64_t group_next = device(next);
  for (std::size_t level = 0; level < devices_per_level_.size(); ++level) {
    group_previous /= devices_per_level_[level];
    group_next /= devices_per_level_[level];
    if (group_previous == group_next) return static_cast<int>(level);
  }
  return -1;
}

std::pair<int, int> SkeletonLevels::stage_levels(std::size_t first, std::size_t end) const {
  std::size_t first_node = first == 0 ? 1 : first;
  std::size_t last_node = end - 1;
  if (positions_ >= 2 && last_node == positions_ - 1) last_node = positions_ - 2;
  return {between(first_node - 1, first_node), between(last_node, last_node + 1)};
}

}  // namespace nestfast::compat
