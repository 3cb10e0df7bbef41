#include "solver/model/expert_routing.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace nestfast {
namespace {

// C(pool - marked, k) / C(pool, k): the chance that k distinct picks out of
// `pool` miss all `marked` of them.
double miss_all(int pool, int marked, int k) {
  if (marked <= 0) return 1;
  if (pool - marked < k) return 0;
  double miss = 1;
  for (int i = 0; i < k; ++i) miss *= static_cast<double>(pool - marked - i) / (pool - i);
  return miss;
}

double log_binomial(int n, int r) {
  return std::lgamma(n + 1.0) - std::lgamma(r + 1.0) - std::lgamma(n - r + 1.0);
}

}  // namespace

double expert_range_hit_probability(const MoeSpec& moe, int first, int count) {
  const int experts = moe.num_experts;
  const int k = std::min(moe.top_k, experts);
  count = std::min(count, experts - first);
  if (count <= 0 || k <= 0) return 0;
  const int groups = moe.router.groups;
  const int picked = moe.router.group_topk;
  const bool grouped = groups > 1 && picked >= 1 && picked < groups && experts % groups == 0;
  if (!grouped) return 1 - miss_all(experts, count, k);

  // The groups the range touches, with how many of its experts each holds.
  const int size = experts / groups;
  std::vector<int> overlap;
  for (int g = first / size; g * size < first + count; ++g)
    overlap.push_back(std::min(first + count, (g + 1) * size) - std::max(first, g * size));
  const int touched = static_cast<int>(overlap.size());
  // ways[x][o]: subsets of the touched groups with x groups holding o of the
  // range's experts.
  std::vector<std::vector<double>> ways(static_cast<std::size_t>(touched) + 1,
                                        std::vector<double>(static_cast<std::size_t>(count) + 1, 0.0));
  ways[0][0] = 1;
  for (int j = 0; j < touched; ++j)
    for (int x = j; x >= 0; --x)
      for (int o = count - overlap[static_cast<std::size_t>(j)]; o >= 0; --o)
        ways[static_cast<std::size_t>(x) + 1][static_cast<std::size_t>(o + overlap[static_cast<std::size_t>(j)])] +=
            ways[static_cast<std::size_t>(x)][static_cast<std::size_t>(o)];
  // The token's g groups meet the touched ones in exactly such a subset with
  // chance C(G - touched, g - x) / C(G, g); its k experts then fall among the
  // g * size experts of its groups.
  double miss = 0;
  for (int x = 0; x <= std::min(touched, picked); ++x) {
    if (picked - x > groups - touched) continue;
    const double choose = std::exp(log_binomial(groups - touched, picked - x) - log_binomial(groups, picked));
    for (int o = 0; o <= count; ++o) {
      const double w = ways[static_cast<std::size_t>(x)][static_cast<std::size_t>(o)];
      if (w > 0) miss += w * choose * miss_all(picked * size, o, k);
    }
  }
  return std::clamp(1 - miss, 0.0, 1.0);
}

}  // namespace nestfast
