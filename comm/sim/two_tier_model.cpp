#include "comm/sim/two_tier_model.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace nestfast::comm {

namespace {

void require(double value, bool zero_allowed, const char* name) {
  const bool ok = std::isfinite(value) && (zero_allowed ? value >= 0 : value > 0);
  if (!ok) {
    throw std::invalid_argument(std::string("flow model: ") + name + " = " + std::to_string(value) + " must be " +
                                (zero_allowed ? ">= 0" : "> 0") + " and finite");
  }
}

}  // namespace

void check_model(const TwoTierModel& model) {
  require(model.nic_bandwidth_Bps, false, "NIC bandwidth");
  require(model.nic_latency_s, true, "NIC latency");
  require(model.scaleup_bandwidth_Bps, false, "scale-up bandwidth");
  require(model.scaleup_latency_s, true, "scale-up latency");
  require(model.incast_penalty, true, "incast penalty");
}

}  // namespace nestfast::comm
