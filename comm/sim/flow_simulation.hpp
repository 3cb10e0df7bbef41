#pragma once
// Completion times of alltoallv algorithms' actual schedules in the two-tier
// flow model, and the lower bounds they are measured against (comm.md §4).
#include <string>
#include <vector>

#include "comm/plan/fast_plan.hpp"
#include "comm/sim/two_tier_model.hpp"

namespace nestfast::comm {

struct Bounds {
  double server_s = 0;   // server bound: max over servers of cross-server bytes / (GPUs * NIC bandwidth)
  double per_gpu_s = 0;  // per-GPU bound without rebalancing
};
Bounds lower_bounds(const TrafficMatrix& demand, const ServerMap& map, const TwoTierModel& model);

// Step 0 balance + intrinsic exchange over scale-up, then each stage's rail
// messages, each proxy forwarding the previous stage's pieces over scale-up.
double simulate_fast(const FastPlan& plan, const TwoTierModel& model);
// Every message at once; the fluid ideal: the busiest port's bytes over its
// bandwidth (a NIC downlink fed by several servers pays the incast penalty),
// plus one latency. Optimistic for fan-out.
double simulate_fanout(const TrafficMatrix& demand, const ServerMap& map, const TwoTierModel& model);
// N-1 shifted rounds: in round r rank g sends to g + r and receives from g - r.
double simulate_pairwise(const TrafficMatrix& demand, const ServerMap& map, const TwoTierModel& model);
// Rail-aligned two-phase: GPU i of s first gathers over scale-up everything
// its server sends to local index i of other servers, then sends it on its
// rail in S-1 shifted rounds (no rebalancing across rails).
double simulate_hierarchical(const TrafficMatrix& demand, const ServerMap& map, const TwoTierModel& model);

struct SimulatedAlgorithm {
  std::string name;  // fast, fanout, pairwise, hierarchical
  double time_s = 0;
};
// All four, FAST from `plan`.
std::vector<SimulatedAlgorithm> simulate_all(const FastPlan& plan, const TwoTierModel& model);

}  // namespace nestfast::comm
