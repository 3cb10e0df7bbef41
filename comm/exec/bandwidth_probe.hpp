#pragma once
// A probe of what each rank's links carry when every rank streams at once:
// every rank exchanges `bytes` with the rank one server further on,
// simultaneously, and the best of `repeats` exchanges counts. A measurement
// printed for information only. It is not a bound: the links can beat it
// (another pattern, another moment, a warmer connection), so efficiencies
// rest on the declared link rates instead (comm/plan/bounds.hpp).
#include <cstdint>

#include "comm/exec/server_topology.hpp"

namespace nestfast::comm {

struct BandwidthProbe {
  double bytes_per_s = 0;
  std::uint64_t message_bytes = 0;
  int shift = 0;  // partner = rank + shift
};

// Collective; identical result on every rank.
BandwidthProbe probe_rank_bandwidth(const ServerTopology& topology, std::uint64_t bytes = 16U << 20, int repeats = 3);

}  // namespace nestfast::comm
