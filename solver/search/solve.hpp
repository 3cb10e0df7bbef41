#pragma once
// The search as independent work items, so MPI ranks, OpenMP threads and GPU
// batches can share it:
//
//   instances = enumerate_instances(problem, space);        // deterministic order
//   results[i] = solve_instance(problem, instances[i]);     // pure, thread-safe
//   best = reduce(results, top_k);                          // any partition, same answer
//   best.baselines = run_baselines(problem, space, options, best.stats);
//
// or all of it at once with solve(problem, space, options) (OpenMP across
// instances). Every struct here is plain data with public members (io/
// serialises them non-intrusively).
//
// One instance fixes every option except the stage boundaries and the
// per-stage recompute mode: tp, cp, ep, sp, pp, dp, micro-batch, ZeRO stage,
// schedule (vpp) and placement order. For vpp = 1 the level-wise DP
// (level_dp_kernel.hpp) picks the boundaries; interleaved schedules use
// Megatron-LM's uniform chunks and only pick the recompute modes.
//
// Tie-break (the documented total order): a lower iteration time wins; equal
// times go to the lower instance ordinal (enumerate_instances' order).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"
#include "solver/search/dp_batch.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/strategy_space.hpp"

namespace nestfast::search {

// One sweep point: what to plan for.
// The largest problem the search takes; every product of degrees and counts
// then stays far inside an int (2^29 GPUs wrapped to 0 and divided by it).
inline constexpr int kMaxGpus = 1 << 24;
inline constexpr int kMaxGlobalBatch = 1 << 24;
inline constexpr int kMaxSeqLen = 1 << 24;

struct SolveProblem {
  ModelSpec model;
  ClusterSpec cluster;
  int gpus = 0;
  int global_batch = 0;  // sequences per iteration
  int seq_len = 0;       // 0 = the model's default
  Optimizer optimizer = Optimizer::Adam;
  // The all-to-all asked for (plan_all_to_all): Fast for Nest's own plans
  // runs as Megatron's alltoall dispatcher in Megatron-Core plans.
  AllToAllAlgorithm a2a = AllToAllAlgorithm::Fast;
  double expert_imbalance = 1.0;
  // What the plans must run on (execution.hpp). Under MegatronCore the space
  // is what Megatron-LM runs as emitted (megatron_rules.hpp); Nest's space
  // holds all of MegatronCore's as well (enumerate_instances).
  Framework framework = Framework::Nest;
  // The attention every plan runs (Megatron-Core + TransformerEngine: fused).
  // Under MegatronCore a plan with cp > 1 is priced fused whatever this says:
  // context parallelism runs only in TransformerEngine's fused attention
  // (plan_attention).
  Attention attention = Attention::Flash;
  Overlap overlap;  // the overlaps every plan is priced with (as far as effective_overlap lets it run them)
  GradReduce grad_reduce = GradReduce::Fp32;  // the gradients' dtype every plan keeps and reduces
};

// The attention a plan with context-parallel degree `cp` runs when `asked`
// is wanted: under MegatronCore cp > 1 runs only fused (CpNeedsFusedAttention).
Attention plan_attention(Framework framework, Attention asked, int cp);

// The all-to-all a plan of `framework` runs when `asked` is wanted:
// Megatron-Core has no FAST dispatcher, so FAST asked of a MegatronCore plan
// is its alltoall dispatcher, NCCL's all-to-all (Fanout; MoeDispatcher);
// Fanout and DeepEp run as asked.
AllToAllAlgorithm plan_all_to_all(Framework framework, AllToAllAlgorithm asked);

// The user's all-to-all choice `text` (--a2a, job key search.a2a) for plans of
// `framework`: auto = plan_all_to_all of Fast (each framework's own); fast
// under MegatronCore is refused (Megatron-LM has no FAST dispatcher); fanout
// and deepep as named. Throws std::invalid_argument starting with `what`.
AllToAllAlgorithm resolve_all_to_all(const std::string& text, Framework framework, const std::string& what);

struct DpInstance {
  std::uint64_t ordinal = 0;  // position in enumerate_instances' order; the tie-break
  int problem = 0;            // which sweep point (index chosen by the caller; 0 for one solve)
  int tp = 1;
  int cp = 1;
  int ep = 1;
  // Execution::expert_tp: 0 = tp, 1 = whole experts (MegatronCore, ep > 1 and
  // tp > 1 only: Megatron's expert grid, parallel_state.py:871-900).
  int expert_tp = 0;
  int pp = 1;
  int dp = 1;
  int sp = 0;  // 0/1
  int micro_batch = 1;
  int zero_stage = 0;
  int vpp = 1;
  std::array<ParallelDim, kParallelDims> placement{ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep,
                                                   ParallelDim::Dp, ParallelDim::Pp};
  unsigned recompute_mask = 0b111;  // bit r: Recompute mode r may be used by a stage
  RecomputeModules recompute_modules = kDefaultRecomputeModules;  // what a Selective stage checkpoints
  int recompute_layers = 0;         // Full: 0 = every block, N > 0 = block recompute of N per stage
  int uneven_layers = 1;            // 0: near-equal blocks per stage only
  // The framework the instance's plans run on: the problem's, or under Nest
  // also MegatronCore for the plans Nest's own layouts lack (Megatron's
  // expert grid, fused attention at cp > 1 when unfused is asked).
  Framework framework = Framework::Nest;
};

struct SearchStats {
  std::uint64_t instances = 0;
  std::uint64_t feasible_instances = 0;
  std::uint64_t dp_runs = 0;          // kernel runs (one per Pareto step)
  std::uint64_t states = 0;
  std::uint64_t transitions = 0;      // stage candidates priced
  std::uint64_t pruned_memory = 0;
  std::uint64_t pruned_params = 0;
  std::uint64_t pruned_bound = 0;
  std::uint64_t plans_evaluated = 0;  // whole plans priced (one per Pareto step)
  std::uint64_t pruned_instances = 0; // skipped by solve(): beyond the bound, or surely out of memory
  double wall_s = 0;                  // set by solve() (not by reduce)
};

struct InstanceResult {
  std::uint64_t ordinal = 0;
  int problem = 0;
  bool feasible = false;
  double iteration_time_s = 0;  // evaluate_plan of `plan`; valid when feasible
  Execution plan;               // the instance's best plan (empty stages when infeasible)
  // When infeasible: the least per-device memory any plan of this instance
  // needs (bytes; 0 if not memory-bound) and a one-line reason.
  double min_memory_bytes = 0;
  std::string infeasible_reason;
  bool pruned_by_bound = false;  // solve_prepared only: the optimum exceeds the bound it was given
  SearchStats stats;
};

struct BaselineResult {
  std::string name;  // "manual", "phaze", "mcmc", "exhaustive"
  bool feasible = false;
  double iteration_time_s = 0;  // evaluate_plan on the real cluster
  Execution plan;
  std::uint64_t plans_evaluated = 0;
  std::string note;  // how it was obtained / why it is missing
};

struct SolveResult {
  bool feasible = false;
  std::vector<InstanceResult> top;  // best first, at most top_k, one per instance
  std::string infeasible_reason;    // the tightest constraint when !feasible
  double tightest_memory_bytes = 0; // min_memory_bytes of that instance (for merge)
  std::uint64_t tightest_ordinal = 0;
  SearchStats stats;
  std::vector<BaselineResult> baselines;  // filled by solve() / run_baselines
};

struct SolveOptions {
  int top_k = 5;
  int threads = 0;        // 0 = OpenMP's default
  bool baselines = true;
  std::uint64_t mcmc_seed = 1;
  int exhaustive_max_plans = 200000;  // run the exhaustive baseline only below this many plans
  // Empty: OpenMP threads run each instance's DP on the CPU. Set (a GPU
  // batch, gpu/batched_dp.hpp): instances go in waves of growing size, each
  // wave's DP runs to the runner together. The plans are the same either way.
  DpBatchRunner dp_batch_runner;
};

// Every valid instance, in a deterministic order (ordinal = index). Throws
// std::invalid_argument naming the constraint when the space is empty.
std::vector<DpInstance> enumerate_instances(const SolveProblem& problem, const StrategySpace& space);

// What is wrong with the GPU count for a command ("" when nothing): out of
// [1, kMaxGpus] or not whole nodes of the cluster. solve throws it as
// "--gpus: ..."; the catalog names the job file's line instead
// (enumerate_instances checks only the range: tests search partial nodes).
std::string gpus_error(const SolveProblem& problem);

// The instance's optimal plan (exact over boundaries and recompute modes).
InstanceResult solve_instance(const SolveProblem& problem, const DpInstance& instance);

// Deterministic: the result depends only on the multiset of inputs.
SolveResult reduce(const std::vector<InstanceResult>& results, int top_k);
SolveResult merge(const SolveResult& a, const SolveResult& b, int top_k);

std::vector<BaselineResult> run_baselines(const SolveProblem& problem, const StrategySpace& space,
                                          const SolveOptions& options, const SearchStats& dp_stats);

// enumerate + solve_instance over OpenMP threads + reduce + baselines.
// Instances run best lower bound first, in waves of growing size; the k-th
// best time found before a wave bounds it (branch and bound): an instance
// that cannot enter the top-k is skipped or cut short. The best plan and the
// top-k are exactly those of the unbounded search, and the statistics (what
// was priced and pruned) depend only on the problem, the space and top_k:
// not on the thread count, the schedule or the DP device.
SolveResult solve(const SolveProblem& problem, const StrategySpace& space, const SolveOptions& options);

// The instance's options as an Execution with no stages yet.
Execution execution_skeleton(const SolveProblem& problem, const DpInstance& instance);

}  // namespace nestfast::search
