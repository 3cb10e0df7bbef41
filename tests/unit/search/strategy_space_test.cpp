// The strategy space: list parsing, restrictions honoured, and every
// enumerated instance accepted by the cost model's own validation.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "solver/search/execution_layout.hpp"
#include "solver/search/strategy_space.hpp"
#include "tests/unit/search/random_problem.hpp"

namespace nestfast::search {
namespace {

TEST(StrategySpace, ParsesListsAndRejectsGarbage) {
  EXPECT_EQ(parse_int_list("4,1,2,2", "--tp", 1), (std::vector<int>{1, 2, 4}));
  EXPECT_TRUE(parse_int_list("all", "--tp", 1).empty());
  EXPECT_TRUE(parse_int_list("", "--tp", 1).empty());
  EXPECT_THROW(parse_int_list("1,x", "--tp", 1), std::invalid_argument);
  EXPECT_THROW(parse_int_list("0", "--tp", 1), std::invalid_argument);
  EXPECT_THROW(parse_int_list("2,", "--tp", 1), std::invalid_argument);
  try {
    parse_int_list("8,abc", "--pp", 1);
    FAIL();
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("--pp"), std::string::npos);
  }
  EXPECT_EQ(parse_recompute_list("full,none", "--recompute"), (std::vector<Recompute>{Recompute::None, Recompute::Full}));
  EXPECT_THROW(parse_recompute_list("some", "--recompute"), std::invalid_argument);
  const auto orders = parse_placement_list("tp,pp,dp;dp,tp", "--placement");
  ASSERT_EQ(orders.size(), 2u);
  EXPECT_EQ(placement_to_string(orders[0]), "tp,pp,dp,cp,ep");
  EXPECT_EQ(placement_to_string(orders[1]), "dp,tp,cp,ep,pp");
  EXPECT_THROW(parse_placement_list("tp,tp", "--placement"), std::invalid_argument);
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
      EXPECT_EQ(instance.zero_stage, 1);
      EXPECT_EQ(instance.recompute_mask, 1u << static_cast<unsigned>(Recompute::Full));
      EXPECT_EQ(instance.placement[0], ParallelDim::Pp);
    }
  }
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
