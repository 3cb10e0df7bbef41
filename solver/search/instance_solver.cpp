// solve_instance: the exact optimum of one instance.
//
// The objective (plan_cost.hpp) is
//   T = pipeline_time(m, pp, vpp, max_r t_r) + max_r S_r,
// two maxima over the ranks: t_r (per-micro-batch stage time) and S_r (DP
// sync + optimizer step of the rank's parameters). A bottleneck DP alone
// would ignore the second, so we walk the Pareto front of (max t, max S):
// run the DP for the least bottleneck subject to S_r < cap, price the plan,
// set cap = its max S and repeat. Each run returns a plan with a strictly
// smaller max S, so the walk ends; it stops early once the pipeline part of
// the next bottleneck plus the least possible sync (sync_floor) reaches the
// best time found, and each run only looks below the bottleneck that could
// still beat it. Proof of exactness: let OPT have (t*, S*) and k be the
// last run whose cap exceeds S*. That run's bottleneck is <= t* (OPT is
// allowed) and its plan has S <= S* (else run k+1 would also have cap > S*),
// so its price <= OPT's, unless run k+1 stopped early, which means
// best <= pipeline(t*) + sync_floor <= OPT.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "solver/search/dp_batch.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/layer_table.hpp"
#include "solver/search/level_dp_kernel.hpp"
#include "solver/search/memory_model.hpp"
#include "solver/search/pipeline_time.hpp"
#include "solver/search/plan_pricer.hpp"
#include "solver/search/search_context.hpp"
#include "solver/search/solve.hpp"
#include "solver/search/stage_cost.hpp"
#include "solver/search/stage_oracle.hpp"

namespace nestfast::search {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string layer_name(int layer, int chain) {
  if (layer == 0) return "the embedding";
  if (layer == chain - 1) return "the head";
  return "block " + std::to_string(layer);
}

std::string describe(const DpInstance& instance) {
  char text[160];
  std::snprintf(text, sizeof text, "tp=%d cp=%d ep=%d pp=%d dp=%d mbs=%d zero=%d%s%s", instance.tp, instance.cp,
                instance.ep, instance.pp, instance.dp, instance.micro_batch, instance.zero_stage,
                instance.vpp > 1 ? (" vpp=" + std::to_string(instance.vpp)).c_str() : "",
                instance.recompute_layers > 0 ? (" recompute-layers=" + std::to_string(instance.recompute_layers)).c_str() : "");
  return text;
}

void add(SearchStats& stats, const LevelDpCounters& counters) {
  ++stats.dp_runs;
  stats.states += counters.states;
  stats.transitions += counters.transitions;
  stats.pruned_memory += counters.pruned_memory;
  stats.pruned_params += counters.pruned_params;
  stats.pruned_bound += counters.pruned_bound;
}

// The kernel's oracle for "least peak memory over partitions": a stage's
// cost is the memory of its most frugal allowed mode.
struct MemoryOracle {
  const StageOracle& stages;
  double time(int a, int b, int rank) const { return stages.min_memory(a, b, rank); }
  double params(int, int) const { return 0; }
  double floor(int, int) const { return 0; }
};

struct Instance {
  Instance(const SolveProblem& problem, const DpInstance& spec, const ExecutionLayout& layout_in,
           const LayerTable& table_in, double time_bound_in, bool explain_in)
      : execution(execution_skeleton(problem, spec)),
        layout(layout_in),
        table(table_in),
        replicas(replica_context(problem.cluster, execution, layout_in)),
        micro_batches(execution.micro_batches()),
        hbm(static_cast<double>(problem.cluster.gpu.hbm_bytes)),
        time_bound(time_bound_in),
        explain(explain_in) {}

