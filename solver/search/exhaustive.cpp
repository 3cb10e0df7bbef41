// The brute-force reference: every plan of every instance, priced by
// evaluate_plan. Only for small models (tests, and `solve` when it is cheap).
#include <algorithm>
#include <vector>

#include "solver/search/baselines.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/plan_cost.hpp"

namespace nestfast::search {
namespace {

std::vector<Recompute> allowed_modes(unsigned mask) {
  std::vector<Recompute> modes;
  for (Recompute mode : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    if (mask & (1u << static_cast<unsigned>(mode))) modes.push_back(mode);
  }
  return modes;
}

// Plan counts saturate at kCountCap (the caller only compares with a limit).
constexpr std::uint64_t kCountCap = std::uint64_t{1} << 62;

std::uint64_t saturating_multiply(std::uint64_t a, std::uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kCountCap / b ? kCountCap : a * b;
}

std::uint64_t binomial(int n, int k) {
  if (k < 0 || k > n) return 0;
  std::uint64_t value = 1;
  for (int i = 1; i <= k; ++i) {
    // value * (n - k + i) / i stays exact: value is C(n - k + i - 1, i - 1).
    const std::uint64_t grown = saturating_multiply(value, static_cast<std::uint64_t>(n - k + i));
    if (grown == kCountCap) return kCountCap;
    value = grown / static_cast<std::uint64_t>(i);
  }
  return value;
}

std::uint64_t power(std::uint64_t base, int exponent) {
  std::uint64_t value = 1;
  for (int i = 0; i < exponent; ++i) value = saturating_multiply(value, base);
  return value;
}

class Enumerator {
 public:
  Enumerator(const SolveProblem& problem, BaselineResult& best) : problem_(problem), best_(best) {}

  void run(const DpInstance& instance) {
    execution_ = execution_skeleton(problem_, instance);
    const ExecutionLayout layout = compute_layout(problem_.cluster, execution_);
    modes_ = allowed_modes(instance.recompute_mask);
    full_layers_ = instance.recompute_layers;
    layout_ = &layout;
    if (instance.vpp == 1 && instance.uneven_layers) {
      execution_.stages.assign(static_cast<std::size_t>(instance.pp), StagePlan{});
      cut(0, 0);
    } else {
      execution_.stages = uniform_stages(problem_.model, layout, instance.pp, instance.vpp, Recompute::None);
      pick_rank_modes(0);
    }
    layout_ = nullptr;
  }

 private:
  // Stage `stage` starts at layer `first`.
  void cut(int stage, int first) {
    const int chain = problem_.model.num_layers + 2;
    const int stages = execution_.pp;
    const int last_end = chain - (stages - 1 - stage);
    for (int end = (stage == stages - 1) ? chain : first + 1; end <= last_end; ++end) {
      execution_.stages[static_cast<std::size_t>(stage)].first_layer = first;
      execution_.stages[static_cast<std::size_t>(stage)].last_layer = end - 1;
      if (stage + 1 < stages) {
        cut(stage + 1, end);
      } else {
        derive_stage_layout(*layout_, execution_);
        pick_stage_modes(0);
      }
    }
  }

  void pick_stage_modes(std::size_t stage) {
    if (stage == execution_.stages.size()) return price();
    for (Recompute mode : modes_) {
      execution_.stages[stage].recompute = mode;
      execution_.stages[stage].recompute_layers = mode == Recompute::Full ? full_layers_ : 0;
      pick_stage_modes(stage + 1);
    }
  }

  void pick_rank_modes(int rank) {
    if (rank == execution_.pp) return price();
    for (Recompute mode : modes_) {
      for (std::size_t i = static_cast<std::size_t>(rank); i < execution_.stages.size();
           i += static_cast<std::size_t>(execution_.pp)) {
        execution_.stages[i].recompute = mode;
        execution_.stages[i].recompute_layers = mode == Recompute::Full ? full_layers_ : 0;
      }
      pick_rank_modes(rank + 1);
    }
  }

  void price() {
    const PlanCost cost = evaluate_plan(problem_.model, problem_.cluster, execution_);
    ++best_.plans_evaluated;
    if (cost.feasible && (!best_.feasible || cost.iteration_time_s < best_.iteration_time_s)) {
      best_.feasible = true;
      best_.iteration_time_s = cost.iteration_time_s;
      best_.plan = execution_;
    }
  }

  const SolveProblem& problem_;
  BaselineResult& best_;
  Execution execution_;
  std::vector<Recompute> modes_;
  int full_layers_ = 0;  // the instance's block recompute (StagePlan::recompute_layers)
  const ExecutionLayout* layout_ = nullptr;
};

}  // namespace

std::uint64_t exhaustive_plan_count(const SolveProblem& problem, const std::vector<DpInstance>& instances) {
  const int chain = problem.model.num_layers + 2;
  std::uint64_t total = 0;
  for (const DpInstance& instance : instances) {
    const auto modes = static_cast<std::uint64_t>(allowed_modes(instance.recompute_mask).size());
    const std::uint64_t per_mode = power(modes, instance.pp);
    total += (instance.vpp == 1 && instance.uneven_layers) ? saturating_multiply(binomial(chain - 1, instance.pp - 1), per_mode)
                                                           : per_mode;
    total = std::min(total, kCountCap);
  }
  return total;
}

BaselineResult exhaustive_baseline(const SolveProblem& problem, const std::vector<DpInstance>& instances) {
  BaselineResult best;
  best.name = "exhaustive";
  Enumerator enumerator(problem, best);
  for (const DpInstance& instance : instances) enumerator.run(instance);
  best.note = "every stage split and recompute choice of every instance, priced by evaluate_plan";
  if (!best.feasible) best.note = "no plan of any instance fits";
  return best;
}

}  // namespace nestfast::search
