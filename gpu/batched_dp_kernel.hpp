#pragma once
// Internal to gpu/: the batched DP's packed layout and its block body, shared
// by the device kernel (batched_dp.cu) and the host emulation (batched_dp.cpp).
#include <cstdint>

#include "gpu/flat_stage_oracle.hpp"
#include "gpu/host_device.hpp"
#include "solver/search/level_dp_kernel.hpp"

namespace nestfast::gpu::detail {

inline constexpr unsigned kDpThreadsPerBlock = 32;

// Where one instance's data sits in the batch's arenas.
struct DpBatchEntry {
  int layers = 0;
  int stages = 0;
  int levels = 0;
  unsigned mode_mask = 0;
  double hbm_bytes = 0;
  double param_cap = 0;
  double bottleneck_limit = 0;
  std::uint64_t values_offset = 0;      // doubles: layer values, boundary_s, stash_depth
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

// Doubles of shared memory one instance's block needs.
NESTFAST_HD inline std::uint64_t dp_shared_doubles(int layers) {
  return static_cast<std::uint64_t>(kPrefixColumns) * static_cast<std::uint64_t>(layers + 1) +
         static_cast<std::uint64_t>(working_table_rows(layers)) * static_cast<std::uint64_t>(layers);
}

// Phase 0 builds the prefix sums and row 0 of the working table, phase r
// builds row r, the last phase runs the DP; a barrier separates phases.
NESTFAST_HD inline int dp_block_phases(const DpBatchEntry& entry) { return working_table_rows(entry.layers) + 1; }

NESTFAST_HD inline void dp_block_phase(int phase, const DpBatchEntry& entry, const double* values, const int* ints,
                                       double* value_scratch, int* cut_scratch, int* boundaries,
                                       DpBatchOutput* output, double* shared, unsigned lane, unsigned lanes) {
  const int layers = entry.layers;
  const double* layer_values = values + entry.values_offset;
  double* prefix = shared;
  double* working_table = shared + kPrefixColumns * (layers + 1);
  const int rows = working_table_rows(layers);
  if (phase == 0) {
    for (unsigned column = lane; column < static_cast<unsigned>(kPrefixColumns); column += lanes) {
      build_prefix_column(layer_values, layers, static_cast<int>(column), prefix + column * (layers + 1));
    }
  }
  if (phase < rows) {
    for (int i = static_cast<int>(lane); i < layers; i += static_cast<int>(lanes)) {
      build_working_row_entry(layer_values + kWorkingColumn * layers, layers, phase, i, working_table);
    }
    return;
  }
  if (lane != 0) return;
  FlatStageOracle oracle;
  oracle.layers = layers;
  oracle.prefix = prefix;
  oracle.working_table = working_table;
  oracle.boundary_s = layer_values + kLayerColumns * layers;
  oracle.stash_depth = oracle.boundary_s + entry.levels * layers;
  oracle.rank_level = ints + entry.ints_offset;
  oracle.hbm_bytes = entry.hbm_bytes;
  oracle.mode_mask = entry.mode_mask;
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

}  // namespace nestfast::gpu::detail

#include <vector>

namespace nestfast::gpu::detail {

// A batch laid out in the arenas the kernel reads.
struct PackedDpBatch {
  std::vector<DpBatchEntry> entries;
  std::vector<double> values;
  std::vector<int> ints;
  std::uint64_t cells = 0;            // value / cut scratch entries
  std::uint64_t boundary_ints = 0;    // boundaries out
  std::uint64_t max_shared_doubles = 0;
};

// Runs one launch (one block per entry) on device 0 and copies the outputs
// back. Implemented by the back-end (batched_dp.cu); throws without one.
void launch_batched_dp(const PackedDpBatch& batch, std::vector<DpBatchOutput>& outputs, std::vector<int>& boundaries);

}  // namespace nestfast::gpu::detail