  Execution execution;
  const ExecutionLayout& layout;
  const LayerTable& table;
  ReplicaContext replicas;
  int micro_batches = 0;
  double hbm = 0;
  double time_bound = kDpInfinity;  // plans slower than this are not wanted
  bool explain = true;              // diagnose an infeasible instance (least memory, reason)
};

void explain_infeasible(const DpInstance& spec, const StageOracle& oracle, int chain, double least_peak,
                        double hbm, InstanceResult& result) {
  result.min_memory_bytes = least_peak;
  // A single layer that does not fit even alone on the last rank (the
  // shallowest stash) is the most useful thing to name.
  int worst_layer = 0;
  double worst_bytes = 0;
  for (int layer = 0; layer < chain; ++layer) {
    const double bytes = oracle.min_memory(layer, layer + 1, spec.pp - 1);
    if (bytes > worst_bytes) {
      worst_bytes = bytes;
      worst_layer = layer;
    }
  }
  char text[320];
  if (worst_bytes > hbm) {
    std::snprintf(text, sizeof text, "%s alone needs %.1f GiB per device at %s; HBM is %.1f GiB",
                  layer_name(worst_layer, chain).c_str(), worst_bytes / kGiB, describe(spec).c_str(), hbm / kGiB);
  } else {
    std::snprintf(text, sizeof text, "the least memory any stage split needs is %.1f GiB per device at %s; HBM is %.1f GiB",
                  least_peak / kGiB, describe(spec).c_str(), hbm / kGiB);
  }
  result.infeasible_reason = text;
}

// The Pareto walk of one instance (see the top of this file), one DP run at
// a time, so that the runs of many instances can go to a runner together.
class ParetoWalk {
 public:
  ParetoWalk(const DpInstance& spec, Instance& instance, InstanceResult& result)
      : spec_(spec),
        instance_(instance),
        result_(result),
        oracle_(instance.table, instance.replicas, instance.layout, spec.pp, instance.micro_batches, instance.hbm,
                spec.recompute_mask, spec.recompute_layers),
        // No plan syncs less than this (see sync_floor).
        s_floor_(sync_floor(instance.replicas, instance.table, spec.pp)),
        bound_limit_(limit_for(instance.time_bound)) {}

  bool done() const { return done_; }

  DpRun next_run() const {
    DpRun run;
    run.oracle = oracle_.kernel();
    run.stages = spec_.pp;
    run.param_cap = cap_;
    run.bottleneck_limit = std::min(bound_limit_, limit_for(best_time_));
    return run;
  }

  void take(const DpRunResult& run) {
    add(result_.stats, run.counters);
    const int pp = spec_.pp;
    if (run.bottleneck >= kDpInfinity) {
      cut_by_bound_ = bound_limit_ < kDpInfinity;
      done_ = true;
      return;
    }
    if (pipeline_time(instance_.micro_batches, pp, 1, run.bottleneck).total_s() + s_floor_ >= best_time_) {
      done_ = true;
      return;
    }
    std::vector<StagePlan> stages;
    double t_max = 0;
    double s_max = 0;
    for (int rank = 0; rank < pp; ++rank) {
      const int a = run.boundaries[static_cast<std::size_t>(rank)];
      const int b = run.boundaries[static_cast<std::size_t>(rank) + 1];
      const StageChoice choice = oracle_.choose(a, b, rank);
      StagePlan stage;
      stage.first_layer = a;
      stage.last_layer = b - 1;
      stage.recompute = choice.recompute;
      stage.recompute_layers = choice.recompute == Recompute::Full ? spec_.recompute_layers : 0;
      stages.push_back(stage);
      t_max = std::max(t_max, choice.time_s);
      s_max = std::max(s_max, oracle_.params(a, b));
    }
    if (!(s_max < cap_)) {
      // Each step must lower the cap, or the walk would never end.
      throw std::logic_error("DP run returned a plan at or above its parameter cap");
    }
    ++result_.stats.plans_evaluated;
    const double time = pipeline_time(instance_.micro_batches, pp, 1, t_max).total_s() + s_max;
    if (time < best_time_) {
      best_time_ = time;
      best_stages_ = std::move(stages);
    }
    cap_ = s_max;
  }

