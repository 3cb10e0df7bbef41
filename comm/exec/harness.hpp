#pragma once
// The one harness over every Alltoallv: a checked exchange first (validation
// words in, complement in the receive buffer, every byte compared), then
// warm-up and timed iterations. An iteration's time is the slowest rank's
// (the collective is done when its last rank is), each started after a barrier.
#include <cstdint>
#include <string>
#include <vector>

#include "comm/exec/alltoallv.hpp"
#include "comm/exec/exchange_buffers.hpp"

namespace nestfast::comm {

struct HarnessOptions {
  int iterations = 20;
  int warmup = 2;
  bool validate = true;
  std::uint64_t seed = 1;
  bool device = false;  // measure_point: GPU buffers, every algorithm staged through pinned host memory
};

struct Measurement {
  std::string algo;
  std::string decision;  // what the algorithm decided (auto: its pick)
  int stages = 0;
  int iterations = 0;
  double min_s = 0, avg_s = 0, max_s = 0;  // over iterations of the slowest rank's time
  bool validated = false;
  std::uint64_t wrong = 0;
  std::vector<BadByte> first_bad;
  std::vector<StageTimes> stage_times;  // this rank's, in the last timed iteration (fast only)
};

// Collective. Prepares `algo` for the pattern (counts already gathered), then checks and times it.
Measurement measure_alltoallv(Alltoallv& algo, const ServerTopology& topology, const AlltoallvLayout& layout,
                              const TrafficMatrix& counts, ExchangeBuffers& buffers, const HarnessOptions& options);

}  // namespace nestfast::comm
