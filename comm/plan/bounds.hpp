#pragma once
// Lower bounds on alltoallv time in bytes per NIC (comm.md section 4); divide
// by the NIC bandwidth for seconds.
#include <cstdint>

#include "comm/plan/server_map.hpp"
#include "comm/plan/traffic_matrix.hpp"

namespace nestfast::comm {

// Cross-server bytes of server s (out and in) over its NICs (one per GPU, or
// nics_per_server): the most any schedule can spread them. Max over servers; exact as a double.
double server_bound_bytes(const TrafficMatrix& demand, const ServerMap& map);

// Without rebalancing (what fan-out and pairwise face): the largest
// cross-server bytes one GPU sends or receives.
double per_gpu_bound_bytes(const TrafficMatrix& demand, const ServerMap& map);

// The link rates a topology declares (a cluster preset, --nic-GBps, the
// testbed's configured NIC rate), in bytes per second and direction; 0 = not
// declared. A bound in seconds rests on these, never on a measurement.
struct LinkRates {
  double nic_Bps = 0;      // per NIC (one per GPU, or nics_per_server of the map)
  double scaleup_Bps = 0;  // per GPU, inside a server
};

// A map's per-NIC rates from per-GPU ones (what a cluster preset declares):
// a NIC that k GPUs share carries the rate of all k.
LinkRates rates_from_gpu(double gpu_nic_Bps, double gpu_scaleup_Bps, const ServerMap& map);

// The lower bound in seconds: the server bound at nic_Bps; on a single
// server, the largest non-self bytes one rank sends or receives at
// scaleup_Bps. 0 when the rate it needs is not declared (no bound).
double lower_bound_seconds(const TrafficMatrix& demand, const ServerMap& map, const LinkRates& rates);

// lb / measured as a fraction, where it is one: a bound was declared and no
// iteration beat it (fastest >= bound). An iteration faster than the bound
// means the declared rates are below what the links really carry; there is
// then no efficiency to give (never one above 1).
struct Efficiency {
  bool bounded = false;         // a bound was declared
  bool bound_violated = false;  // ...and the fastest iteration beat it
  double value = 0;             // in (0, 1] when bounded and not violated
  bool known() const { return bounded && !bound_violated; }
};
Efficiency efficiency(double lower_bound_s, double fastest_s, double average_s);

}  // namespace nestfast::comm
