#include "solver/cluster/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace nestfast {

int GroupShape::size() const {
  int product = 1;
  for (int members : fanout) product *= members;
  return product;
}

int GroupShape::level() const {
  int top = 0;
  for (std::size_t l = 0; l < fanout.size(); ++l)
    if (fanout[l] > 1) top = static_cast<int>(l);
  return top;
}

double effective_bandwidth(const NetworkLevel& level) { return level.bandwidth_Bps / level.oversubscription; }

namespace {

const NetworkLevel& level_at(const ClusterSpec& cluster, int level) {
  const int clamped = std::clamp(level, 0, static_cast<int>(cluster.levels.size()) - 1);
  return cluster.levels[static_cast<std::size_t>(clamped)];
}

// Members per block of each level, skipping levels where the group does not fan out.
struct LevelFanout {
  int level;
  int members;
};

std::vector<LevelFanout> fanning_levels(const GroupShape& group) {
  std::vector<LevelFanout> result;
  for (std::size_t l = 0; l < group.fanout.size(); ++l)
    if (group.fanout[l] > 1) result.push_back({static_cast<int>(l), group.fanout[l]});
  return result;
}

// One half of the hierarchical all-reduce: the buffer is scattered (or
// gathered) level by level; level l handles the buffer divided by the
// fan-out of all levels inside it.
double hierarchical_half(const ClusterSpec& cluster, const GroupShape& group, double bytes) {
  double time = 0;
  double buffer = bytes;
  for (const LevelFanout& part : fanning_levels(group)) {
    time += flat_all_gather_time(level_at(cluster, part.level), part.members, buffer);
    buffer /= part.members;
  }
  return time;
}

}  // namespace

double p2p_time(const ClusterSpec& cluster, int level, double bytes) {
  const NetworkLevel& link = level_at(cluster, level);
  return link.latency_s + bytes / effective_bandwidth(link);
}

double flat_all_reduce_time(const NetworkLevel& level, int n, double bytes) {
  if (n <= 1) return 0;
  const double wire = 2.0 * (n - 1) / n * bytes / effective_bandwidth(level);
  const double ring = 2.0 * (n - 1) * level.latency_s + wire;
  const double halving_doubling = 2.0 * std::ceil(std::log2(static_cast<double>(n))) * level.latency_s + wire;
  return std::min(ring, halving_doubling);
}

double flat_all_gather_time(const NetworkLevel& level, int n, double bytes) {
  if (n <= 1) return 0;
  return (n - 1) * level.latency_s + static_cast<double>(n - 1) / n * bytes / effective_bandwidth(level);
}

double all_reduce_time(const ClusterSpec& cluster, const GroupShape& group, double bytes) {
  const std::vector<LevelFanout> parts = fanning_levels(group);
  if (parts.empty()) return 0;
  // Reduce-scatter then all-gather on every level below the top, the top
  // level all-reduces the shard that is left.
  double time = 0;
  double buffer = bytes;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    time += 2.0 * flat_all_gather_time(level_at(cluster, parts[i].level), parts[i].members, buffer);
    buffer /= parts[i].members;
  }
  return time + flat_all_reduce_time(level_at(cluster, parts.back().level), parts.back().members, buffer);
}

double all_gather_time(const ClusterSpec& cluster, const GroupShape& group, double bytes) {
  return hierarchical_half(cluster, group, bytes);
}

double reduce_scatter_time(const ClusterSpec& cluster, const GroupShape& group, double bytes) {
  return hierarchical_half(cluster, group, bytes);
}

namespace {

// Where one device's all-to-all bytes go: to group members on its own node,
// and across the network, the latter priced level by level (they share the
// device's NIC, so the times add).
struct AllToAllSplit {
  double local_bytes = 0;
  double cross_bytes = 0;
  double cross_time = 0;  // cross bytes at their levels' bandwidths
  int members_per_node = 1;
  int nodes = 1;
  int top_level = 0;
};

AllToAllSplit split_all_to_all(const ClusterSpec& cluster, const GroupShape& group, double bytes) {
  AllToAllSplit split;
  const int n = group.size();
  split.members_per_node = group.fanout.empty() ? 1 : group.fanout[0];
  split.nodes = n / split.members_per_node;
  split.top_level = group.level();
  split.local_bytes = bytes * (split.members_per_node - 1) / n;
  int inside = split.members_per_node;  // members within the current level's block
  for (std::size_t l = 1; l < group.fanout.size(); ++l) {
    const int widened = inside * group.fanout[l];
    const double level_bytes = bytes * (widened - inside) / n;
    split.cross_bytes += level_bytes;
    split.cross_time += level_bytes / effective_bandwidth(level_at(cluster, static_cast<int>(l)));
    inside = widened;
  }
  return split;
}

}  // namespace

double all_to_all_fanout_time(const ClusterSpec& cluster, const GroupShape& group, double bytes, double imbalance) {
  const int n = group.size();
  if (n <= 1) return 0;
  const AllToAllSplit split = split_all_to_all(cluster, group, bytes);
  const double latency = (n - 1) * level_at(cluster, split.top_level).latency_s;
  const double local_time = split.local_bytes / effective_bandwidth(level_at(cluster, 0));
  return latency + imbalance * std::max(split.cross_time, local_time);
}

double all_to_all_fast_time(const ClusterSpec& cluster, const GroupShape& group, double bytes, double imbalance) {
  const int n = group.size();
  if (n <= 1) return 0;
  const AllToAllSplit split = split_all_to_all(cluster, group, bytes);
  const int k = split.members_per_node;
  // Intrinsic (same-node) exchange plus one Birkhoff stage per peer node.
  const double latency = (k - 1) * level_at(cluster, 0).latency_s +
                         (split.nodes - 1) * level_at(cluster, split.top_level).latency_s;
  const double node_load = (k - 1 + imbalance) / k;
  const double forwarded = split.cross_bytes * (k - 1) / k;
  const double local_time = imbalance * (split.local_bytes + forwarded) / effective_bandwidth(level_at(cluster, 0));
  return latency + std::max(node_load * split.cross_time, local_time);
}

}  // namespace nestfast
