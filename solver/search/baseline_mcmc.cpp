// MCMC baseline: a seeded Metropolis walk. A step either jumps to a random
// instance with a random plan, moves one stage boundary, or changes one
// stage's (rank's) recompute mode; every proposal is priced once, by
// price_plan on the instance's cached layout and table (evaluate_plan's
// numbers without re-deriving the layout), and the best by evaluate_plan.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "solver/search/baselines.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/plan_pricer.hpp"
#include "solver/search/search_context.hpp"

namespace nestfast::search {
namespace {

// Relative temperature: a proposal 2% slower is accepted with probability 1/e.
constexpr double kTemperature = 0.02;

struct WalkState {
  std::size_t instance = 0;
  Execution plan;
};

class Walk {
 public:
  Walk(const SolveProblem& problem, const std::vector<DpInstance>& instances, SearchContext& context,
       std::uint64_t seed)
      : problem_(problem), instances_(instances), context_(context), rng_(seed) {}

  WalkState random_plan() {
    WalkState state;
    state.instance = pick(instances_.size());
    const DpInstance& instance = instances_[state.instance];
    Execution& execution = state.plan;
    execution = execution_skeleton(problem_, instance);
    const ExecutionLayout& layout = *context_.prepare(state.instance).layout;
    execution.stages = uniform_stages(problem_.model, layout, instance.pp, instance.vpp, Recompute::None);
    const std::vector<Recompute> modes = allowed_modes(instance);
    if (uneven(instance) && instance.pp > 1) {
      // pp - 1 distinct cut points among the chain's interior.
      const int chain = problem_.model.num_layers + 2;
      std::vector<int> cuts(static_cast<std::size_t>(chain - 1));
      for (int i = 0; i < chain - 1; ++i) cuts[static_cast<std::size_t>(i)] = i + 1;
      std::shuffle(cuts.begin(), cuts.end(), rng_);
      cuts.resize(static_cast<std::size_t>(instance.pp - 1));
      std::sort(cuts.begin(), cuts.end());
      int first = 0;
      for (std::size_t s = 0; s < execution.stages.size(); ++s) {
        const int end = s + 1 < execution.stages.size() ? cuts[s] : chain;
        execution.stages[s].first_layer = first;
        execution.stages[s].last_layer = end - 1;
        first = end;
      }
    }
    for (std::size_t rank = 0; rank < static_cast<std::size_t>(instance.pp); ++rank) {
      set_mode(execution, rank, modes[pick(modes.size())]);
    }
    derive_stage_layout(layout, execution);
    return state;
  }

  // A neighbour of `current` (same instance), or a fresh random plan.
  WalkState propose(const WalkState& current) {
    const double u = uniform();
    if (u < 0.15) return random_plan();
    WalkState state = current;
    const DpInstance& instance = instances_[state.instance];
    Execution& next = state.plan;
    if (uneven(instance) && next.pp > 1 && u < 0.6) {
      const std::size_t boundary = 1 + pick(next.stages.size() - 1);  // first layer of this stage moves
      const int shift = static_cast<int>(pick(3)) + 1;
      const int direction = pick(2) == 0 ? -1 : 1;
      const int moved = next.stages[boundary].first_layer + direction * shift;
      if (moved > next.stages[boundary - 1].first_layer && moved <= next.stages[boundary].last_layer) {
        next.stages[boundary].first_layer = moved;
        next.stages[boundary - 1].last_layer = moved - 1;
      }
      return state;
    }
    const std::vector<Recompute> modes = allowed_modes(instance);
    set_mode(next, pick(static_cast<std::size_t>(next.pp)), modes[pick(modes.size())]);
    return state;
  }

  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }

 private:
  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  static bool uneven(const DpInstance& instance) { return instance.vpp == 1 && instance.uneven_layers; }
  static std::vector<Recompute> allowed_modes(const DpInstance& instance) {
    std::vector<Recompute> modes;
    for (Recompute mode : {Recompute::None, Recompute::Selective, Recompute::Full}) {
      if (instance.recompute_mask & (1u << static_cast<unsigned>(mode))) modes.push_back(mode);
    }
    return modes;
  }

  // A pipeline rank's stages share the mode (one stage per rank when vpp = 1).
  static void set_mode(Execution& execution, std::size_t rank, Recompute mode) {
    for (std::size_t i = rank; i < execution.stages.size(); i += static_cast<std::size_t>(execution.pp)) {
      execution.stages[i].recompute = mode;
    }
  }

  const SolveProblem& problem_;
  const std::vector<DpInstance>& instances_;
  SearchContext& context_;
  std::mt19937_64 rng_;
};

}  // namespace

BaselineResult mcmc_baseline(const SolveProblem& problem, const StrategySpace& space, std::uint64_t seed,
                             std::uint64_t stage_budget) {
  // Interim, until proposals are priced incrementally: whole-plan pricing
  // cannot reach the DP's budget in reasonable time.
  constexpr std::uint64_t max_plans = 20000;
  BaselineResult best;
  best.name = "mcmc";
  const std::vector<DpInstance> instances = enumerate_instances(problem, space);
  SearchContext context(problem, instances);
  Walk walk(problem, instances, context, seed);
  std::uint64_t stages_priced = 0;
  auto price = [&](const WalkState& state) {
    ++best.plans_evaluated;
    stages_priced += state.plan.stages.size();
    const PreparedInstance prepared = context.prepare(state.instance);
    const PlanPrice cost = price_plan(problem, state.plan, *prepared.layout, *prepared.table);
    if (!cost.feasible) return HUGE_VAL;
    if (!best.feasible || cost.iteration_time_s < best.iteration_time_s) {
      best.feasible = true;
      best.iteration_time_s = cost.iteration_time_s;
      best.plan = state.plan;
    }
    return cost.iteration_time_s;
  };
  WalkState current = walk.random_plan();
  double current_time = price(current);
  while (stages_priced < stage_budget && best.plans_evaluated < max_plans) {
    WalkState next = walk.propose(current);
    const double next_time = price(next);
    const bool accept = next_time < current_time ||
                        (std::isfinite(next_time) &&
                         walk.uniform() < std::exp(-(next_time - current_time) / (kTemperature * current_time)));
    if (accept) {
      current = std::move(next);
      current_time = next_time;
    }
  }
  if (best.feasible) {
    // The reported price is evaluate_plan's own.
    best.iteration_time_s = evaluate_plan(problem.model, problem.cluster, best.plan).iteration_time_s;
  }
  best.note = "seeded Metropolis walk (seed " + std::to_string(seed) + "): " + std::to_string(best.plans_evaluated) +
              " plans, " + std::to_string(stages_priced) + " stage pricings";
  if (stages_priced < stage_budget) {
    best.note += " (capped at " + std::to_string(max_plans) + " plans; the DP priced " + std::to_string(stage_budget) +
                 " stages)";
  }
  return best;
}

}  // namespace nestfast::search
