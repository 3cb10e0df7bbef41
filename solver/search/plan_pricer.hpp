#pragma once
// evaluate_plan's price of a plan, on an already computed layout and layer
// table: the same stage functions summed in the same order (so the same
// doubles), without re-validating or rebuilding the layout. For searches
// that price many plans of one instance (the MCMC baseline); a unit test
// checks it against evaluate_plan bit for bit.
#include "solver/search/execution.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/solve.hpp"
#include "solver/search/stage_cost.hpp"

namespace nestfast::search {

struct PlanPrice {
  bool feasible = false;  // every pipeline rank fits in HBM
  double iteration_time_s = 0;
};

// One pipeline rank's part of the price: its per-micro-batch time t_r (its
// stages summed part by part in stage order from zero, as evaluate_plan
// does), its DP sync + optimizer time S_r, and whether it fits in HBM.
struct RankPrice {
  double time_s = 0;
  double warmup_p2p_s = 0;  // StageTime::p2p_warmup_s of the rank's stages
  double sync_s = 0;
  bool fits = true;
};

RankPrice price_rank(const Execution& plan, int rank, const LayerTable& table, const ReplicaContext& replicas,
                     double hbm_bytes);

// `plan` must be valid for `layout` (derived fields filled).
PlanPrice price_plan(const SolveProblem& problem, const Execution& plan, const ExecutionLayout& layout,
                     const LayerTable& table);

}  // namespace nestfast::search
