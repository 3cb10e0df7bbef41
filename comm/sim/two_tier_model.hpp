#pragma once
// A two-tier cluster for the flow model (comm.md section 4): every GPU has
// one NIC port (uplink and downlink, one direction each) to the scale-out
// network and one port to its server's scale-up fabric (NVLink and the like).
// Defaults: an H200-class server with one 400 Gb/s NIC per GPU.
namespace nestfast::comm {

struct TwoTierModel {
  double nic_bandwidth_Bps = 50e9;       // per GPU, per direction
  double nic_latency_s = 2e-6;           // per message
  double scaleup_bandwidth_Bps = 450e9;  // per GPU, per direction
  double scaleup_latency_s = 1e-6;       // per message
  // A downlink that k > 1 flows share at once runs at bandwidth / (1 + penalty)
  // (congestion loss and pause frames under incast). Only fan-out has such flows.
  double incast_penalty = 0;
  // false: pipelined, a GPU posts its next message as soon as its ports are
  // free and its data is there (latencies overlap transfers);
  // true: step-synchronous, every step waits for all of the GPU's messages of
  // the step before (one MPI_Waitall per step), so each step pays the latency.
  bool step_synchronous = false;
};

// Throws std::invalid_argument naming the field when a value is not finite
// and positive (latencies and the penalty may be zero).
void check_model(const TwoTierModel& model);

}  // namespace nestfast::comm
