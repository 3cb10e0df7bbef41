// The batched DP on the real cost model: the host emulation of the kernel
// (what CI runs) and, with a device, the kernel itself must give exactly
// what the CPU DP gives, on >= 1000 random instances of random small models
// and 3-level clusters with tight memory (pruning, recompute, Pareto walks),
// with and without a time bound; and solve() through a DP batch runner
// (waves) must return the CPU search's plans on a real preset.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "gpu/batched_dp.hpp"
#include "gpu/device.hpp"
#include "io/presets/presets.hpp"
#include "solver/search/search_context.hpp"
#include "tests/unit/search/random_problem.hpp"

namespace nestfast::gpu {
namespace {

using search::InstanceResult;

void expect_same(const InstanceResult& got, const InstanceResult& want, const std::string& where) {
  ASSERT_EQ(got.feasible, want.feasible) << where;
  ASSERT_EQ(got.pruned_by_bound, want.pruned_by_bound) << where;
  ASSERT_EQ(got.iteration_time_s, want.iteration_time_s) << where;  // bit-identical, not close
  ASSERT_EQ(got.min_memory_bytes, want.min_memory_bytes) << where;
  ASSERT_EQ(got.infeasible_reason, want.infeasible_reason) << where;
  ASSERT_EQ(got.plan.stages.size(), want.plan.stages.size()) << where;
  for (std::size_t s = 0; s < got.plan.stages.size(); ++s) {
    ASSERT_EQ(got.plan.stages[s].first_layer, want.plan.stages[s].first_layer) << where << " stage " << s;
    ASSERT_EQ(got.plan.stages[s].last_layer, want.plan.stages[s].last_layer) << where << " stage " << s;
    ASSERT_EQ(got.plan.stages[s].recompute, want.plan.stages[s].recompute) << where << " stage " << s;
  }
  ASSERT_EQ(got.stats.dp_runs, want.stats.dp_runs) << where;
  ASSERT_EQ(got.stats.states, want.stats.states) << where;
  ASSERT_EQ(got.stats.transitions, want.stats.transitions) << where;
  ASSERT_EQ(got.stats.pruned_memory, want.stats.pruned_memory) << where;
  ASSERT_EQ(got.stats.pruned_params, want.stats.pruned_params) << where;
  ASSERT_EQ(got.stats.pruned_bound, want.stats.pruned_bound) << where;
  ASSERT_EQ(got.stats.plans_evaluated, want.stats.plans_evaluated) << where;
}

struct Tally {
  int dp_instances = 0;  // solved through the level-wise DP (not the uniform path)
  int feasible = 0;
  int infeasible = 0;
  int pareto_walks = 0;  // more than two DP runs (a front of two or more plans)
  int bounded = 0;       // cut by the time bound
  int block_recompute = 0;  // DP instances with block recompute of N layers per stage (megatron-core)
};

// Every instance of `cases` seeds: item by item on the CPU, then all of a
// case in one solve_prepared_batch through `runner`.
Tally compare_on_random_cases(int first_seed, int cases, const search::DpBatchRunner& runner, bool with_bound,
                              Framework framework = Framework::Nest) {
  Tally tally;
  for (int seed = first_seed; seed < first_seed + cases; ++seed) {
    search::testing::RandomCase c = search::testing::random_case(static_cast<std::uint64_t>(seed));
    search::testing::tighten_memory(c, static_cast<std::uint64_t>(seed));
    c.problem.framework = framework;
    if (seed % 5 == 0) c.space.vpp = {1, 2};
    std::vector<search::DpInstance> instances;
    try {
      instances = enumerate_instances(c.problem, c.space);
    } catch (const std::invalid_argument&) {
      if (framework == Framework::Nest) throw;
      continue;  // no plan of this random model runs under Megatron-Core
    }
    search::SearchContext context(c.problem, instances);
    std::vector<search::PreparedInstance> prepared;
    std::vector<search::PreparedItem> items;
    for (std::size_t i = 0; i < instances.size(); ++i) prepared.push_back(context.prepare(i));
    for (std::size_t i = 0; i < instances.size(); ++i) {
      items.push_back({&c.problem, &instances[i], prepared[i].layout.get(), prepared[i].table.get()});
    }
    std::vector<InstanceResult> cpu;
    for (const search::PreparedItem& item : items) {
      cpu.push_back(search::solve_prepared(*item.problem, *item.spec, *item.layout, *item.table, search::kDpInfinity, true));
    }
    double bound = search::kDpInfinity;
    if (with_bound) {
      // The median feasible time: about half the instances are cut by it.
      std::vector<double> times;
      for (const InstanceResult& r : cpu) {
        if (r.feasible) times.push_back(r.iteration_time_s);
      }
      if (times.empty()) continue;
      std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
      bound = times[times.size() / 2];
      cpu.clear();
      for (const search::PreparedItem& item : items) {
        cpu.push_back(search::solve_prepared(*item.problem, *item.spec, *item.layout, *item.table, bound, true));
      }
    }
    const std::vector<InstanceResult> batch = search::solve_prepared_batch(items, bound, true, runner);
    EXPECT_EQ(batch.size(), cpu.size());
    for (std::size_t i = 0; i < cpu.size() && i < batch.size(); ++i) {
      expect_same(batch[i], cpu[i], "seed " + std::to_string(seed) + " instance " + std::to_string(i));
      if (::testing::Test::HasFatalFailure()) return tally;
      if (instances[i].vpp != 1 || !instances[i].uneven_layers) continue;
      ++tally.dp_instances;
      tally.block_recompute += instances[i].recompute_layers > 0 ? 1 : 0;
      tally.feasible += cpu[i].feasible ? 1 : 0;
      tally.infeasible += (!cpu[i].feasible && !cpu[i].pruned_by_bound) ? 1 : 0;
      tally.pareto_walks += cpu[i].stats.dp_runs > 2 ? 1 : 0;
      tally.bounded += cpu[i].pruned_by_bound ? 1 : 0;
    }
  }
  return tally;
}

TEST(GpuBatchedDp, HostEmulationEqualsTheCpuDpOnRandomInstances) {
  const Tally tally = compare_on_random_cases(1, 120, run_dp_batch_emulated, false);
  ASSERT_FALSE(HasFatalFailure());
  std::printf("%d DP instances: %d feasible, %d infeasible, %d Pareto walks of more than two runs\n",
              tally.dp_instances, tally.feasible, tally.infeasible, tally.pareto_walks);
  // The cases must exercise every outcome for the agreement to mean anything.
  EXPECT_GE(tally.dp_instances, 1000);
  EXPECT_GT(tally.feasible, 100);
  EXPECT_GT(tally.infeasible, 20);
  EXPECT_GT(tally.pareto_walks, 10);
}

TEST(GpuBatchedDp, HostEmulationEqualsTheCpuDpInTheMegatronCoreSpace) {
  // One recompute setting per instance, block recompute of N layers per stage, Megatron's expert grid.
  const Tally tally = compare_on_random_cases(1, 60, run_dp_batch_emulated, false, Framework::MegatronCore);
  ASSERT_FALSE(HasFatalFailure());
  std::printf("megatron-core: %d DP instances (%d with block recompute): %d feasible, %d infeasible\n",
              tally.dp_instances, tally.block_recompute, tally.feasible, tally.infeasible);
  EXPECT_GT(tally.dp_instances, 300);
  EXPECT_GT(tally.block_recompute, 50);
  EXPECT_GT(tally.feasible, 50);
  EXPECT_GT(tally.infeasible, 10);
}

TEST(GpuBatchedDp, HostEmulationEqualsTheCpuDpUnderATimeBound) {
  const Tally tally = compare_on_random_cases(101, 20, run_dp_batch_emulated, true);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_GT(tally.bounded, 20);
  EXPECT_GT(tally.feasible, 20);
}

TEST(GpuBatchedDp, SolveThroughTheBatchReturnsTheCpuSearchsPlans) {
  search::SolveProblem problem;
  problem.model = io::load_model("llama3-70b");
  problem.cluster = io::load_cluster("h100-superpod");
  problem.gpus = 64;
  problem.global_batch = 256;
  search::StrategySpace space;
  space.micro_batch = {1, 2};
  space.zero_stage = {0, 1};
  search::SolveOptions options;
  options.baselines = false;
  options.top_k = 8;
  options.threads = 1;
  const search::SolveResult cpu = search::solve(problem, space, options);
  options.dp_batch_runner = run_dp_batch_emulated;
  const search::SolveResult batched = search::solve(problem, space, options);
  ASSERT_TRUE(cpu.feasible);
  ASSERT_EQ(batched.top.size(), cpu.top.size());
  for (std::size_t k = 0; k < cpu.top.size(); ++k) {
    // Statistics differ (the waves prune differently); the plans may not.
    InstanceResult got = batched.top[k];
    InstanceResult want = cpu.top[k];
    EXPECT_EQ(got.ordinal, want.ordinal) << "rank " << k;
    got.stats = want.stats = {};
    expect_same(got, want, "top " + std::to_string(k));
  }
}

TEST(GpuBatchedDp, DeviceKernelEqualsTheCpuDpOnRandomInstances) {
  if (device_count() == 0) GTEST_SKIP() << "no GPU device present (backend: " << backend_name() << ")";
  const Tally tally = compare_on_random_cases(1, 120, run_dp_batch_on_device, false);
  const Tally megatron = compare_on_random_cases(1, 60, run_dp_batch_on_device, false, Framework::MegatronCore);
  EXPECT_GT(megatron.block_recompute, 50);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_GE(tally.dp_instances, 1000);
  const Tally bounded = compare_on_random_cases(101, 20, run_dp_batch_on_device, true);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_GT(bounded.bounded, 20);
}

TEST(GpuBatchedDp, DeviceBatchWithoutABackEndSaysSo) {
  if (backend_name() != "none") GTEST_SKIP() << "this build has the " << backend_name() << " back-end";
  search::testing::RandomCase c = search::testing::random_case(3);
  const std::vector<search::DpInstance> instances = enumerate_instances(c.problem, c.space);
  search::SearchContext context(c.problem, instances);
  const search::PreparedInstance prepared = context.prepare(0);
  const search::PreparedItem item{&c.problem, &instances[0], prepared.layout.get(), prepared.table.get()};
  EXPECT_THROW((void)search::solve_prepared_batch(std::span(&item, 1), search::kDpInfinity, true,
                                                  run_dp_batch_on_device),
               std::runtime_error);
}

}  // namespace
}  // namespace nestfast::gpu
