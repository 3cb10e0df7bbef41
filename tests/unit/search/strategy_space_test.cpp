// The strategy space: placement orders as text, restrictions honoured, and
// every enumerated instance accepted by the cost model's own validation.
// (Command-line lists are CLI11's; e2e_solve checks the flags.)
#include <gtest/gtest.h>

#include <bit>
#include <optional>

#include <set>
#include <stdexcept>

#include "solver/search/execution_layout.hpp"
#include "solver/search/strategy_space.hpp"
#include "solver/search/megatron_rules.hpp"
#include "tests/unit/search/random_problem.hpp"

namespace nestfast::search {
namespace {

TEST(StrategySpace, PlacementOrdersAsText) {
  EXPECT_EQ(placement_to_string(parse_placement("tp,pp,dp", "--placement")), "tp,pp,dp,cp,ep");
  EXPECT_EQ(placement_to_string(parse_placement("dp,tp", "--placement")), "dp,tp,cp,ep,pp");
  const std::vector<ParallelDim> full = parse_placement("cp,pp,dp,tp,ep", "placement_order");
  EXPECT_EQ(parse_placement(placement_to_string(full), "placement_order"), full);
  for (const char* bad : {"tp,tp", "tp,,pp", "", "tp,xp", "tp,"}) {
    try {
      parse_placement(bad, "--placement");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& error) {
      EXPECT_EQ(std::string(error.what()).rfind("--placement: ", 0), 0U) << error.what();
    }
  }
}

TEST(StrategySpace, EveryInstanceIsValidAndRestrictionsHold) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    testing::RandomCase c = testing::random_case(seed);
    StrategySpace open;  // the full default space
    std::set<std::tuple<int, int, int, int, int, int, int, int, int>> seen_configs;
    std::size_t with_all_orders = 0;
    for (const DpInstance& instance : enumerate_instances(c.problem, open)) {
      ASSERT_NO_THROW(validate_degrees(c.problem.model, c.problem.cluster, execution_skeleton(c.problem, instance),
                                       c.problem.gpus));
      ASSERT_EQ(instance.tp * instance.cp * instance.pp * instance.dp, c.problem.gpus);
      seen_configs.insert({instance.tp, instance.cp, instance.ep, instance.pp, instance.dp, instance.sp,
                           instance.micro_batch, instance.zero_stage, instance.vpp});
      ++with_all_orders;
    }
    EXPECT_GT(with_all_orders, seen_configs.size()) << "placement orders are part of the space";

    StrategySpace narrow;
    narrow.tp = {2};
    narrow.zero_stage = {1};
    narrow.recompute = {Recompute::Full};
    narrow.placements = {{ParallelDim::Pp, ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Dp}};
    std::vector<DpInstance> restricted;
    try {
      restricted = enumerate_instances(c.problem, narrow);
    } catch (const std::invalid_argument&) {
      continue;  // tp = 2 may not divide this model's heads: the error path
    }
    for (const DpInstance& instance : restricted) {
      EXPECT_EQ(instance.tp, 2);
      // With dp*cp = 1 every ZeRO stage is the same plan, searched as stage 0.
      EXPECT_EQ(instance.zero_stage, instance.dp * instance.cp > 1 ? 1 : 0);
      EXPECT_EQ(instance.recompute_mask, 1u << static_cast<unsigned>(Recompute::Full));
      if (instance.framework == Framework::Nest) {
        EXPECT_EQ(instance.placement[0], ParallelDim::Pp);
        continue;
      }
      // A Megatron-Core plan of the NEST space has one of Megatron's two
      // orders, the one that puts the dims larger than 1 as the user's does.
      auto active = [&](const auto& order) {
        const int size[] = {instance.tp, instance.cp, 1, instance.pp, instance.dp};  // ParallelDim order
        std::vector<ParallelDim> dims;
        for (ParallelDim dim : order)
          if (size[static_cast<int>(dim)] > 1) dims.push_back(dim);
        return dims;
      };
      EXPECT_EQ(active(instance.placement), active(narrow.placements.front()));
    }
  }
}

