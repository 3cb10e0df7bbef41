#pragma once
// The inner recurrence of the level-wise suffix DP, header-only and free of
// std::vector, exceptions and allocation, so the gpu/ batch kernel compiles
// the very same code for the device (NESTFAST_HD adds __host__ __device__).
//
// Problem of one run: cut layers [0, L) into exactly p contiguous stages.
// Stage j (0-based from the first) covering [a, b) costs
//   oracle.time(a, b, j)   its per-micro-batch time (F + B + C): the cheapest
//                          recompute mode that fits in HBM; kDpInfinity if none
//                          fits. Must be nondecreasing in b (a longer stage never
//                          costs less, and never fits where a shorter one does
//                          not), which lets the scan stop early, exactly;
//   oracle.params(a, b)    a nondecreasing-in-b key of the stage's parameters
//                          (the DP-sync + optimizer time they cost), only called
//                          when param_cap is finite;
//   oracle.floor(a, b)     a lower bound of the summed time of any split of
//                          [a, b) into stages (e.g. its compute alone); only
//                          called when bottleneck_limit is finite, to drop
//                          suffixes whose average stage already exceeds it.
// Minimised: the bottleneck max_j time, over partitions whose stages all have
// params < param_cap (strict, so the caller can walk the Pareto front of
// (bottleneck, most loaded stage's parameters) exactly; see
// instance_solver.cpp) and bottleneck < bottleneck_limit (a bound from
// outside; kDpInfinity for none).
// State (s, i): the suffix [i, L) holding the last s stages; its first stage
// is stage j = p - s, whose in-flight micro-batches (1F1B stash depth) and
// incoming boundary level are functions of j (the placement fixes where each
// pipeline rank starts), so the state carries the boundary level and the
// memory depth without extra dimensions.
// value[s * (L+1) + i] = best bottleneck of that suffix, cut[...] = end of its
// first stage. Ties prefer the shortest first stage (smallest cut), so the
// result is deterministic.
#include <cstdint>

#include "solver/cluster/host_device.hpp"

namespace nestfast::search {

struct LevelDpCounters {
  std::uint64_t states = 0;           // (s, i) states filled
  std::uint64_t transitions = 0;      // stage candidates priced
  std::uint64_t pruned_memory = 0;    // scans cut short because no recompute mode fits
  std::uint64_t pruned_params = 0;    // scans cut short by the parameter cap
  std::uint64_t pruned_bound = 0;     // scans cut short because the stage alone is no better
};

inline constexpr double kDpInfinity = 1e300;

NESTFAST_HD inline int level_dp_index(int num_layers, int stages_left, int first_layer) {
  return stages_left * (num_layers + 1) + first_layer;
}

// The range of first layers i of the states (s, i) of row s: the stages
// before this one need at least one layer each, the s-1 after it too.
NESTFAST_HD inline int level_dp_first_i(int num_stages, int s) { return s == num_stages ? 0 : num_stages - s; }
NESTFAST_HD inline int level_dp_last_i(int num_layers, int num_stages, int s) {
  return s == num_stages ? 0 : num_layers - s;
}

// Marks every cell of the table (p+1)*(L+1) empty, except the base case
// (no stages left at the end of the chain). Cells k = start, start + step, ...
// so that a GPU block's lanes can share the work.
NESTFAST_HD inline void level_dp_clear(int num_layers, int num_stages, double* value, int* cut, int start, int step) {
  const int cells = (num_stages + 1) * (num_layers + 1);
  for (int k = start; k < cells; k += step) {
    value[k] = k == level_dp_index(num_layers, 0, num_layers) ? 0.0 : kDpInfinity;
    cut[k] = -1;
  }
}

// State (s, i): reads only row s-1, so the states of one row are independent
// (a GPU block computes a row's states on its lanes in parallel).
template <class Oracle>
NESTFAST_HD void level_dp_state(const Oracle& oracle, int num_layers, int num_stages, int s, int i,
                                double param_cap, double bottleneck_limit, double* value, int* cut,
                                LevelDpCounters* counters) {
  const int L = num_layers;
  const int stage = num_stages - s;
  if (counters) ++counters->states;
  if (bottleneck_limit < kDpInfinity && oracle.floor(i, L) >= bottleneck_limit * s) {
    if (counters) ++counters->pruned_bound;
    return;  // value stays kDpInfinity
  }
  double best = bottleneck_limit;
  int best_cut = -1;
  const int last_end = L - (s - 1);
  const int first_end = (s == 1) ? L : i + 1;  // the last stage takes the whole rest
  for (int end = first_end; end <= last_end; ++end) {
    if (param_cap < kDpInfinity && !(oracle.params(i, end) < param_cap)) {
      if (counters) ++counters->pruned_params;
      break;
    }
    const double rest = value[level_dp_index(L, s - 1, end)];
    if (rest >= best) continue;
    if (counters) ++counters->transitions;
    const double here = oracle.time(i, end, stage);
    if (here >= kDpInfinity) {
      if (counters) ++counters->pruned_memory;
      break;
    }
    if (here >= best) {
      if (counters) ++counters->pruned_bound;
      break;
    }
    const double bottleneck = here > rest ? here : rest;
    if (bottleneck < best) {
      best = bottleneck;
      best_cut = end;
    }
  }
  if (best_cut < 0) best = kDpInfinity;
  value[level_dp_index(L, s, i)] = best;
  cut[level_dp_index(L, s, i)] = best_cut;
}

// Fills value/cut (each (p+1)*(L+1) entries) and returns the optimal
// bottleneck of the whole chain, or kDpInfinity when no partition is feasible.
template <class Oracle>
NESTFAST_HD double level_dp_run(const Oracle& oracle, int num_layers, int num_stages, double param_cap,
                                double bottleneck_limit, double* value, int* cut, LevelDpCounters* counters) {
  level_dp_clear(num_layers, num_stages, value, cut, 0, 1);
  if (num_stages < 1 || num_layers < num_stages) return kDpInfinity;
  for (int s = 1; s <= num_stages; ++s) {
    for (int i = level_dp_first_i(num_stages, s); i <= level_dp_last_i(num_layers, num_stages, s); ++i) {
      level_dp_state(oracle, num_layers, num_stages, s, i, param_cap, bottleneck_limit, value, cut, counters);
    }
  }
  return value[level_dp_index(num_layers, num_stages, 0)];
}

// Writes the p+1 stage boundaries (0 = b_0 < ... < b_p = L) of the optimum
// found by level_dp_run; returns false when there is none.
NESTFAST_HD inline bool level_dp_boundaries(const int* cut, int num_layers, int num_stages, int* boundaries) {
  int layer = 0;
  boundaries[0] = 0;
  for (int s = num_stages; s >= 1; --s) {
    const int next = cut[level_dp_index(num_layers, s, layer)];
    if (next < 0) return false;
    boundaries[num_stages - s + 1] = next;
    layer = next;
  }
  return layer == num_layers;
}

}  // namespace nestfast::search
