#pragma once
// The two answers to a NEST artifact input: the artifact's own cost model
// (compat, quirks and mixed units included) and nestfast's corrected model.
// Each one searches the plan space of the artifact (tensor width t from the
// input's graphs, data parallelism d in 1..min(N, micro-batches), up to
// floor(floor(N/d) / (t*ep*cp)) stages of t*ep*cp devices, any contiguous
// layer split), evaluates a given plan, and evaluates the input's baselines.
#include <optional>

#include "solver/compat/nest_plan.hpp"
#include "solver/compat/nest_problem.hpp"

namespace nestfast::compat {

// Best plan and baselines under `model`. Throws std::invalid_argument when
// no plan fits (memory or devices).
NestAnswer solve(const NestProblem& problem, CostModelKind model);

// Time per batch of `plan`; nullopt when it needs more devices than the
// input has, more replicas than micro-batches, or a stage does not fit in
// memory. Throws std::invalid_argument when the plan does not cover its graph
// with contiguous stages. `skeleton` (compat only): charge the transfers at
// the levels of the artifact's own placement, as its finalTimePerBatch is
// priced, instead of the layout's.
std::optional<double> evaluate_plan(const NestProblem& problem, const NestPlan& plan, CostModelKind model,
                                    const NetworkSkeleton* skeleton = nullptr);

// The input's baselines; nullopt entries are infeasible.
std::vector<BaselineResult> evaluate_baselines(const NestProblem& problem, CostModelKind model);

}  // namespace nestfast::compat
