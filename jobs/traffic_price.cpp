#include "jobs/traffic_price.hpp"

#include <cstdint>
#include <vector>

#include "solver/cluster/collectives.hpp"

namespace nestfast::jobs {

double fast_price_s(const ClusterSpec& cluster, const comm::TrafficMatrix& demand, const comm::ServerMap& map) {
  if (cluster.levels.size() < 2 || !map.is_uniform() || demand.ranks() != map.ranks()) return 0;
  const int servers = map.servers();
  const int per_server = map.min_gpus_per_server();
  // The group: the servers' ranks, then the servers level by level as the
  // cluster's group sizes block them (the outermost level takes the rest).
  GroupShape group{{per_server}};
  int remaining = servers;
  for (std::size_t l = 1; l < cluster.levels.size(); ++l) {
    const int size = cluster.levels[l].group_size;
    const int fan = l + 1 == cluster.levels.size() || size <= 0 || size >= remaining ? remaining : size;
    if (remaining % fan != 0) return 0;
    group.fanout.push_back(fan);
    remaining /= fan;
  }
  // The matrix in group order: server by server, a server's ranks by local index.
  const int ranks = map.ranks();
  std::vector<int> member(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) member[r] = map.server_of(r) * per_server + map.local_index(r);
  std::vector<std::uint64_t> bytes(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks));
  for (int src = 0; src < ranks; ++src) {
    for (int dst = 0; dst < ranks; ++dst) {
      bytes[static_cast<std::size_t>(member[src]) * ranks + member[dst]] = demand(src, dst);
    }
  }
  return all_to_all_fast_time(cluster, group, bytes);
}

}  // namespace nestfast::jobs
