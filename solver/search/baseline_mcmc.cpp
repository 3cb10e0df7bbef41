// MCMC baseline: a seeded Metropolis walk with the DP's budget of stage
// pricings. A step either jumps to a random plan of a random instance
// (pricing all its pp * vpp stages), moves one stage boundary (re-pricing
// the two ranks beside it) or changes one rank's recompute mode (re-pricing
// that rank); IncrementalPrice keeps the plan's price_plan price up to date.
// The best plan found is re-priced by evaluate_plan.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "solver/search/baselines.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/incremental_price.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/search_context.hpp"

namespace nestfast::search {
namespace {

// Relative temperature: a proposal 2% slower is accepted with probability 1/e.
constexpr double kTemperature = 0.02;
constexpr double kJumpProbability = 0.15;
constexpr double kBoundaryMoveProbability = 0.45;  // of the steps; the rest change a recompute mode

// A plan on the walk: its instance and its incrementally kept price.
struct WalkPlan {
  std::size_t instance = 0;
  IncrementalPrice price;
};

class Walk {
 public:
  Walk(const SolveProblem& problem, const std::vector<DpInstance>& instances, std::uint64_t seed)
      : problem_(problem), instances_(instances), context_(problem, instances), rng_(seed),
        prepared_(instances.size()) {
    // Jumps skip instances whose placement-free memory floor exceeds HBM
    // (the DP skips them too); all of them when none fits.
    for (std::size_t i = 0; i < instances.size(); ++i)
      if (!context_.surely_infeasible(i)) targets_.push_back(i);
    if (targets_.empty()) {
      targets_.resize(instances.size());
      std::iota(targets_.begin(), targets_.end(), std::size_t{0});
    }
  }

  // A random plan of a random instance, priced into `into`. Returns the
  // stages priced.
  std::uint64_t jump(WalkPlan& into) {
    const std::size_t index = targets_[pick(targets_.size())];
    into.instance = index;
    const DpInstance& instance = instances_[index];
    PreparedInstance& prepared = prepared_[index];
    if (!prepared.layout) prepared = context_.prepare(index);
    Execution plan = execution_skeleton(problem_, instance);
    plan.stages = uniform_stages(problem_.model, *prepared.layout, instance.pp, instance.vpp, Recompute::None);
    if (uneven(instance) && instance.pp > 1) {
      // pp - 1 distinct cut points among the chain's interior 1..chain-1
      // (a partial Fisher-Yates draw), sorted.
      const int chain = problem_.model.num_layers + 2;
      cuts_.resize(static_cast<std::size_t>(chain - 1));
      std::iota(cuts_.begin(), cuts_.end(), 1);
      const std::size_t wanted = static_cast<std::size_t>(instance.pp - 1);
      for (std::size_t k = 0; k < wanted; ++k) std::swap(cuts_[k], cuts_[k + pick(cuts_.size() - k)]);
      std::sort(cuts_.begin(), cuts_.begin() + static_cast<std::ptrdiff_t>(wanted));
      int first = 0;
      for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const int end = s < wanted ? cuts_[s] : chain;
        plan.stages[s].first_layer = first;
        plan.stages[s].last_layer = end - 1;
        first = end;
      }
    }
    const Modes modes = allowed_modes(instance);
    for (std::size_t i = 0; i < plan.stages.size(); ++i) {
      if (i < static_cast<std::size_t>(instance.pp)) plan.stages[i].recompute = modes.list[pick(modes.count)];
      else plan.stages[i].recompute = plan.stages[i % static_cast<std::size_t>(instance.pp)].recompute;
      plan.stages[i].recompute_layers = plan.stages[i].recompute == Recompute::Full ? instance.recompute_layers : 0;
    }
    return into.price.reset(problem_, std::move(plan), *prepared.layout, *prepared.table);
  }

