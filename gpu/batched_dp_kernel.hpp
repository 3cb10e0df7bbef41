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

NESTFAST_HD inline std::uint64_t prefix_doubles(int layers) {
  return static_cast<std::uint64_t>(kLayerColumns) * static_cast<std::uint64_t>(layers + 1);
}

NESTFAST_HD inline std::uint64_t working_doubles(int layers) {
  return static_cast<std::uint64_t>(working_table_rows(layers)) * static_cast<std::uint64_t>(layers);
}

// Doubles of shared memory one run's block needs: its prefix sums and
// working-set table, then one set of DP counters per lane.
NESTFAST_HD inline std::uint64_t dp_table_doubles(int layers) { return prefix_doubles(layers) + working_doubles(layers); }

inline constexpr std::uint64_t kCounterWords = sizeof(search::LevelDpCounters) / sizeof(double);
static_assert(sizeof(search::LevelDpCounters) % sizeof(double) == 0);

NESTFAST_HD inline std::uint64_t dp_shared_doubles(int layers) {
  return dp_table_doubles(layers) + kDpThreadsPerBlock * kCounterWords;
}

// Phase 0: the block's lanes copy the tables into shared memory and clear the
// DP table. Phase s = 1..p (after a barrier each): the lanes share the states
// of row s, which depend on row s-1 only. Phase p+1: lane 0 sums the lanes'
// counters and reads the plan off. Integer counters sum to the same totals
// in any order, and every state is computed by the CPU's code, so the result
// equals level_dp_run's.
NESTFAST_HD inline int dp_block_phases(const DpBatchEntry& entry) { return entry.stages + 2; }

NESTFAST_HD inline void dp_block_phase(int phase, const DpBatchEntry& entry, const double* values, const int* ints,
                                       double* value_scratch, int* cut_scratch, int* boundaries,
                                       DpBatchOutput* output, double* shared, unsigned lane, unsigned lanes) {
  const int layers = entry.oracle.table.layers;
  const int stages = entry.stages;
  const double* source = values + entry.values_offset;
  const std::uint64_t tables = dp_table_doubles(layers);
  double* value = value_scratch + entry.scratch_offset;
  int* cut = cut_scratch + entry.scratch_offset;
  auto* counters = reinterpret_cast<search::LevelDpCounters*>(shared + tables);
  const bool runs = stages >= 1 && layers >= stages;
  if (phase == 0) {
    for (std::uint64_t k = lane; k < tables; k += lanes) shared[k] = source[k];
    counters[lane] = search::LevelDpCounters{};
    search::level_dp_clear(layers, stages, value, cut, static_cast<int>(lane), static_cast<int>(lanes));
    return;
  }
  if (phase <= stages) {
    if (!runs) return;
    search::DpStageOracle oracle = entry.oracle;
    oracle.table.prefix = shared;
    oracle.table.working = shared + prefix_doubles(layers);
    oracle.table.output_bytes = source + tables;
    oracle.table.level_latency_s = oracle.table.output_bytes + layers;
    oracle.table.level_bandwidth_Bps = oracle.table.level_latency_s + oracle.table.levels;
    oracle.stash = oracle.table.level_bandwidth_Bps + oracle.table.levels;
    oracle.rank_level = ints + entry.ints_offset;
    const int s = phase;
    const int last = search::level_dp_last_i(layers, stages, s);
    for (int i = search::level_dp_first_i(stages, s) + static_cast<int>(lane); i <= last; i += static_cast<int>(lanes)) {
      search::level_dp_state(oracle, layers, stages, s, i, entry.param_cap, entry.bottleneck_limit, value, cut,
                             &counters[lane]);
    }
    return;
  }
  if (lane != 0) return;
  search::LevelDpCounters total;
  for (unsigned k = 0; k < lanes; ++k) {
    total.states += counters[k].states;
    total.transitions += counters[k].transitions;
    total.pruned_memory += counters[k].pruned_memory;
    total.pruned_params += counters[k].pruned_params;
    total.pruned_bound += counters[k].pruned_bound;
  }
  output->counters = total;
  output->bottleneck = runs ? value[search::level_dp_index(layers, stages, 0)] : search::kDpInfinity;
  if (output->bottleneck < search::kDpInfinity) {
    search::level_dp_boundaries(cut, layers, stages, boundaries + entry.boundaries_offset);
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
