// Sanity of the optimum as the hardware changes: more HBM or a faster
// network level never makes the best plan slower; a problem where nothing
// fits says so and names the tightest constraint.
#include <gtest/gtest.h>

#include "solver/search/memory_model.hpp"
#include "solver/search/plan_cost.hpp"
#include "tests/unit/search/random_problem.hpp"

namespace nestfast::search {
namespace {

SolveResult best_of(const testing::RandomCase& c) {
  SolveOptions options;
  options.top_k = 1;
  options.threads = 1;
  options.baselines = false;
  return solve(c.problem, c.space, options);
}

// HBM set where memory binds for this case: between the reserve and the
// plainest plan's need.
testing::RandomCase tight_case(std::uint64_t seed) {
  testing::RandomCase c = testing::random_case(seed);
  c.space.placements.clear();
  testing::set_hbm_fraction(c, 0.4);
  return c;
}

TEST(Monotonicity, MoreHbmNeverHurts) {
  int improved = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    testing::RandomCase c = tight_case(seed);
    const SolveResult before = best_of(c);
    c.problem.cluster.gpu.hbm_bytes += c.problem.cluster.gpu.hbm_bytes / 4;
    const SolveResult after = best_of(c);
    if (!before.feasible) continue;
    ASSERT_TRUE(after.feasible) << "seed " << seed;
    EXPECT_LE(after.top.front().iteration_time_s, before.top.front().iteration_time_s) << "seed " << seed;
    if (after.top.front().iteration_time_s < before.top.front().iteration_time_s) ++improved;
  }
  EXPECT_GT(improved, 3) << "HBM never mattered: the test would not show anything";
}

TEST(Monotonicity, AFasterLevelNeverHurts) {
  int improved = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const testing::RandomCase base = tight_case(seed);
    const SolveResult before = best_of(base);
    if (!before.feasible) continue;
    for (std::size_t level = 0; level < base.problem.cluster.levels.size(); ++level) {
      for (int change = 0; change < 3; ++change) {
        testing::RandomCase c = base;
        NetworkLevel& l = c.problem.cluster.levels[level];
        if (change == 0) l.bandwidth_Bps *= 3;
        if (change == 1) l.latency_s /= 4;
        if (change == 2) l.oversubscription = 1;
        const SolveResult after = best_of(c);
        ASSERT_TRUE(after.feasible);
        EXPECT_LE(after.top.front().iteration_time_s, before.top.front().iteration_time_s)
            << "seed " << seed << " level " << level << " change " << change;
        if (after.top.front().iteration_time_s < before.top.front().iteration_time_s) ++improved;
      }
    }
  }
  EXPECT_GT(improved, 10);
}

TEST(Infeasible, NamesTheTightestConstraint) {
  testing::RandomCase c = tight_case(3);
  c.problem.cluster.gpu.hbm_bytes = static_cast<std::uint64_t>(kRuntimeReserveBytes) + 1024;
  const SolveResult result = best_of(c);
  ASSERT_FALSE(result.feasible);
  EXPECT_NE(result.infeasible_reason.find("needs"), std::string::npos) << result.infeasible_reason;
  EXPECT_NE(result.infeasible_reason.find("HBM is"), std::string::npos) << result.infeasible_reason;
  EXPECT_GT(result.tightest_memory_bytes, static_cast<double>(c.problem.cluster.gpu.hbm_bytes));
}

TEST(Infeasible, NamesALayerThatCannotFitAlone) {
  testing::RandomCase c = tight_case(5);
  c.problem.model.vocab = 4'000'000;  // the embedding and head outgrow any device
  c.problem.cluster.gpu.hbm_bytes = 8ull << 30;
  c.space.zero_stage = {0};
  const SolveResult result = best_of(c);
  ASSERT_FALSE(result.feasible);
  EXPECT_NE(result.infeasible_reason.find("alone needs"), std::string::npos) << result.infeasible_reason;
}

}  // namespace
}  // namespace nestfast::search