  // Writes the walk's outcome into the result (the diagnosis of an
  // infeasible instance runs its own DP here, on the CPU).
  void finish() {
    const int chain = instance_.table.layers();
    if (best_stages_.empty() || best_time_ > instance_.time_bound) {
      if (cut_by_bound_ || best_time_ > instance_.time_bound) {
        // Possibly feasible, but not within the bound: no diagnosis needed.
        result_.pruned_by_bound = true;
        return;
      }
      if (!instance_.explain) return;
      const std::size_t cells = static_cast<std::size_t>(spec_.pp + 1) * static_cast<std::size_t>(chain + 1);
      std::vector<double> value(cells);
      std::vector<int> cut(cells);
      LevelDpCounters counters;
      const double least_peak = level_dp_run(MemoryOracle{oracle_}, chain, spec_.pp, kDpInfinity, kDpInfinity,
                                             value.data(), cut.data(), &counters);
      explain_infeasible(spec_, oracle_, chain, least_peak, instance_.hbm, result_);
      return;
    }
    result_.feasible = true;
    result_.iteration_time_s = best_time_;
    result_.plan = instance_.execution;
    result_.plan.stages = std::move(best_stages_);
    derive_stage_layout(instance_.layout, result_.plan);
  }

 private:
  // Later Pareto steps only look for plans faster than `time`: a stage at
  // least this slow makes the plan exceed it (1e-9 of slack so rounding
  // never cuts a plan within the bound).
  double limit_for(double time) const {
    return time >= kDpInfinity ? kDpInfinity
                               : (time * (1 + 1e-9) - s_floor_) / (instance_.micro_batches + spec_.pp - 1);
  }

  const DpInstance& spec_;
  Instance& instance_;
  InstanceResult& result_;
  StageOracle oracle_;
  double s_floor_ = 0;
  double bound_limit_ = kDpInfinity;
  double best_time_ = kDpInfinity;
  std::vector<StagePlan> best_stages_;
  double cap_ = kDpInfinity;
  bool cut_by_bound_ = false;
  bool done_ = false;
};

// Uniform stages (interleaved schedules, or --even-layers): only the
// recompute mode is chosen, one per pipeline rank (its chunks share it).
void solve_uniform(const SolveProblem& problem, const DpInstance& spec, Instance& instance, InstanceResult& result) {
  const int pp = spec.pp;
  const int vpp = spec.vpp;
  std::vector<StagePlan> stages = uniform_stages(problem.model, instance.layout, pp, vpp, Recompute::None);
  double t_max = 0;
  double s_max = 0;
  double warmup_p2p = 0;  // summed in rank order, as evaluate_plan does
  double least_peak = 0;
  bool feasible = true;
  for (int rank = 0; rank < pp; ++rank) {
    double best_t = kDpInfinity;
    double best_warmup_p2p = 0;
    Recompute best_mode = Recompute::None;
    double rank_least = kDpInfinity;
    for (Recompute mode : {Recompute::None, Recompute::Selective, Recompute::Full}) {
      if (!(spec.recompute_mask & (1u << static_cast<unsigned>(mode)))) continue;
      StageFootprint footprint;
      StageTime rank_time;
      std::vector<double> chunk_stash;
      for (std::size_t i = static_cast<std::size_t>(rank); i < stages.size(); i += static_cast<std::size_t>(pp)) {
        const int layers = mode == Recompute::Full ? spec.recompute_layers : 0;
        const StageFootprint chunk =
            stage_footprint(instance.table, stages[i].first_layer, stages[i].last_layer, mode, layers);
        footprint += chunk;
        chunk_stash.push_back(chunk.stash_bytes_per_microbatch);
        // Summed part by part with StageTime::operator+=, as evaluate_plan does, so total_s() rounds the same way.
        rank_time += stage_time(instance.table, instance.replicas, rank, stages[i].first_layer, stages[i].last_layer,
                                instance.layout.stage_boundary_level(static_cast<int>(i)), mode, layers);
      }
      const double t = rank_time.total_s();
      const double depth = interleaved_stash_depth(rank, pp, vpp, instance.micro_batches, chunk_stash);
      const double bytes = stage_memory(instance.replicas, footprint, depth).total_bytes();
      rank_least = std::min(rank_least, bytes);
      if (bytes <= instance.hbm && t < best_t) {
        best_t = t;
        best_mode = mode;
        best_warmup_p2p = rank_time.p2p_warmup_s;
      }
    }
    least_peak = std::max(least_peak, rank_least);
    if (best_t >= kDpInfinity) {
      feasible = false;
      continue;
    }
    StageFootprint params;
    for (std::size_t i = static_cast<std::size_t>(rank); i < stages.size(); i += static_cast<std::size_t>(pp)) {
      stages[i].recompute = best_mode;
      stages[i].recompute_layers = best_mode == Recompute::Full ? spec.recompute_layers : 0;
      params += stage_footprint(instance.table, stages[i].first_layer, stages[i].last_layer, Recompute::None);
    }
    t_max = std::max(t_max, best_t);
    s_max = std::max(s_max, sync_time(instance.replicas, params).total_s());
    warmup_p2p += best_warmup_p2p;
  }
  ++result.stats.plans_evaluated;
  const double time = pipeline_time(instance.micro_batches, pp, vpp, t_max, warmup_p2p).total_s() + s_max;
  if (feasible && time > instance.time_bound) {
    result.pruned_by_bound = true;
    return;
  }
  if (!feasible) {
    if (!instance.explain) return;
    const StageOracle oracle(instance.table, instance.replicas, instance.layout, pp, instance.micro_batches,
                             instance.hbm, spec.recompute_mask, spec.recompute_layers);
    explain_infeasible(spec, oracle, instance.table.layers(), least_peak, instance.hbm, result);
    return;
  }
  result.feasible = true;
  result.iteration_time_s = time;
  result.plan = instance.execution;
  result.plan.stages = std::move(stages);
  derive_stage_layout(instance.layout, result.plan);
}

}  // namespace

