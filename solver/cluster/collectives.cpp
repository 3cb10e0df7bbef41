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

namespace {

// FAST's time from its loads (collectives.hpp): the intrinsic step and one
// Birkhoff stage per peer node, then the busiest NIC or scale-up link.
double fast_time_of_loads(const ClusterSpec& cluster, const AllToAllSplit& split, double nic_time,
                          double scaleup_bytes) {
  const double latency = (split.members_per_node - 1) * level_at(cluster, 0).latency_s +
                         (split.nodes - 1) * level_at(cluster, split.top_level).latency_s;
  return latency + std::max(nic_time, scaleup_bytes / effective_bandwidth(level_at(cluster, 0)));
}

// The level that joins nodes a and b of `group` (1 = the same level-1 block).
int joining_level(const GroupShape& group, int a, int b) {
  int block = 1;
  for (std::size_t l = 1; l < group.fanout.size(); ++l) {
    block *= group.fanout[l];
    if (a / block == b / block) return static_cast<int>(l);
  }
  return static_cast<int>(group.fanout.size()) - 1;
}

}  // namespace

double all_to_all_fast_time(const ClusterSpec& cluster, const GroupShape& group, double bytes, double imbalance) {
  const int n = group.size();
  if (n <= 1) return 0;
  const AllToAllSplit split = split_all_to_all(cluster, group, bytes);
  const int k = split.members_per_node;
  const double node_load = (k - 1 + imbalance) / k;
  const double forwarded = split.cross_bytes * (k - 1) / k;
  return fast_time_of_loads(cluster, split, node_load * split.cross_time, imbalance * (split.local_bytes + forwarded));
}

double all_to_all_deepep_time(const ClusterSpec& cluster, const GroupShape& group, double token_bytes,
                              const DeepEpRouting& routing, double imbalance) {
  const int n = group.size();
  if (n <= 1) return 0;
  const int k = group.fanout.empty() ? 1 : group.fanout[0];
  const int nodes = n / k;
  if (static_cast<int>(routing.node_hit.size()) != nodes)
    throw std::invalid_argument("DeepEP price: " + std::to_string(routing.node_hit.size()) +
                                " node chances for a group of " + std::to_string(nodes) + " nodes");
  const NetworkLevel& scaleup = level_at(cluster, 0);
  const double own_node = token_bytes * (k - 1) * routing.member_hit;
  if (nodes == 1) return 2 * scaleup.latency_s + imbalance * own_node / effective_bandwidth(scaleup);
  double rail_time = 0, arrivals = 0, mean_hit = routing.node_hit[0];
  for (int j = 1; j < nodes; ++j) {
    const double bytes = token_bytes * routing.node_hit[static_cast<std::size_t>(j)];
    rail_time += bytes / effective_bandwidth(level_at(cluster, joining_level(group, 0, j)));
    arrivals += bytes;
    mean_hit += routing.node_hit[static_cast<std::size_t>(j)];
  }
  mean_hit /= nodes;
  const double forwarded = mean_hit > 0 ? arrivals * (k - 1) * routing.member_hit / mean_hit : 0;
  const double latency = 2 * (level_at(cluster, group.level()).latency_s + scaleup.latency_s);
  const double node_load = (k - 1 + imbalance) / k;
  return latency + std::max(node_load * rail_time, imbalance * (own_node + forwarded) / effective_bandwidth(scaleup));
}

double all_to_all_fast_time(const ClusterSpec& cluster, const GroupShape& group, std::span<const std::uint64_t> bytes) {
  const int n = group.size();
  if (bytes.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n)) {
    throw std::invalid_argument("all-to-all price: " + std::to_string(bytes.size()) + " matrix entries for a group of " +
                                std::to_string(n));
  }
  if (n <= 1) return 0;
  const AllToAllSplit split = split_all_to_all(cluster, group, 0);
  const int k = split.members_per_node;
  const int nodes = split.nodes;
  auto at = [&](int g, int h) { return static_cast<double>(bytes[static_cast<std::size_t>(g) * n + h]); };
  std::vector<double> level_bandwidth(group.fanout.size(), 0);
  for (std::size_t l = 1; l < group.fanout.size(); ++l) {
    level_bandwidth[l] = effective_bandwidth(level_at(cluster, static_cast<int>(l)));
  }
  // Node pairs: bytes (and their time at the joining level) from node s to node t.
  std::vector<double> pair_bytes(static_cast<std::size_t>(nodes) * nodes, 0);
  for (int g = 0; g < n; ++g) {
    for (int h = 0; h < n; ++h) pair_bytes[static_cast<std::size_t>(g / k) * nodes + h / k] += at(g, h);
  }
  std::vector<double> out_time(static_cast<std::size_t>(nodes), 0), in_time(static_cast<std::size_t>(nodes), 0);
  std::vector<double> node_in(static_cast<std::size_t>(nodes), 0);
  for (int s = 0; s < nodes; ++s) {
    for (int t = 0; t < nodes; ++t) {
      if (s == t) continue;
      const double b = pair_bytes[static_cast<std::size_t>(s) * nodes + t];
      const double time = b / level_bandwidth[static_cast<std::size_t>(joining_level(group, s, t))];
      out_time[s] += time;
      in_time[t] += time;
      node_in[t] += b;
    }
  }
  double nic_time = 0;
  for (int s = 0; s < nodes; ++s) nic_time = std::max(nic_time, std::max(out_time[s], in_time[s]) / k);
  // Members: same-node blocks, balance hand-overs, forwarding.
  std::vector<double> up_out(static_cast<std::size_t>(n), 0), up_in(static_cast<std::size_t>(n), 0);
  for (int g = 0; g < n; ++g) {
    const int s = g / k;
    double cross_in = 0;
    for (int h = 0; h < n; ++h) {
      if (h == g) continue;
      if (h / k == s) {
        up_out[g] += at(g, h);
        up_in[g] += at(h, g);
      } else {
        cross_in += at(h, g);
      }
    }
    up_out[g] += (node_in[s] - cross_in) / k;  // rail arrivals for the others
    up_in[g] += cross_in * (k - 1) / k;        // its own pieces that came in on the others' rails
    for (int t = 0; t < nodes; ++t) {
      if (t == s) continue;
      double mine = 0;
      for (int h = t * k; h < (t + 1) * k; ++h) mine += at(g, h);
      const double share = std::ceil(pair_bytes[static_cast<std::size_t>(s) * nodes + t] / k);
      up_out[g] += std::max(0.0, mine - share);
      up_in[g] += std::max(0.0, share - mine);
    }
  }
  double scaleup_bytes = 0;
  for (int g = 0; g < n; ++g) scaleup_bytes = std::max(scaleup_bytes, std::max(up_out[g], up_in[g]));
  return fast_time_of_loads(cluster, split, nic_time, scaleup_bytes);
}

}  // namespace nestfast
