#pragma once
// The prediction a measured all-to-all is set against (`nestfast run`'s
// validation and `a2a bench --cluster`): the solver's FAST price
// (solver/cluster/collectives.hpp) of the very traffic that ran, on the
// machine it ran on, read as the cluster: each server a node, the servers
// grouped by the cluster's levels above the node.
#include "comm/plan/server_map.hpp"
#include "comm/plan/traffic_matrix.hpp"
#include "solver/cluster/cluster_spec.hpp"

namespace nestfast::jobs {

// Seconds; 0 (no prediction) when the machine cannot be read as `cluster`:
// servers with different rank counts, servers that do not fill the cluster's
// blocks evenly, a cluster without a level above the node.
double fast_price_s(const ClusterSpec& cluster, const comm::TrafficMatrix& demand, const comm::ServerMap& map);

}  // namespace nestfast::jobs
