// The DP kernel alone, against brute force over every composition, with a
// synthetic oracle whose stage costs depend on the stage index (boundary
// level and stash depth), so the test does not need the cost model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "solver/search/level_dp_kernel.hpp"

namespace nestfast::search {
namespace {

struct SyntheticOracle {
  std::vector<double> compute;      // per layer
  std::vector<double> stash;        // per layer, per in-flight micro-batch
  std::vector<double> weight;       // per layer
  std::vector<double> boundary;     // per stage index: p2p cost of its outgoing boundary
  int stages = 1;
  double hbm = 0;

  double sum(const std::vector<double>& v, int a, int b) const {
    double total = 0;
    for (int l = a; l < b; ++l) total += v[l];
    return total;
  }
  double memory(int a, int b, int j) const { return sum(weight, a, b) + (stages - j) * sum(stash, a, b); }
  bool fits(int a, int b, int j) const { return memory(a, b, j) <= hbm; }
  double params(int a, int b) const { return sum(weight, a, b); }
  double floor(int a, int b) const { return sum(compute, a, b) * (1 - 1e-12); }
  // The incoming boundary of stage j > 0 is paid by the receiving stage.
  double time(int a, int b, int j) const {
    if (!fits(a, b, j)) return kDpInfinity;
    return sum(compute, a, b) + (j > 0 ? boundary[j] : 0.0);
  }
};

// Every composition of L layers into p stages: min bottleneck with params < cap
// and bottleneck < limit.
double brute_force(const SyntheticOracle& o, int L, int p, double cap, double limit) {
  double best = kDpInfinity;
  std::vector<int> b(p + 1, 0);
  b[p] = L;
  auto recurse = [&](auto&& self, int stage, int start, double bottleneck) -> void {
    if (stage == p - 1) {
      if (o.params(start, L) >= cap) return;
      best = std::min(best, std::max(bottleneck, o.time(start, L, stage)));
      return;
    }
    for (int end = start + 1; end <= L - (p - 1 - stage); ++end) {
      if (o.params(start, end) >= cap) break;
      self(self, stage + 1, end, std::max(bottleneck, o.time(start, end, stage)));
    }
  };
  recurse(recurse, 0, 0, 0.0);
  return best < limit ? best : kDpInfinity;
}

TEST(LevelDpKernel, MatchesBruteForceOnRandomChains) {
  std::mt19937_64 rng(20261129);
  int feasible_cases = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int L = 2 + static_cast<int>(rng() % 9);
    const int p = 1 + static_cast<int>(rng() % std::min(L, 5));
    std::uniform_real_distribution<double> unit(0.1, 1.0);
    SyntheticOracle o;
    o.stages = p;
    for (int l = 0; l < L; ++l) {
      o.compute.push_back(unit(rng));
      o.stash.push_back(unit(rng));
      o.weight.push_back(std::round(unit(rng) * 10));
    }
    for (int j = 0; j < p; ++j) o.boundary.push_back(unit(rng) * 0.5);
    o.hbm = (o.sum(o.weight, 0, L) + o.sum(o.stash, 0, L) * p) * (0.4 + 1.2 * unit(rng)) / p + 4;
    const double cap = (trial % 3 == 0) ? kDpInfinity : o.sum(o.weight, 0, L) * unit(rng);

    std::vector<double> value((p + 1) * (L + 1));
    std::vector<int> cut((p + 1) * (L + 1));
    LevelDpCounters counters;
    const double limit = (trial % 4 == 1) ? 1.5 * unit(rng) : kDpInfinity;
    const double dp = level_dp_run(o, L, p, cap, limit, value.data(), cut.data(), &counters);
    const double brute = brute_force(o, L, p, cap, limit);
    ASSERT_EQ(dp, brute) << "trial " << trial << " L=" << L << " p=" << p;
    if (dp < kDpInfinity) {
      ++feasible_cases;
      std::vector<int> bounds(p + 1);
      ASSERT_TRUE(level_dp_boundaries(cut.data(), L, p, bounds.data()));
      double bottleneck = 0;
      for (int j = 0; j < p; ++j) {
        ASSERT_LT(bounds[j], bounds[j + 1]);
        ASSERT_LT(o.params(bounds[j], bounds[j + 1]), cap);
        bottleneck = std::max(bottleneck, o.time(bounds[j], bounds[j + 1], j));
      }
      EXPECT_EQ(bottleneck, dp) << "the reconstructed plan must have the optimal bottleneck";
    }
  }
  EXPECT_GT(feasible_cases, 100) << "memory too tight: the test would not exercise the recurrence";
  EXPECT_LT(feasible_cases, 400) << "memory never binds: the pruning would go untested";
}

TEST(LevelDpKernel, TooFewLayersForTheStagesIsInfeasible) {
  SyntheticOracle o;
  o.stages = 4;
  o.compute = {1, 1, 1};
  o.stash = {0, 0, 0};
  o.weight = {1, 1, 1};
  o.boundary = {0, 0, 0, 0};
  o.hbm = 100;
  std::vector<double> value(5 * 4);
  std::vector<int> cut(5 * 4);
  EXPECT_EQ(level_dp_run(o, 3, 4, kDpInfinity, kDpInfinity, value.data(), cut.data(), nullptr), kDpInfinity);
}

}  // namespace
}  // namespace nestfast::search
