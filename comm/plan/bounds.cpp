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
    bound = std::max(bound, static_cast<double>(std::max(out[s], in[s])) / map.nics_on(s));
  }
  return bound;
}

double per_gpu_bound_bytes(const TrafficMatrix& demand, const ServerMap& map) {
  const CrossBytes cross = cross_server_bytes(demand, map);
  std::uint64_t bound = 0;
  for (int g = 0; g < map.ranks(); ++g) bound = std::max({bound, cross.out[g], cross.in[g]});
  return static_cast<double>(bound);
}

LinkRates rates_from_gpu(double gpu_nic_Bps, double gpu_scaleup_Bps, const ServerMap& map) {
  // One rate for every NIC: the fastest (most GPUs per NIC), so the bound stays a bound on every server.
  double gpus_per_nic = 1;
  for (int s = 0; s < map.servers(); ++s) {
    gpus_per_nic = std::max(gpus_per_nic, static_cast<double>(map.gpus_on(s)) / map.nics_on(s));
  }
  return {gpu_nic_Bps * gpus_per_nic, gpu_scaleup_Bps};
}

double lower_bound_seconds(const TrafficMatrix& demand, const ServerMap& map, const LinkRates& rates) {
  if (map.servers() > 1) return rates.nic_Bps > 0 ? server_bound_bytes(demand, map) / rates.nic_Bps : 0;
  if (rates.scaleup_Bps <= 0) return 0;
  std::uint64_t most = 0;
  for (int r = 0; r < demand.ranks(); ++r) {
    most = std::max({most, demand.row_sum(r) - demand(r, r), demand.col_sum(r) - demand(r, r)});
  }
  return static_cast<double>(most) / rates.scaleup_Bps;
}

Efficiency efficiency(double lower_bound_s, double fastest_s, double average_s) {
  Efficiency out;
  out.bounded = lower_bound_s > 0;
  if (!out.bounded || !(average_s > 0)) return out;
  out.bound_violated = fastest_s < lower_bound_s;
  if (!out.bound_violated) out.value = lower_bound_s / average_s;  // average >= fastest >= bound: <= 1
  return out;
}

}  // namespace nestfast::comm
