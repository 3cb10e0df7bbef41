#pragma once
// The resource model under every schedule the flow model plays: each NIC's
// uplink and downlink (one NIC per GPU, or shared where a server has fewer)
// and each GPU's scale-up uplink and downlink carry one message at a time at
// full bandwidth; a message starts when its sender's
// uplink and receiver's downlink are free and its data is ready, and arrives
// one latency after its last byte leaves. In step-synchronous mode a message
// also waits for both ends to have finished their previous step.
#include <cstdint>
#include <vector>

#include "comm/plan/server_map.hpp"
#include "comm/sim/two_tier_model.hpp"

namespace nestfast::comm {

class PortClock {
 public:
  PortClock(const ServerMap& map, const TwoTierModel& model);

  // Plays one message (scale-up when both ends share a server); returns its
  // arrival time. Zero bytes or from == to cost nothing.
  double send(int from, int to, std::uint64_t bytes, double ready);
  // Step-synchronous mode: every rank's next step starts when its messages
  // of this one have arrived. No effect when pipelined.
  void end_step();
  double finish() const { return finish_; }

 private:
  int nic_owner(int rank) const;  // the rank whose NIC port `rank` uses
  const ServerMap& map_;
  TwoTierModel model_;
  std::vector<double> nic_up_, nic_down_, scaleup_up_, scaleup_down_;
  std::vector<double> step_begin_, step_end_;
  double finish_ = 0;
};

}  // namespace nestfast::comm
