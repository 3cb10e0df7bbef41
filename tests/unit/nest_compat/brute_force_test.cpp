// The compat search against brute force on small synthetic chains: every
// split of the chain into contiguous stages, every d and t, priced by
// evaluate_plan. Both models' optimum must equal the brute-force minimum exactly
// (same stage prices, same arithmetic), with memory pruning some splits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "solver/compat/nest_solver.hpp"

namespace nestfast {
namespace {

using compat::CostModelKind;
using compat::NestGraph;
using compat::NestPlan;
using compat::NestProblem;
using compat::NestStage;

NestGraph random_chain(int tp, std::size_t layers, std::mt19937_64& random) {
  std::uniform_real_distribution<double> latency(0.5, 3.0);
  std::uniform_int_distribution<std::uint64_t> bytes(1u << 20, 1u << 26);
  NestGraph graph;
  graph.tp = tp;
  for (std::size_t index = 0; index < layers; ++index) {
    graph.layers.push_back({static_cast<std::int64_t>(index) - 1, latency(random) / tp, latency(random) / tp,
                            bytes(random) * 16, bytes(random) * 4});
    if (index > 0) graph.edges.push_back({index - 1, index, bytes(random)});
  }
  graph.edges.push_back({0, layers - 1, bytes(random)});  // a skip edge, like BERT's tied embedding
  return graph;
}

NestProblem random_problem(std::uint64_t seed, bool recompute) {
  std::mt19937_64 random(seed);
  NestProblem problem;
  const std::size_t layers = 8;
  problem.graphs = {random_chain(1, layers, random), random_chain(2, layers, random)};
  problem.network = {{9e11, 1e11, 4e11}, {1e-4, 2e-4, 3e-4}, {4, 2, 2}};
  problem.max_devices = 16;
  problem.mbs_in_batch = 24;
  problem.recompute = recompute;
  problem.memory_per_device = 6ull << 30;
  return problem;
}

double brute_force(const NestProblem& problem, CostModelKind model) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& graph : problem.graphs) {
    const std::size_t positions = graph.layers.size();
    const int stage_devices = problem.stage_devices(graph.tp);
    for (std::uint32_t cuts = 0; cuts < (1u << (positions - 1)); ++cuts) {
      NestPlan plan{graph.tp, 1, {}};
      std::size_t first = 0;
      for (std::size_t position = 1; position <= positions; ++position) {
        if (position == positions || (cuts >> (position - 1)) & 1u) {
          plan.stages.push_back(NestStage{stage_devices, first, position});
          first = position;
        }
      }
      for (int dp = 1; dp <= problem.max_devices; ++dp) {
        plan.dp = dp;
        // The artifact gives each replica floor(N/d) devices.
        if (static_cast<int>(plan.stages.size()) * stage_devices > problem.max_devices / dp) continue;
        const auto time = compat::evaluate_plan(problem, plan, model);
        if (time && *time < best) best = *time;
      }
    }
  }
  return best;
}

TEST(NestCompatBruteForce, CompatSearchEqualsExhaustiveMinimum) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    for (bool recompute : {true, false}) {
      const NestProblem problem = random_problem(seed, recompute);
      const double exhaustive = brute_force(problem, CostModelKind::Compat);
      ASSERT_TRUE(std::isfinite(exhaustive)) << "seed " << seed;
      const auto answer = compat::solve(problem, CostModelKind::Compat);
      EXPECT_EQ(answer.time_per_batch, exhaustive) << "seed " << seed << " recompute " << recompute;
    }
  }
}

TEST(NestCompatBruteForce, MemoryPrunesInTheseProblems) {
  const NestProblem problem = random_problem(1, true);
  const NestPlan whole{1, 1, {NestStage{1, 0, problem.graphs.front().layers.size()}}};
  EXPECT_FALSE(compat::evaluate_plan(problem, whole, CostModelKind::Compat).has_value());
  NestProblem roomy = problem;
  roomy.memory_per_device = 1ull << 50;
  EXPECT_TRUE(compat::evaluate_plan(roomy, whole, CostModelKind::Compat).has_value());
}

TEST(NestCompatBruteForce, CorrectedSearchEqualsExhaustiveMinimum) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    for (bool recompute : {true, false}) {
      const NestProblem problem = random_problem(seed, recompute);
      const double exhaustive = brute_force(problem, CostModelKind::Corrected);
      ASSERT_TRUE(std::isfinite(exhaustive)) << "seed " << seed;
      const auto answer = compat::solve(problem, CostModelKind::Corrected);
      EXPECT_EQ(answer.time_per_batch, exhaustive) << "seed " << seed << " recompute " << recompute;
    }
  }
}

}  // namespace
}  // namespace nestfast
