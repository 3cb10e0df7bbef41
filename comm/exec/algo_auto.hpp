#pragma once
// auto: MPI_Alltoallv below a size threshold (where FAST's S^2 stages of
// latency dominate), FAST above. The threshold is in mean bytes sent per
// rank; measure_auto_threshold finds it on the machine at hand.
#include <cstdint>
#include <memory>

#include "comm/exec/alltoallv.hpp"

namespace nestfast::comm {

class AutoAlltoallv final : public Alltoallv {
 public:
  // fast runs with `settings` (its chunking and stage cost); the threshold is settings.auto_threshold_bytes.
  explicit AutoAlltoallv(const AlgorithmSettings& settings) : settings_(settings) {}
  std::string name() const override { return "auto"; }
  void prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix& counts) override;
  void execute(const std::byte* send, std::byte* recv) override { picked_->execute(send, recv); }
  int stages() const override { return picked_ ? picked_->stages() : 0; }
  std::string decision() const override;  // "mpi" or "fast"
  std::vector<StageTimes> stage_times() const override { return picked_ ? picked_->stage_times() : std::vector<StageTimes>{}; }

 private:
  AlgorithmSettings settings_;
  std::unique_ptr<Alltoallv> picked_;
};

struct AutoThreshold {
  std::uint64_t bytes = 0;            // fast from here up
  std::uint64_t largest_measured = 0;  // when fast never won, bytes = 2 x this
  bool fast_won = false;
};

// Collective: times mpi and fast on uniform traffic from 4 KiB to 4 MiB per
// rank (x4 steps) and returns the smallest size from which fast is at least
// as quick at every larger measured size.
AutoThreshold measure_auto_threshold(const ServerTopology& topology);

}  // namespace nestfast::comm
