#pragma once
// The per-rank bandwidth that turns byte bounds into times (lb, eff%). On a
// real cluster this is the NIC; on one machine playing virtual servers it is
// what shared memory gives each rank when all ranks stream at once. Measured,
// not assumed: every rank exchanges `bytes` with the rank one server further
// on, simultaneously, and the best of `repeats` exchanges counts.
#include <cstdint>

#include "comm/exec/server_topology.hpp"
#include "comm/plan/traffic_matrix.hpp"

namespace nestfast::comm {

struct RankBandwidth {
  double bytes_per_s = 0;
  std::uint64_t message_bytes = 0;
  int shift = 0;  // partner = rank + shift
};

// Collective; identical result on every rank.
RankBandwidth measure_rank_bandwidth(const ServerTopology& topology, std::uint64_t bytes = 16U << 20,
                                     int repeats = 3);

// The server lower bound (comm.md section 4) in seconds at `bandwidth`; on a
// single server, where it is zero, the per-rank bound on all non-self bytes.
double lower_bound_s(const TrafficMatrix& demand, const ServerMap& map, const RankBandwidth& bandwidth);

}  // namespace nestfast::comm
