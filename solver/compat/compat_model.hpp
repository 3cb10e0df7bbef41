#pragma once
// The NEST artifact's cost model, quirks included (solver.md section 5). This
// is the one place in nestfast that mixes units on purpose: compute is in ms,
// while pipeline transfers and the data-parallel all-reduce are
// bytes / (bytes/s) + latency in seconds, added to the ms. The quirks, each
// checked against the 21 reference fixtures:
//  - a stage's load is fw + bw, plus bw once more when recomputing (the
//    recomputed forward priced with the backward latencies); the last stage
//    never recomputes. Without recompute the stage also pays its outgoing
//    edges (the backward); with recompute it does not.
//  - a stage pays its incoming edges at the level of the boundary *after* it
//    (after the devices of the stages that follow it): the suffix DP prices
//    the input with the level of the suffix it is prepended to. Level 0 costs
//    c/bw0 + lat0, level l >= 1 costs 2*(c/bw_l + lat_l), with bandwidths
//    clipped to the prefix minimum over the levels.
//  - per iteration: max stage load * (m + s - 1) + all-reduce of the first
//    stage's parameters, m = ceil(micro-batches / d).
//  - the all-reduce: floor(log2 d) halving-doubling steps of
//    4*P/2^i/bw0 + 2*lat0, plus 2*(K-l)*(P/bw_l + lat_l) for every level
//    l >= 1 (unclipped), whenever d >= 2.
//  - memory: 2P + O + A + (in-flight - 1) * stash <= HBM, stash = incoming
//    edge bytes with recompute, else A.
#include <cstdint>
#include <optional>

#include "solver/compat/chain_table.hpp"
#include "solver/compat/level_map.hpp"
#include "solver/compat/nest_problem.hpp"

namespace nestfast::compat {

class CompatModel {
 public:
  explicit CompatModel(const NestProblem& problem);

  // Load (ms, mixed units) of stage [first, end) when `remaining` stages,
  // itself included, run from it to the pipeline's end and the stages after it
  // hold `devices_after` devices; nullopt when it does not fit in memory.
  std::optional<double> stage_load(const ChainTable& chain, std::size_t first, std::size_t end, int remaining,
                                   std::uint64_t devices_after) const;
  double allreduce(int dp, std::uint64_t parameter_bytes) const;
  double time_per_batch(double max_stage_load, int stages, int dp, std::uint64_t first_stage_parameters) const;
  int micro_batches(int dp) const;
  const LevelMap& levels() const { return levels_; }

 private:
  double transfer(int level, EdgeSum edges) const;

  const NestProblem* problem_;
  LevelMap levels_;
};

// Memory of one stage in the artifact's model (shared by both cost models).
bool stage_fits_memory(const NestProblem& problem, const ChainTable& chain, std::size_t first, std::size_t end,
                       int remaining);

}  // namespace nestfast::compat
