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

NESTFAST_HD inline double flat_all_gather_seconds(double latency_s, double bandwidth_Bps, int n, double bytes) {
  if (n <= 1) return 0;
  return (n - 1) * latency_s + static_cast<double>(n - 1) / n * bytes / bandwidth_Bps;
}

// The cheaper of ring and halving-doubling, as NCCL's tuner picks.
NESTFAST_HD inline double flat_all_reduce_seconds(double latency_s, double bandwidth_Bps, int n, double bytes) {
  if (n <= 1) return 0;
  const double wire = 2.0 * (n - 1) / n * bytes / bandwidth_Bps;
  const double ring = 2.0 * (n - 1) * latency_s + wire;
  const double halving_doubling = 2.0 * ceil_log2(n) * latency_s + wire;
  return ring < halving_doubling ? ring : halving_doubling;
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
// level all-reduces the shard that is left.
NESTFAST_HD inline double group_all_reduce_seconds(const FlatGroup& group, double bytes) {
  if (group.parts == 0) return 0;
  double time = 0;
  double buffer = bytes;
  const int top = group.parts - 1;
  for (int i = 0; i < top; ++i) {
    time += 2.0 * flat_all_gather_seconds(group.latency_s[i], group.bandwidth_Bps[i], group.members[i], buffer);
    buffer /= group.members[i];
  }
  return time + flat_all_reduce_seconds(group.latency_s[top], group.bandwidth_Bps[top], group.members[top], buffer);
}

}  // namespace nestfast
