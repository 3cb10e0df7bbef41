#pragma once
// Internal to gpu/: the batched DP's packed layout and its block body, shared
// by the device kernel (batched_dp.cu) and the host emulation (batched_dp.cpp).
#include <cstdint>
#include <vector>

#include "gpu/host_device.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/level_dp_kernel.hpp"
#include "solver/search/stage_oracle.hpp"

namespace nestfast::gpu::detail {

inline constexpr unsigned kDpThreadsPerBlock = 32;

// One DP run in the batch's arenas. `oracle` is the run's DpStageOracle with
// its pointers cleared; the block points them at the arenas (the prefix sums
// and the working-set table at its shared-memory copies).
struct DpBatchEntry {
  search::DpStageOracle oracle;
  int stages = 0;
  double param_cap = 0;
  double bottleneck_limit = 0;
  std::uint64_t values_offset = 0;      // doubles: prefix, working, output_bytes, latency, bandwidth, stash
  std::uint64_t ints_offset = 0;        // ints: rank_level
  std::uint64_t scratch_offset = 0;     // DP cells: value (doubles) and cut (ints)
  std::uint64_t boundaries_offset = 0;  // ints: stages + 1 boundaries out
};

struct DpBatchOutput {
  double bottleneck = 0;
  search::LevelDpCounters counters;
};

NESTFAST_HD inline std::uint64_t dp_cells(int layers, int stages) {
  return static_cast<std::uint64_t>(stages + 1) * static_cast<std::uint64_t>(layers + 1);
}

NESTFAST_HD inline int working_rows(int layers) {
  int rows = 1;
  while ((2 << (rows - 1)) <= layers) ++rows;
  return rows;
}

NESTFAST_HD inline std::uint64_t prefix_doubles(int layers) {
  return static_cast<std::uint64_t>(kLayerColumns) * static_cast<std::uint64_t>(layers + 1);
}

NESTFAST_HD inline std::uint64_t working_doubles(int layers) {
  return static_cast<std::uint64_t>(working_rows(layers)) * static_cast<std::uint64_t>(layers);
}

// Doubles of shared memory one run's block needs: its prefix sums and working-set table.
NESTFAST_HD inline std::uint64_t dp_shared_doubles(int layers) { return prefix_doubles(layers) + working_doubles(layers); }

// Phase 0: the block's lanes copy the prefix sums and the working-set table
// into shared memory. Phase 1 (after a barrier): lane 0 runs the DP.
inline constexpr int kDpBlockPhases = 2;

NESTFAST_HD inline void dp_block_phase(int phase, const DpBatchEntry& entry, const double* values, const int* ints,
                                       double* value_scratch, int* cut_scratch, int* boundaries,
                                       DpBatchOutput* output, double* shared, unsigned lane, unsigned lanes) {
  const int layers = entry.oracle.table.layers;
  const double* source = values + entry.values_offset;
  const std::uint64_t tables = dp_shared_doubles(layers);
  if (phase == 0) {
    for (std::uint64_t k = lane; k < tables; k += lanes) shared[k] = source[k];
    return;
  }
  if (lane != 0) return;
  search::DpStageOracle oracle = entry.oracle;
  oracle.table.prefix = shared;
  oracle.table.working = shared + prefix_doubles(layers);
  oracle.table.output_bytes = source + tables;
  oracle.table.level_latency_s = oracle.table.output_bytes + layers;
  oracle.table.level_bandwidth_Bps = oracle.table.level_latency_s + oracle.table.levels;
  oracle.stash = oracle.table.level_bandwidth_Bps + oracle.table.levels;
  oracle.rank_level = ints + entry.ints_offset;
  search::LevelDpCounters counters;
  output->bottleneck = search::level_dp_run(oracle, layers, entry.stages, entry.param_cap, entry.bottleneck_limit,
                                            value_scratch + entry.scratch_offset, cut_scratch + entry.scratch_offset,
                                            &counters);
  output->counters = counters;
  if (output->bottleneck < search::kDpInfinity) {
    search::level_dp_boundaries(cut_scratch + entry.scratch_offset, layers, entry.stages,
                                boundaries + entry.boundaries_offset);
  }
}

// A batch laid out in the arenas the kernel reads.
struct PackedDpBatch {
  std::vector<DpBatchEntry> entries;
  std::vector<double> values;
  std::vector<int> ints;
  std::uint64_t cells = 0;          // value / cut scratch entries
  std::uint64_t boundary_ints = 0;  // boundaries out
  std::uint64_t max_shared_doubles = 0;
};

// Runs one launch (one block per entry) on device 0 and copies the outputs
// back. Implemented by the back-end (batched_dp.cu); throws without one.
void launch_batched_dp(const PackedDpBatch& batch, std::vector<DpBatchOutput>& outputs, std::vector<int>& boundaries);

}  // namespace nestfast::gpu::detail
