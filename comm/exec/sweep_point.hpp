#pragma once
// One point of a benchmark or validation sweep: a traffic matrix that every
// rank knows, run through each requested algorithm with the one harness. The
// ranks use only their own layout; the counts go through gather_counts like
// any caller's would.
#include <string>
#include <vector>

#include "comm/exec/alltoallv.hpp"
#include "comm/exec/harness.hpp"
#include "comm/exec/validation.hpp"
#include "comm/plan/bounds.hpp"

namespace nestfast::comm {

struct PointResult {
  std::uint64_t bytes_per_rank = 0;  // the nominal size of the point
  double lower_bound_s = 0;          // at the declared link rates (0: none declared)
  std::vector<Measurement> runs;     // one per algorithm, in request order
};

// Collective. `bytes_per_rank` is the point's nominal size (algbw divides it by the time).
PointResult measure_point(const ServerTopology& topology, const TrafficMatrix& demand, std::uint64_t bytes_per_rank,
                          const std::vector<std::string>& algos, const AlgorithmSettings& settings,
                          const HarnessOptions& options, const LinkRates& rates);

// One run of a point as a result row: times in us, algbw = bytes_per_rank /
// time_avg, busbw = algbw * (ranks - 1) / ranks (nccl-tests' alltoall
// factor), efficiency = lower bound / time_avg. The one place these are
// derived (a2a bench and the validation phase both call it).
ValidationResult alltoallv_result(const ServerTopology& topology, const PointResult& point, const Measurement& run);

// "(src 2, dst 1, offset 37)" for the first bad bytes, "" when there are none.
std::string describe_bad_bytes(const std::vector<BadByte>& bad);

}  // namespace nestfast::comm
