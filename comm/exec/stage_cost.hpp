#pragma once
// alpha of the latency-aware decomposition (FastPlanOptions::stage_cost_bytes):
// what one rail stage costs the FAST executor on this machine, measured, not
// assumed. FAST runs a tiny uniform exchange (S - 1 stages, nothing to wait
// for but the grants and the messages themselves); its time over its stages
// plus one (the node traffic) is the cost of a stage.
#include "comm/exec/server_topology.hpp"

namespace nestfast::comm {

// Collective; the same on every rank. Seconds; 0 on a single server.
double measure_fast_stage_cost(const ServerTopology& topology);

}  // namespace nestfast::comm
