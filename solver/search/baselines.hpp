#pragma once
// The baselines NEST is compared with, each priced by evaluate_plan on the
// real cluster in the same run (solver.md section 4).
#include <cstdint>
#include <vector>

#include "solver/search/solve.hpp"

namespace nestfast::search {

// Megatron-style by hand: tp = GPUs per node (the largest that divides the
// heads and KV heads), sequence parallel on, the smallest pp (uniform layers)
// that fits with recompute none, else selective, else full; the rest dp;
// micro-batch 1, distributed optimizer (ZeRO-1), Megatron's rank order.
BaselineResult manual_baseline(const SolveProblem& problem);

// The same DP over the same space, but blind to levels: every level is
// priced like level 1 (the first network outside the node; level 0 when
// there is one level). Its best plan is then priced on the real cluster.
BaselineResult phaze_baseline(const SolveProblem& problem, const StrategySpace& space, int threads);

// Seeded Metropolis random walk over instances, stage boundaries and
// recompute modes. Budget: `stage_budget` stage pricings, the unit the DP's
// transitions count: a jump to a new plan prices its pp * vpp stages, a
// boundary move re-prices the two ranks beside it, a recompute change one
// rank (vpp stages per rank). The walk stops at the first step that reaches
// the budget, so it exceeds it by less than one plan's stages.
BaselineResult mcmc_baseline(const SolveProblem& problem, const StrategySpace& space, std::uint64_t seed,
                             std::uint64_t stage_budget);

// Every plan of every instance (boundaries x per-stage recompute; per-rank
// recompute for uniform instances), each priced by evaluate_plan.
// Plans of an instance in a fixed order; ties keep the first found.
// exhaustive_plan_count saturates at 2^62.
std::uint64_t exhaustive_plan_count(const SolveProblem& problem, const std::vector<DpInstance>& instances);
BaselineResult exhaustive_baseline(const SolveProblem& problem, const std::vector<DpInstance>& instances);

// The level-blind copy of a cluster phaze_baseline plans on.
ClusterSpec level_blind(const ClusterSpec& cluster);

}  // namespace nestfast::search
