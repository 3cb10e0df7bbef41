#include "solver/search/baselines.hpp"
#include "solver/search/plan_cost.hpp"

namespace nestfast::search {

ClusterSpec level_blind(const ClusterSpec& cluster) {
  ClusterSpec blind = cluster;
  if (blind.levels.empty()) return blind;
  const NetworkLevel reference = blind.levels.size() > 1 ? blind.levels[1] : blind.levels[0];
  for (NetworkLevel& level : blind.levels) {
    level.bandwidth_Bps = reference.bandwidth_Bps;
    level.latency_s = reference.latency_s;
    level.oversubscription = reference.oversubscription;
  }
  blind.name = cluster.name + " (level-blind)";
  return blind;
}

BaselineResult phaze_baseline(const SolveProblem& problem, const StrategySpace& space, int threads) {
  BaselineResult result;
  result.name = "phaze";
  SolveProblem blind = problem;
  blind.cluster = level_blind(problem.cluster);
  SolveOptions options;
  options.top_k = 1;
  options.threads = threads;
  options.baselines = false;
  const SolveResult planned = solve(blind, space, options);
  result.plans_evaluated = planned.stats.plans_evaluated;
  if (!planned.feasible) {
    result.note = "the level-blind DP found no plan that fits";
    return result;
  }
  // Same degrees and stages; only the price changes.
  result.plan = planned.top.front().plan;
  const PlanCost cost = evaluate_plan(problem.model, problem.cluster, result.plan);
  ++result.plans_evaluated;
  result.feasible = cost.feasible;
  result.iteration_time_s = cost.iteration_time_s;
  result.note = "same DP with every level priced like '" + blind.cluster.levels[blind.cluster.levels.size() > 1 ? 1 : 0].name +
                "', then priced on the real levels";
  return result;
}

}  // namespace nestfast::search
