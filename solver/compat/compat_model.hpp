#pragma once
// The NEST artifact's cost model, quirks included, as its evaluator
// getTimePerBatchForResult prices a plan (nest/Solver/device_placement/
// device_placement.cpp at 3e163ad, lines 1879-2033; the line numbers below
// are that file's). This is the one place in nestfast that mixes units on
// purpose: compute is in ms, while pipeline transfers and the data-parallel
// all-reduce are bytes / (bytes/s) + latency in seconds, added to the ms.
//  - Layout: the stage holding the chain's last layer sits on devices
//    [0, a), the one before it on [a, 2a), and so on (the DP places stages
//    from the end, placeNodes/nearestDevices, lines 767-833).
//  - A stage's load is its forward pass at the level of the boundary before
//    it plus its backward pass at the level of the boundary after it (lines
//    1983-1985, 2011-2016; ArtifactStageTimes), with the recomputing
//    backward when the input asks for recomputation and the stage is not
//    the last (line 1975).
//  - A stage fits when its position s (stages from it to the end, itself
//    included) is at most its max_in_flight (lines 1989-2009).
//  - Time per batch: max stage load * (ceil(micro-batches / d) + S - 1)
//    plus the all-reduce of the first stage's parameters (lines 2025-2031).
//  - The all-reduce (lines 695-742): replicas at devices 0, D, 2D, ... with
//    D = the devices of one pipeline; K = 1 + the lowest level whose first
//    group holds them all. floor(log2 d) halving-doubling steps of
//    lat_0 + (P / 2^i) / bw_0, then for each level l in 1..K-1:
//    total += 2 * (lat_l + P / bw_l) + lower; lower += total (the tree cost
//    compounds: each level adds everything below it again). Bandwidths are
//    not clipped here, and "/ bw" is "* (1 / bw)" as in the artifact.
#include <cstdint>
#include <optional>

#include "solver/compat/artifact_stage_times.hpp"
#include "solver/compat/level_map.hpp"
#include "solver/compat/nest_problem.hpp"

namespace nestfast::compat {

class CompatModel {
 public:
  explicit CompatModel(const NestProblem& problem);

  // Load (ms, mixed units) of stage [first, end) at position `position`
  // (stages from it to the end) whose boundaries before and after it are on
  // the given levels; nullopt when that many micro-batches do not fit in
  // its memory.
  std::optional<double> stage_load(const ArtifactStageTimes& times, std::size_t first, std::size_t end, int position,
                                   int level_before, int level_after) const;
  // All-reduce of `parameter_bytes` over dp replicas `pipeline_devices` apart.
  double allreduce(int dp, std::uint64_t pipeline_devices, double parameter_bytes) const;
  double time_per_batch(double max_stage_load, int stages, int dp, std::uint64_t pipeline_devices,
                        double first_stage_parameters) const;
  // ceil(mbsInBatch / d), mbsInBatch read as an int as the artifact does.
  int micro_batches(int dp) const;
  const LevelMap& levels() const { return levels_; }

 private:
  const NestProblem* problem_;
  LevelMap levels_;
};

}  // namespace nestfast::compat