  // A local change to `current` (a boundary move or a recompute change),
  // left pending for commit/undo. Returns the stages priced; 0 when the draw
  // changes nothing (a move against a one-layer stage, the mode it has).
  std::uint64_t perturb(WalkPlan& current, double u) {
    const Execution& plan = current.price.plan();
    const DpInstance& instance = instances_[current.instance];
    if (uneven(instance) && plan.pp > 1 && u < kJumpProbability + kBoundaryMoveProbability) {
      const std::size_t stage = 1 + pick(plan.stages.size() - 1);  // its first layer moves
      const int shift = static_cast<int>(pick(3)) + 1;
      const int direction = pick(2) == 0 ? -1 : 1;
      const int low = plan.stages[stage - 1].first_layer + 1;
      const int high = plan.stages[stage].last_layer;
      const int moved = std::clamp(plan.stages[stage].first_layer + direction * shift, low, high);
      if (moved == plan.stages[stage].first_layer) return 0;
      return current.price.move_boundary(static_cast<int>(stage), moved);
    }
    const Modes modes = allowed_modes(instance);
    const std::size_t rank = pick(static_cast<std::size_t>(plan.pp));
    const Recompute mode = modes.list[pick(modes.count)];
    if (plan.stages[rank].recompute == mode) return 0;
    return current.price.set_rank_recompute(static_cast<int>(rank), mode,
                                            mode == Recompute::Full ? instance.recompute_layers : 0);
  }

  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }

 private:
  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  static bool uneven(const DpInstance& instance) { return instance.vpp == 1 && instance.uneven_layers; }
  struct Modes {
    std::array<Recompute, kRecomputeModes> list{};
    std::size_t count = 0;
  };
  static Modes allowed_modes(const DpInstance& instance) {
    Modes modes;
    for (Recompute mode : {Recompute::None, Recompute::Selective, Recompute::Full}) {
      if (instance.recompute_mask & (1u << static_cast<unsigned>(mode))) modes.list[modes.count++] = mode;
    }
    return modes;
  }

  const SolveProblem& problem_;
  const std::vector<DpInstance>& instances_;
  SearchContext context_;
  std::mt19937_64 rng_;
  std::vector<PreparedInstance> prepared_;  // per instance, filled on the first jump there
  std::vector<std::size_t> targets_;
  std::vector<int> cuts_;
};

}  // namespace

BaselineResult mcmc_baseline(const SolveProblem& problem, const StrategySpace& space, std::uint64_t seed,
                             std::uint64_t stage_budget) {
  BaselineResult best;
  best.name = "mcmc";
  const std::vector<DpInstance> instances = enumerate_instances(problem, space);
  Walk walk(problem, instances, seed);
  std::uint64_t stages_priced = 0;
  auto consider = [&](const WalkPlan& plan) {
    ++best.plans_evaluated;
    const PlanPrice cost = plan.price.price();
    if (!cost.feasible) return HUGE_VAL;
    if (!best.feasible || cost.iteration_time_s < best.iteration_time_s) {
      best.feasible = true;
      best.iteration_time_s = cost.iteration_time_s;
      best.plan = plan.price.plan();
    }
    return cost.iteration_time_s;
  };
  WalkPlan current, candidate;
  stages_priced += walk.jump(current);
  double current_time = consider(current);
  auto accept = [&](double next_time) {
    return next_time < current_time ||
           (std::isfinite(next_time) &&
            walk.uniform() < std::exp(-(next_time - current_time) / (kTemperature * current_time)));
  };
  while (stages_priced < stage_budget) {
    const double u = walk.uniform();
    if (u < kJumpProbability) {
      stages_priced += walk.jump(candidate);
      const double next_time = consider(candidate);
      if (accept(next_time)) {
        std::swap(current, candidate);
        current_time = next_time;
      }
      continue;
    }
    const std::uint64_t priced = walk.perturb(current, u);
    if (priced == 0) continue;
    stages_priced += priced;
    const double next_time = consider(current);
    if (accept(next_time)) {
      current.price.commit();
      current_time = next_time;
    } else {
      current.price.undo();
    }
  }
  if (best.feasible) {
    // The reported price is evaluate_plan's own.
    best.iteration_time_s = evaluate_plan(problem.model, problem.cluster, best.plan).iteration_time_s;
  }
  best.note = "seeded Metropolis walk (seed " + std::to_string(seed) + "): " + std::to_string(best.plans_evaluated) +
              " plans, " + std::to_string(stages_priced) + " stage pricings (the DP priced " +
              std::to_string(stage_budget) + ")";
  return best;
}

}  // namespace nestfast::search
