#include "comm/sim/port_clock.hpp"

#include <algorithm>

namespace nestfast::comm {

PortClock::PortClock(const ServerMap& map, const TwoTierModel& model)
    : map_(map), model_(model) {
  const auto N = static_cast<std::size_t>(map.ranks());
  for (auto* ports : {&nic_up_, &nic_down_, &scaleup_up_, &scaleup_down_, &step_begin_, &step_end_}) ports->assign(N, 0.0);
}

double PortClock::send(int from, int to, std::uint64_t bytes, double ready) {
  if (bytes == 0 || from == to) return ready;
  const bool local = map_.server_of(from) == map_.server_of(to);
  std::vector<double>& up = local ? scaleup_up_ : nic_up_;
  std::vector<double>& down = local ? scaleup_down_ : nic_down_;
  // Network traffic goes through the NIC of the sender's (receiver's) lane:
  // its own, or a shared one where a server has fewer NICs than GPUs.
  const int up_port = local ? from : nic_owner(from), down_port = local ? to : nic_owner(to);
  double start = std::max({ready, up[up_port], down[down_port]});
  if (model_.step_synchronous) start = std::max({start, step_begin_[from], step_begin_[to]});
  const double bandwidth = local ? model_.scaleup_bandwidth_Bps : model_.nic_bandwidth_Bps;
  const double end = start + static_cast<double>(bytes) / bandwidth;
  up[up_port] = end;
  down[down_port] = end;
  const double arrival = end + (local ? model_.scaleup_latency_s : model_.nic_latency_s);
  step_end_[from] = std::max(step_end_[from], arrival);
  step_end_[to] = std::max(step_end_[to], arrival);
  finish_ = std::max(finish_, arrival);
  return arrival;
}

int PortClock::nic_owner(int rank) const {
  const int server = map_.server_of(rank);
  return map_.rank_at(server, map_.local_index(rank) % map_.nics_on(server));
}

void PortClock::end_step() {
  if (!model_.step_synchronous) return;
  for (std::size_t g = 0; g < step_begin_.size(); ++g) step_begin_[g] = std::max(step_begin_[g], step_end_[g]);
}

}  // namespace nestfast::comm
