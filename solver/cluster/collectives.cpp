#include "solver/cluster/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

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

double effective_bandwidth(const NetworkLevel& level) {
  return level.bandwidth_Bps * level.efficiency / level.oversubscription;
}

namespace {

const NetworkLevel& level_at(const ClusterSpec& cluster, int level) {
  const int clamped = std::clamp(level, 0, static_cast<int>(cluster.levels.size()) - 1);
  return cluster.levels[static_cast<std::size_t>(clamped)];
}

}  // namespace

double p2p_time(const ClusterSpec& cluster, int level, double bytes) {
  const NetworkLevel& link = level_at(cluster, level);
  return link.latency_s + bytes / effective_bandwidth(link);
}

double flat_all_reduce_time(const NetworkLevel& level, int n, double bytes) {
  return flat_all_reduce_seconds(level.latency_s, effective_bandwidth(level), n, bytes);
}

double flat_all_gather_time(const NetworkLevel& level, int n, double bytes) {
  return flat_all_gather_seconds(level.latency_s, effective_bandwidth(level), n, bytes);
}

FlatGroup flat_group(const ClusterSpec& cluster, const GroupShape& group) {
  FlatGroup flat;
  for (std::size_t l = 0; l < group.fanout.size(); ++l) {
    if (group.fanout[l] <= 1) continue;
    if (flat.parts == kMaxGroupLevels) {
      throw std::invalid_argument("a communication group fans out over more than " + std::to_string(kMaxGroupLevels) +
                                  " network levels");
    }
    const NetworkLevel& link = level_at(cluster, static_cast<int>(l));
    flat.members[flat.parts] = group.fanout[l];
    flat.latency_s[flat.parts] = link.latency_s;
    flat.bandwidth_Bps[flat.parts] = effective_bandwidth(link);
    ++flat.parts;
  }
  return flat;
}

double all_reduce_time(const ClusterSpec& cluster, const GroupShape& group, double bytes) {
  return group_all_reduce_seconds(flat_group(cluster, group), bytes);
}

double all_gather_time(const ClusterSpec& cluster, const GroupShape& group, double bytes) {
  return group_half_seconds(flat_group(cluster, group), bytes);
}

double reduce_scatter_time(const ClusterSpec& cluster, const GroupShape& group, double bytes) {
  return group_half_seconds(flat_group(cluster, group), bytes);
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
