#include "comm/plan/bounds.hpp"

#include <algorithm>
#include <vector>

namespace nestfast::comm {

namespace {

struct CrossBytes {
  std::vector<std::uint64_t> out, in;  // per rank, to / from other servers
};

CrossBytes cross_server_bytes(const TrafficMatrix& demand, const ServerMap& map) {
  const auto N = static_cast<std::size_t>(map.ranks());
  CrossBytes cross{std::vector<std::uint64_t>(N, 0), std::vector<std::uint64_t>(N, 0)};
  for (int g = 0; g < map.ranks(); ++g) {
    const auto row = demand.row(g);
    for (int h = 0; h < map.ranks(); ++h) {
      if (map.server_of(g) == map.server_of(h)) continue;
      cross.out[g] += row[h];
      cross.in[h] += row[h];
    }
  }
  return cross;
}

}  // namespace

double server_bound_bytes(const TrafficMatrix& demand, const ServerMap& map) {
  const CrossBytes cross = cross_server_bytes(demand, map);
  std::vector<std::uint64_t> out(static_cast<std::size_t>(map.servers()), 0), in(out);
  for (int g = 0; g < map.ranks(); ++g) {
    out[map.server_of(g)] += cross.out[g];
    in[map.server_of(g)] += cross.in[g];
  }
  double bound = 0;
  for (int s = 0; s < map.servers(); ++s) {
    bound = std::max(bound, static_cast<double>(std::max(out[s], in[s])) / map.gpus_on(s));
  }
  return bound;
}

double per_gpu_bound_bytes(const TrafficMatrix& demand, const ServerMap& map) {
  const CrossBytes cross = cross_server_bytes(demand, map);
  std::uint64_t bound = 0;
  for (int g = 0; g < map.ranks(); ++g) bound = std::max({bound, cross.out[g], cross.in[g]});
  return static_cast<double>(bound);
}

}  // namespace nestfast::comm
