// Every plan `solve --framework megatron-core` returns over a sweep of real
// models and clusters is launchable as emitted and runs as priced:
//  - its argument line passes the test-only validator (flags of the upstream
//    table, every rule of megatron_rules.hpp on the parsed numbers, rank
//    groups built as parallel_state.py builds them);
//  - the groups the price used (tp, cp, dp+cp, ep, expert-dp) have the shapes
//    of Megatron's own rank groups on the cluster, device by device;
//  - the line read back into a plan prices to the same time and memory.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "io/presets/presets.hpp"
#include "solver/search/baselines.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/megatron_args.hpp"
#include "solver/search/megatron_rules.hpp"
#include "solver/search/plan_cost.hpp"
#include "solver/search/solve.hpp"
#include "tests/unit/megatron/megatron_line.hpp"

namespace nestfast::megatron_test {
namespace {

struct Counts {
  int best = 0;
  int alternatives = 0;
  int manual = 0;
  int failed = 0;
  int deepep = 0;  // plans whose experts dispatch through DeepEP (ep > 1, flex on the line)
};

void check_plan(const search::SolveProblem& problem, const Execution& plan, const std::string& what, bool& ok) {
  const search::MegatronArguments emitted = search::megatron_arguments(problem.model, plan);
  MegatronGroups groups;
  const std::vector<std::string> problems = validate_line(problem.model, problem.gpus, emitted, &groups);
  for (const std::string& p : problems) ADD_FAILURE() << what << ": " << p << "\n  line: " << emitted.arguments;
  ok = ok && problems.empty();
  EXPECT_TRUE(search::megatron_violations(problem.model, plan).empty()) << what;
  EXPECT_TRUE(emitted.notes.empty()) << what;

  // The priced groups are Megatron's.
  const ExecutionLayout layout = compute_layout(problem.cluster, plan);
  auto same = [&](const GroupShape& priced, const RankGroups& megatron, const char* name) {
    const GroupShape real = shape_of(problem.cluster, megatron);
    EXPECT_EQ(priced.fanout, real.fanout) << what << ": " << name << " group";
    ok = ok && priced.fanout == real.fanout;
  };
  if (problems.empty()) {
    same(layout.tp_group, groups.tp, "tp");
    same(layout.cp_group, groups.cp, "cp");
    same(layout.dense_dp_group, groups.dp_cp, "dp+cp");
    same(layout.ep_group, groups.ep, "ep");
    same(layout.expert_dp_group, groups.expert_dp, "expert-dp");
  }

  // Round trip: what Megatron runs from the line prices the same.
  Execution back = plan_of_line(problem.model, problem.gpus, parse_line(emitted.arguments));
  back.expert_imbalance = plan.expert_imbalance;
  derive_stage_layout(compute_layout(problem.cluster, back), back);
  const PlanCost priced = evaluate_plan(problem.model, problem.cluster, plan);
  const PlanCost again = evaluate_plan(problem.model, problem.cluster, back);
  EXPECT_EQ(priced.iteration_time_s, again.iteration_time_s) << what << "\n  line: " << emitted.arguments;
  EXPECT_EQ(priced.memory_peak_bytes, again.memory_peak_bytes) << what;
  ok = ok && priced.iteration_time_s == again.iteration_time_s && priced.memory_peak_bytes == again.memory_peak_bytes;
}

// Over models x clusters x GPU counts, with the MoE all-to-all asked as
// `a2a` (Fast: each framework's own, the alltoall dispatcher here).
Counts sweep(const std::vector<std::string>& models, const std::vector<std::string>& clusters,
             const std::vector<int>& gpu_counts, AllToAllAlgorithm a2a) {
  Counts counts;
  int points = 0;
  for (const std::string& model_name : models) {
    for (const std::string& cluster_name : clusters) {
      for (int gpus : gpu_counts) {
        search::SolveProblem problem;
        problem.model = io::load_model(model_name);
        problem.cluster = io::load_cluster(cluster_name);
        problem.gpus = gpus;
        problem.global_batch = std::max(gpus, 512);
        problem.framework = Framework::MegatronCore;
        problem.a2a = a2a;
        search::SolveOptions options;
        options.top_k = 5;
        options.baselines = false;
        const search::SolveResult result = search::solve(problem, search::StrategySpace{}, options);
        const std::string point = model_name + " on " + cluster_name + " at " + std::to_string(gpus) + " GPUs";
        ++points;
        if (!result.feasible) {
          std::printf("%s: no feasible plan (%s)\n", point.c_str(), result.infeasible_reason.c_str());
          continue;
        }
        for (std::size_t k = 0; k < result.top.size(); ++k) {
          bool ok = true;
          const Execution& plan = result.top[k].plan;
          check_plan(problem, plan, point + " #" + std::to_string(k + 1), ok);
          const std::string line = search::megatron_arguments(problem.model, plan).arguments;
          if (plan.ep > 1 && plan.a2a == AllToAllAlgorithm::DeepEp &&
              line.find("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep") != std::string::npos)
            ++counts.deepep;
          (k == 0 ? counts.best : counts.alternatives) += 1;
          if (!ok) ++counts.failed;
        }
        const search::BaselineResult manual = search::manual_baseline(problem);
        if (manual.feasible) {
          bool ok = true;
          check_plan(problem, manual.plan, point + " manual", ok);
          ++counts.manual;
          if (!ok) ++counts.failed;
        }
      }
    }
  }
  std::printf("%d sweep points (a2a %s): %d best plans, %d alternatives, %d manual baselines checked; %d not "
              "launchable as emitted\n",
              points, to_string(a2a), counts.best, counts.alternatives, counts.manual, counts.failed);
  return counts;
}

TEST(MegatronSweep, EveryPlanIsLaunchableAsEmittedAndPricesTheSameFromItsLine) {
  const Counts counts = sweep({"llama3-70b", "mixtral-8x7b", "gpt3-175b", "llama2-7b", "deepseek-v3"},
                              {"h100-superpod", "h200-superpod", "mi300x-roce"}, {64, 512, 4096}, AllToAllAlgorithm::Fast);
  EXPECT_GT(counts.best, 20);
  EXPECT_EQ(counts.failed, 0);
}

// With DeepEP asked, every MoE plan dispatches through the flex dispatcher:
// its line carries it, passes DeepEP's group sizes, and prices the same back.
TEST(MegatronSweep, DeepEpPlansAreLaunchableAsEmitted) {
  const Counts counts = sweep({"mixtral-8x7b", "deepseek-v3"}, {"h100-superpod"}, {256, 1024}, AllToAllAlgorithm::DeepEp);
  EXPECT_EQ(counts.best, 4);
  EXPECT_EQ(counts.deepep, counts.best + counts.alternatives);  // every plan found runs DeepEP
  EXPECT_EQ(counts.failed, 0);
}

// The NEST space holds Megatron-Core's (enumerate_instances): on real MoE
// presets its best is never slower, and the Megatron-Core plans it returns
// (Megatron's expert grid) are launchable as emitted like any other.
TEST(MegatronSweep, TheNestSpaceHoldsMegatronCoresPlans) {
  int compared = 0, megatron_plans = 0;
  // (deepseek-v3 fits from 256 H100s; smaller points take a long diagnosis.)
  const std::vector<std::pair<std::string, int>> points = {{"mixtral-8x7b", 64}, {"mixtral-8x7b", 256},
                                                           {"deepseek-v3", 256}};
  for (const auto& [model_name, gpus] : points) {
    {
      search::SolveProblem problem;
      problem.model = io::load_model(model_name);
      problem.cluster = io::load_cluster("h100-superpod");
      problem.gpus = gpus;
      problem.global_batch = std::max(gpus, 512);
      search::SolveOptions options;
      options.top_k = 5;
      options.baselines = false;
      problem.framework = Framework::MegatronCore;
      const search::SolveResult megatron = search::solve(problem, search::StrategySpace{}, options);
      problem.framework = Framework::Nest;
      const search::SolveResult nest = search::solve(problem, search::StrategySpace{}, options);
      const std::string point = model_name + " at " + std::to_string(gpus) + " GPUs, nest";
      if (!megatron.feasible) continue;
      ASSERT_TRUE(nest.feasible) << point;
      ++compared;
      EXPECT_LE(nest.top.front().iteration_time_s, megatron.top.front().iteration_time_s) << point;
      for (std::size_t k = 0; k < nest.top.size(); ++k) {
        if (nest.top[k].plan.framework != Framework::MegatronCore) continue;
        ++megatron_plans;
        bool ok = true;
        check_plan(problem, nest.top[k].plan, point + " #" + std::to_string(k + 1), ok);
      }
    }
  }
  std::printf("the NEST space at %d MoE points: %d megatron-core plans among its top 5, each checked\n", compared,
              megatron_plans);
  EXPECT_GE(compared, 3);
  EXPECT_GT(megatron_plans, 0);
}

}  // namespace
}  // namespace nestfast::megatron_test