TEST(StrategySpace, MegatronCoreInstancesAreWhatMegatronRuns) {
  std::size_t instances = 0, pp_dp_orders = 0, blocks = 0, whole_experts = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    testing::RandomCase c = testing::random_case(seed);
    c.problem.framework = Framework::MegatronCore;
    std::vector<DpInstance> all;
    try {
      all = enumerate_instances(c.problem, StrategySpace{});
    } catch (const std::invalid_argument&) {
      continue;  // a random model Megatron cannot split at all
    }
    for (const DpInstance& instance : all) {
      ++instances;
      Execution skeleton = execution_skeleton(c.problem, instance);
      EXPECT_TRUE(megatron_violations(c.problem.model, skeleton).empty());
      // One recompute mode per instance; block recompute only under full.
      EXPECT_EQ(std::popcount(instance.recompute_mask), 1);
      if (instance.recompute_layers > 0) {
        ++blocks;
        EXPECT_EQ(instance.recompute_mask, 1u << static_cast<unsigned>(Recompute::Full));
      }
      if (instance.zero_stage >= 2) {
        EXPECT_EQ(instance.pp, 1);
      }
      if (c.problem.model.moe.enabled() && instance.tp > 1) {
        EXPECT_EQ(instance.sp, 1);
      }
      if (instance.cp > 1) {
        EXPECT_EQ(skeleton.attention, Attention::Flash);
      }
      const bool pp_before_dp = instance.placement[3] == ParallelDim::Pp;
      pp_dp_orders += pp_before_dp ? 1 : 0;
      if (pp_before_dp && instance.pp > 1) {
        EXPECT_EQ(skeleton.etp() * instance.ep, instance.tp * instance.cp);
      }
      if (instance.expert_tp != 0) {
        ++whole_experts;
        EXPECT_TRUE(instance.expert_tp == 1 && instance.ep > 1 && instance.tp > 1);
      }
    }
  }
  EXPECT_GT(instances, 1000u);
  EXPECT_GT(pp_dp_orders, 10u);
  EXPECT_GT(blocks, 100u);
  EXPECT_GT(whole_experts, 10u) << "etp 1 is never searched";
}

// Nest's space holds Megatron-Core's: over random problems (MoE included,
// cp allowed, memory tight so recompute binds) Nest's best is never slower.
// It fails if Nest lacks a plan Megatron-Core has and prices faster (its
// expert grid, its block recompute): the cases where Nest's best is one of
// those are counted and must occur.
TEST(StrategySpace, NestsBestIsNeverSlowerThanMegatronCores) {
  int compared = 0, won_by_addition = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    testing::RandomCase c = testing::random_case(seed);
    if (seed % 2 == 0) {  // half the cases MoE, so Megatron's expert grid is in play
      c.problem.model.moe.num_experts = 4;
      c.problem.model.moe.top_k = 2;
      c.problem.model.moe.expert_ffn_hidden = c.problem.model.hidden;
      c.problem.model.moe.layer_interval = 1;
    }
    c.space.placements.clear();
    c.space.cp = {1, 2};
    testing::tighten_memory(c, seed);
    SolveOptions options;
    options.top_k = 1;
    options.threads = 1;
    options.baselines = false;
    auto best = [&](Framework framework) -> std::optional<InstanceResult> {
      c.problem.framework = framework;
      try {
        const SolveResult result = solve(c.problem, c.space, options);
        if (result.feasible) return result.top.front();
      } catch (const std::invalid_argument&) {
      }
      return std::nullopt;
    };
    const std::optional<InstanceResult> megatron = best(Framework::MegatronCore);
    const std::optional<InstanceResult> nest = best(Framework::Nest);
    if (!megatron) continue;
    ASSERT_TRUE(nest) << "seed " << seed << ": Megatron-Core has a plan, Nest none";
    ++compared;
    EXPECT_LE(nest->iteration_time_s, megatron->iteration_time_s) << "seed " << seed;
    bool block_recompute = false;
    for (const StagePlan& stage : nest->plan.stages) block_recompute |= stage.recompute_layers > 0;
    if (nest->plan.framework == Framework::MegatronCore || block_recompute) ++won_by_addition;
  }
  EXPECT_GT(compared, 30);
  EXPECT_GT(won_by_addition, 0) << "no case needs Megatron's expert grid or block recompute: the test cannot fail";
}

TEST(StrategySpace, AnEmptySpaceIsABadInputNamingTheFlags) {
  testing::RandomCase c = testing::random_case(1);
  StrategySpace space;
  space.tp = {3};
  try {
    enumerate_instances(c.problem, space);
    FAIL();
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("--tp"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace nestfast::search
