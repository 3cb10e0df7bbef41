#pragma once
// Lower bounds on alltoallv time in bytes per NIC (comm.md section 4); divide
// by the NIC bandwidth for seconds.
#include <cstdint>

#include "comm/plan/server_map.hpp"
#include "comm/plan/traffic_matrix.hpp"

namespace nestfast::comm {

// Cross-server bytes of server s (out and in) over its GPUs' NICs: the most
// any schedule can spread them. Max over servers; exact as a double.
double server_bound_bytes(const TrafficMatrix& demand, const ServerMap& map);

// Without rebalancing (what fan-out and pairwise face): the largest
// cross-server bytes one GPU sends or receives.
double per_gpu_bound_bytes(const TrafficMatrix& demand, const ServerMap& map);

}  // namespace nestfast::comm
