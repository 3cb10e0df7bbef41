// Where a token's experts land (solver/model/expert_routing.hpp), against
// hypergeometric chances worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "solver/model/expert_routing.hpp"

namespace nestfast {
namespace {

MoeSpec experts(int count, int top_k, int groups = 0, int group_topk = 0) {
  MoeSpec moe;
  moe.num_experts = count;
  moe.top_k = top_k;
  moe.expert_ffn_hidden = 1;
  moe.router.groups = groups;
  moe.router.group_topk = group_topk;
  return moe;
}

double choose(int n, int r) { return std::round(std::exp(std::lgamma(n + 1.0) - std::lgamma(r + 1.0) - std::lgamma(n - r + 1.0))); }

TEST(ExpertRouting, UniformTopKMissesARangeHypergeometrically) {
  const MoeSpec moe = experts(8, 2);
  // 1 - C(7,2)/C(8,2) = 1 - 21/28; 1 - C(4,2)/C(8,2) = 1 - 6/28.
  EXPECT_NEAR(expert_range_hit_probability(moe, 3, 1), 0.25, 1e-12);
  EXPECT_NEAR(expert_range_hit_probability(moe, 4, 4), 22.0 / 28, 1e-12);
  EXPECT_NEAR(expert_range_hit_probability(moe, 0, 8), 1.0, 1e-12);
  EXPECT_EQ(expert_range_hit_probability(moe, 2, 0), 0.0);
  // More experts than the range leaves: clamped at the last expert.
  EXPECT_NEAR(expert_range_hit_probability(moe, 7, 5), 0.25, 1e-12);
}

TEST(ExpertRouting, GroupLimitedRoutingPicksGroupsFirst) {
  // 4 groups of 2, a token takes 2 groups and 2 experts among their 4.
  const MoeSpec moe = experts(8, 2, 4, 2);
  // One group: chosen with chance C(3,1)/C(4,2) = 1/2, then hit unless both
  // picks fall on the other group's 2 (C(2,2)/C(4,2) = 1/6): 1/2 * 5/6.
  EXPECT_NEAR(expert_range_hit_probability(moe, 0, 2), 5.0 / 12, 1e-12);
  // One expert of a group: 1/2 * (1 - C(3,2)/C(4,2)) = 1/2 * 1/2.
  EXPECT_NEAR(expert_range_hit_probability(moe, 5, 1), 0.25, 1e-12);
  // Two whole groups [0, 4): missed only when the token takes the other two
  // (C(2,2)/C(4,2) = 1/6) or one of them and both picks in it (4/6 * 1/6).
  EXPECT_NEAR(expert_range_hit_probability(moe, 0, 4), 1 - 1.0 / 6 - 4.0 / 6 / 6, 1e-12);
}

TEST(ExpertRouting, DeepSeekV3NodeHoldingOneGroup) {
  // 256 experts in 8 groups of 32, 4 groups a token, top-8: a node holding
  // one group is hit when its group is picked (1/2) and not all 8 picks
  // fall among the other 96 experts of the token's groups.
  const MoeSpec moe = experts(256, 8, 8, 4);
  const double miss = choose(96, 8) / choose(128, 8);
  EXPECT_NEAR(expert_range_hit_probability(moe, 64, 32), 0.5 * (1 - miss), 1e-12);
}

// A token takes exactly k experts, so the chances over single experts add up
// to k, with or without groups, and ranges straddling groups are consistent.
TEST(ExpertRouting, ChancesOverSingleExpertsAddUpToTopK) {
  for (const MoeSpec& moe : {experts(16, 3), experts(16, 3, 4, 2), experts(24, 5, 6, 3), experts(256, 8, 8, 4)}) {
    double total = 0;
    for (int e = 0; e < moe.num_experts; ++e) total += expert_range_hit_probability(moe, e, 1);
    EXPECT_NEAR(total, moe.top_k, 1e-9) << moe.num_experts << " experts, groups " << moe.router.groups;
  }
  // A range across two groups is hit at most as often as its parts together.
  const MoeSpec moe = experts(24, 5, 6, 3);
  EXPECT_LE(expert_range_hit_probability(moe, 2, 4),
            expert_range_hit_probability(moe, 2, 2) + expert_range_hit_probability(moe, 4, 2) + 1e-12);
  EXPECT_GE(expert_range_hit_probability(moe, 2, 4), expert_range_hit_probability(moe, 2, 2));
}

}  // namespace
}  // namespace nestfast
