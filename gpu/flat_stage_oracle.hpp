#pragma once
// The stage oracle of the batched DP in flat, device-friendly form: the
// level-wise DP kernel (solver/search/level_dp_kernel.hpp) asks it for
// time(a, b, rank) and params(a, b) of a stage holding layers [a, b).
//
// A stage's cost under recompute mode m (0 none, 1 selective, 2 full):
//   time   = sum of time_m over its layers + the incoming p2p time of its
//            first layer at its rank's boundary level (none on rank 0);
//   memory = sum of state bytes + stash_depth(rank) * sum of stash_m
//            + the largest working set among its layers;
//   params = sum of the DP-sync key over its layers;
//   floor  = sum over its layers of the least time of any mode (p2p >= 0).
// time(a, b, rank) is the least time over the allowed modes whose memory fits
// in HBM (kDpInfinity when none does). With non-negative per-layer values it
// is nondecreasing in b, as the kernel requires.
//
// The same code runs on the host (the CPU reference and the emulation test)
// and on the device; the tables are built by the NESTFAST_HD builders below in
// one fixed order, so both sides see bit-identical inputs.
#include <cstdint>

#include "gpu/host_device.hpp"
#include "solver/search/level_dp_kernel.hpp"

namespace nestfast::gpu {

inline constexpr int kDpModes = 3;
// Per-layer input columns, in this order.
inline constexpr int kTimeColumn = 0;                     // + mode
inline constexpr int kStateColumn = kTimeColumn + kDpModes;
inline constexpr int kStashColumn = kStateColumn + 1;     // + mode
inline constexpr int kSyncColumn = kStashColumn + kDpModes;
inline constexpr int kSummedColumns = kSyncColumn + 1;    // the columns above are prefix-summed
inline constexpr int kWorkingColumn = kSummedColumns;     // a range max instead
inline constexpr int kLayerColumns = kWorkingColumn + 1;
// Prefix-summed columns: the summed inputs, then the time floor (per layer
// the least time of any mode, a lower bound of every split's summed time).
inline constexpr int kFloorPrefix = kSummedColumns;
inline constexpr int kPrefixColumns = kFloorPrefix + 1;

NESTFAST_HD inline int floor_log2(int n) {
  int k = 0;
  while ((2 << k) <= n) ++k;
  return k;
}

// Rows of the working-set sparse table for `layers` layers.
NESTFAST_HD inline int working_table_rows(int layers) { return layers > 0 ? floor_log2(layers) + 1 : 0; }

// prefix[k] = column[0] + ... + column[k-1], summed left to right.
NESTFAST_HD inline void build_prefix(const double* column, int layers, double* prefix) {
  prefix[0] = 0.0;
  for (int k = 0; k < layers; ++k) prefix[k + 1] = prefix[k] + column[k];
}

// prefix[k] = the sum of the least time over all modes of layers 0..k-1.
NESTFAST_HD inline void build_floor_prefix(const double* layer_values, int layers, double* prefix) {
  prefix[0] = 0.0;
  for (int k = 0; k < layers; ++k) {
    double least = layer_values[kTimeColumn * layers + k];
    for (int mode = 1; mode < kDpModes; ++mode) {
      const double t = layer_values[(kTimeColumn + mode) * layers + k];
      if (t < least) least = t;
    }
    prefix[k + 1] = prefix[k] + least;
  }
}

// Builds prefix column `column` (< kPrefixColumns) from the layer inputs.
NESTFAST_HD inline void build_prefix_column(const double* layer_values, int layers, int column, double* prefix) {
  if (column == kFloorPrefix) {
    build_floor_prefix(layer_values, layers, prefix);
  } else {
    build_prefix(layer_values + column * layers, layers, prefix);
  }
}

// Row `row` of the sparse table (row 0 = the working column itself):
// table[row][i] = max over layers [i, i + 2^row). Needs row - 1 complete.
NESTFAST_HD inline void build_working_row_entry(const double* working, int layers, int row, int i, double* table) {
  if (row == 0) {
    table[i] = working[i];
    return;
  }
  const int half = 1 << (row - 1);
  if (i + 2 * half > layers) return;
  const double left = table[(row - 1) * layers + i];
  const double right = table[(row - 1) * layers + i + half];
  table[row * layers + i] = left > right ? left : right;
}

struct FlatStageOracle {
  int layers = 0;
  const double* prefix = nullptr;         // kPrefixColumns x (layers + 1)
  const double* working_table = nullptr;  // working_table_rows(layers) x layers
  const double* boundary_s = nullptr;     // levels x layers: p2p time into layer a at level l
  const int* rank_level = nullptr;        // per rank; < 0: no incoming boundary
  const double* stash_depth = nullptr;    // per rank: in-flight micro-batches stashed
  double hbm_bytes = 0;
  unsigned mode_mask = 0b111;

  NESTFAST_HD double range(int column, int a, int b) const {
    const double* p = prefix + column * (layers + 1);
    return p[b] - p[a];
  }

  NESTFAST_HD double max_working(int a, int b) const {
    const int row = floor_log2(b - a);
    const double left = working_table[row * layers + a];
    const double right = working_table[row * layers + b - (1 << row)];
    return left > right ? left : right;
  }

  NESTFAST_HD double memory(int a, int b, int rank, int mode) const {
    return range(kStateColumn, a, b) + stash_depth[rank] * range(kStashColumn + mode, a, b) + max_working(a, b);
  }

  NESTFAST_HD double time(int a, int b, int rank) const {
    const int level = rank_level[rank];
    const double incoming = (level >= 0 && a > 0) ? boundary_s[level * layers + a] : 0.0;
    double best = search::kDpInfinity;
    for (int mode = 0; mode < kDpModes; ++mode) {
      if (!((mode_mask >> mode) & 1u)) continue;
      if (memory(a, b, rank, mode) > hbm_bytes) continue;
      const double t = range(kTimeColumn + mode, a, b) + incoming;
      if (t < best) best = t;
    }
    return best;
  }

  NESTFAST_HD double params(int a, int b) const { return range(kSyncColumn, a, b); }

  // A lower bound of the summed time of any split of [a, b) into stages.
  NESTFAST_HD double floor(int a, int b) const { return range(kFloorPrefix, a, b); }
};

}  // namespace nestfast::gpu
