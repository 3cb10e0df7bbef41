#include <algorithm>
#include <stdexcept>

#include "solver/search/baselines.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/plan_cost.hpp"

namespace nestfast::search {

BaselineResult manual_baseline(const SolveProblem& problem) {
  BaselineResult result;
  result.name = "manual";
  const ModelSpec& model = problem.model;
  const int node = problem.cluster.levels.empty() ? 1 : std::max(problem.cluster.levels[0].group_size, 1);
  const int kv_heads = model.kv_heads > 0 ? model.kv_heads : model.heads;
  const int seq = problem.seq_len > 0 ? problem.seq_len : model.seq_len;
  int tp = 1;
  for (int t = 1; t <= std::min(node, problem.gpus); ++t) {
    if (model.heads % t == 0 && kv_heads % t == 0 && problem.gpus % t == 0 && node % t == 0) tp = t;
  }
  const int chain = model.num_layers + 2;
  for (int pp = 1; pp <= chain && tp * pp <= problem.gpus; ++pp) {
    if (problem.gpus % (tp * pp) != 0) continue;
    const int dp = problem.gpus / (tp * pp);
    if (problem.global_batch % dp != 0) continue;
    for (Recompute mode : {Recompute::None, Recompute::Selective, Recompute::Full}) {
      DpInstance instance;
      instance.tp = tp;
      instance.pp = pp;
      instance.dp = dp;
      // Megatron-LM's sequence parallelism splits the sequence over tp: only where tp divides it.
      instance.sp = tp > 1 && seq % tp == 0 ? 1 : 0;
      instance.micro_batch = 1;
      instance.zero_stage = dp > 1 ? 1 : 0;
      instance.framework = problem.framework;
      Execution execution = execution_skeleton(problem, instance);
      PlanCost cost;
      try {
        execution.stages = uniform_stages(model, compute_layout(problem.cluster, execution), pp, 1, mode);
        cost = evaluate_plan(model, problem.cluster, execution);
      } catch (const std::invalid_argument&) {
        continue;  // the framework (or the model) cannot run this pp
      }
      ++result.plans_evaluated;
      if (cost.feasible) {
        result.feasible = true;
        result.iteration_time_s = cost.iteration_time_s;
        result.plan = execution;
        result.note = "Megatron-style: tp = GPUs per node, smallest uniform pp that fits, recompute " +
                      std::string(to_string(mode));
        return result;
      }
    }
  }
  result.note = "no uniform Megatron-style plan fits in HBM";
  return result;
}

}  // namespace nestfast::search
