#pragma once
// nestfast's consistent model over the same layers as the artifact's input:
// every term in seconds (the artifact's ms latencies converted once, here).
//  - a stage's time per micro-batch: fw + bw, plus fw again when recomputing
//    (the recomputed forward costs a forward); the last stage does not
//    recompute. It receives its incoming activations at the level of the
//    boundary before it and its outgoing gradients at the level of the
//    boundary after it: lat_l + bytes / bw_l per edge, bw clipped to the
//    prefix minimum (a transfer on level l also crosses every level below).
//  - layout: the pipeline holds devices [0, Np), the last stage at device 0,
//    so a boundary's level follows from the devices of the stages after it.
//  - per iteration: (m + s - 1) * max stage time + the gradient all-reduce of
//    the stage with the most parameters, a hierarchical ring over the levels
//    the d replicas (stride Np) span.
//  - memory: as the artifact (stage_memory.hpp).
#include <cstdint>
#include <optional>

#include "solver/compat/chain_table.hpp"
#include "solver/compat/level_map.hpp"
#include "solver/compat/nest_problem.hpp"

namespace nestfast::compat {

inline constexpr double kSecondsPerMs = 1e-3;

class CorrectedModel {
 public:
  explicit CorrectedModel(const NestProblem& problem);

  // Time (s) of stage [first, end) on `stage_devices` devices with
  // `remaining` stages from it to the end and `devices_after` devices after it.
  std::optional<double> stage_load(const ChainTable& chain, std::size_t first, std::size_t end, int remaining,
                                   std::uint64_t devices_after, int stage_devices) const;
  // Ring all-reduce of `bytes` over dp replicas spaced `pipeline_devices` apart.
  double allreduce(int dp, int pipeline_devices, std::uint64_t bytes) const;
  double time_per_batch(double max_stage_load, int stages, int dp, int pipeline_devices,
                        std::uint64_t max_stage_parameters) const;
  int micro_batches(int dp) const;

 private:
  double transfer(int level, EdgeSum edges) const;

  const NestProblem* problem_;
  LevelMap levels_;
};

}  // namespace nestfast::compat
