#pragma once
// The alpha-beta formulas of collectives.hpp over plain arrays: header-only,
// allocation-free and device-compilable, so collectives.cpp (the CPU cost
// model) and the gpu/ DP batch compute them with the very same arithmetic.
#include "solver/cluster/host_device.hpp"

namespace nestfast {

// Enough for any cluster preset (they have 2-4 levels); flat_group() in
// collectives.hpp refuses a group fanning out over more.
inline constexpr int kMaxGroupLevels = 8;

// A group on a cluster, reduced to the levels where it fans out, innermost
// first: `members` per block, and that level's latency and effective
// (oversubscribed) bandwidth.
struct FlatGroup {
  int parts = 0;
  int members[kMaxGroupLevels] = {};
  double latency_s[kMaxGroupLevels] = {};
  double bandwidth_Bps[kMaxGroupLevels] = {};
};

// ceil(log2 n) for n >= 1, exactly (the halving-doubling step count).
NESTFAST_HD inline int ceil_log2(int n) {
  int steps = 0;
  while ((1LL << steps) < n) ++steps;
  return steps;
}

// One half of an all-reduce (an all-gather, or a reduce-scatter): a ring of
// n-1 steps or, with many ranks, a tree-like schedule of ceil(log2 n) steps
// (NCCL 2.23's PAT for all-gather and reduce-scatter, like recursive
// halving-doubling for all-reduce); the cheaper of the two, as NCCL's tuner
// picks. The bytes on the wire are the same either way.
NESTFAST_HD inline double flat_all_gather_seconds(double latency_s, double bandwidth_Bps, int n, double bytes) {
  if (n <= 1) return 0;
  const int ring = n - 1;
  const int tree = ceil_log2(n);
  return (ring < tree ? ring : tree) * latency_s + static_cast<double>(n - 1) / n * bytes / bandwidth_Bps;
}

// An all-reduce is a reduce-scatter then an all-gather of the same buffer,
// so it costs exactly two halves: ring 2(n-1) steps or halving-doubling
// 2 ceil(log2 n) steps, and 2(n-1)/n of the buffer on the wire. A
// reduce-scatter plus an all-gather (sequence parallelism, ZeRO) thus moves
// and costs what the all-reduce it replaces does.
NESTFAST_HD inline double flat_all_reduce_seconds(double latency_s, double bandwidth_Bps, int n, double bytes) {
  return 2.0 * flat_all_gather_seconds(latency_s, bandwidth_Bps, n, bytes);
}

// All-gather or reduce-scatter: the buffer is gathered level by level; level
// l handles the buffer divided by the fan-out of all levels inside it.
NESTFAST_HD inline double group_half_seconds(const FlatGroup& group, double bytes) {
  double time = 0;
  double buffer = bytes;
  for (int i = 0; i < group.parts; ++i) {
    time += flat_all_gather_seconds(group.latency_s[i], group.bandwidth_Bps[i], group.members[i], buffer);
    buffer /= group.members[i];
  }
  return time;
}

// Reduce-scatter then all-gather on every level below the top; the top
// level all-reduces the shard that is left: two halves, level by level.
NESTFAST_HD inline double group_all_reduce_seconds(const FlatGroup& group, double bytes) {
  return 2.0 * group_half_seconds(group, bytes);
}

}  // namespace nestfast