InstanceResult solve_instance(const SolveProblem& problem, const DpInstance& spec) {
  const PreparedInstance prepared = prepare_instance(problem, spec);
  return solve_prepared(problem, spec, *prepared.layout, *prepared.table, kDpInfinity, true);
}

InstanceResult solve_prepared(const SolveProblem& problem, const DpInstance& spec, const ExecutionLayout& layout,
                              const LayerTable& table, double time_bound, bool explain) {
  const PreparedItem item{&problem, &spec, &layout, &table};
  return std::move(solve_prepared_batch(std::span(&item, 1), time_bound, explain, run_dp_batch_on_cpu)[0]);
}

std::vector<InstanceResult> solve_prepared_batch(std::span<const PreparedItem> items, double time_bound, bool explain, const DpBatchRunner& runner) {
  std::vector<InstanceResult> results(items.size());
  // Instance and walk hold references into each other and into `results`:
  // fixed addresses, hence the unique_ptrs.
  std::vector<std::unique_ptr<Instance>> instances;
  std::vector<std::unique_ptr<ParetoWalk>> walks;
  for (std::size_t k = 0; k < items.size(); ++k) {
    const SolveProblem& problem = *items[k].problem;
    const DpInstance& spec = *items[k].spec;
    InstanceResult& result = results[k];
    result.ordinal = spec.ordinal;
    result.problem = spec.problem;
    result.stats.instances = 1;
    instances.push_back(std::make_unique<Instance>(problem, spec, *items[k].layout, *items[k].table, time_bound, explain));
    if (spec.vpp == 1 && spec.uneven_layers) {
      walks.push_back(std::make_unique<ParetoWalk>(spec, *instances.back(), result));
    } else {
      solve_uniform(problem, spec, *instances.back(), result);
    }
  }
  std::vector<DpRun> runs;
  std::vector<ParetoWalk*> waiting;
  for (;;) {
    runs.clear();
    waiting.clear();
    for (const std::unique_ptr<ParetoWalk>& walk : walks) {
      if (walk->done()) continue;
      runs.push_back(walk->next_run());
      waiting.push_back(walk.get());
    }
    if (runs.empty()) break;
    const std::vector<DpRunResult> outcomes = runner(runs);
    if (outcomes.size() != runs.size()) {
      throw std::logic_error("DP batch runner returned " + std::to_string(outcomes.size()) + " results for " +
                             std::to_string(runs.size()) + " runs");
    }
    for (std::size_t k = 0; k < runs.size(); ++k) waiting[k]->take(outcomes[k]);
  }
  for (const std::unique_ptr<ParetoWalk>& walk : walks) walk->finish();
  for (InstanceResult& result : results) result.stats.feasible_instances = result.feasible ? 1 : 0;
  return results;
}

}  // namespace nestfast::search
