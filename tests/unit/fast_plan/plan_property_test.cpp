// The plan invariants over many seeded matrices (issue 7: >= 500 matrices,
// 1-64 servers, 1-16 GPUs per server, zero rows/columns, a single hot entry,
// all-equal), exact and quantised.
#include <gtest/gtest.h>

#include <algorithm>

#include "comm/plan/bounds.hpp"
#include "comm/plan/fast_plan.hpp"
#include "comm/plan/verify_plan.hpp"
#include "plan_cases.hpp"

namespace nestfast::comm {
namespace {

constexpr std::uint64_t kCases = 520;

std::uint64_t max_line_sum(const std::vector<std::uint64_t>& m, int S) {
  std::uint64_t most = 0;
  for (int i = 0; i < S; ++i) {
    std::uint64_t row = 0, col = 0;
    for (int j = 0; j < S; ++j) {
      row += m[static_cast<std::size_t>(i) * S + j];
      col += m[static_cast<std::size_t>(j) * S + i];
    }
    most = std::max({most, row, col});
  }
  return most;
}

TEST(FastPlanProperty, EveryCasePassesTheVerifier) {
  int largest_servers = 0, largest_gpus = 0;
  for (std::uint64_t seed = 1; seed <= kCases; ++seed) {
    const testing::PlanCase c = testing::make_case(seed);
    FastPlanOptions options;
    if (seed % 5 == 0) options.quantum = 1 + (seed * 7919) % 4096;
    const FastPlan plan = build_fast_plan(c.demand, c.map, options);
    const std::vector<std::string> problems = verify_plan(plan);
    ASSERT_TRUE(problems.empty()) << "case " << seed << " (" << c.name << "): " << problems.front();

    const int S = c.map.servers();
    const auto bound = static_cast<std::uint64_t>(S) * S - 2u * S + 2u;
    EXPECT_LE(plan.stage_count(), bound) << "case " << seed << " (" << c.name << ")";
    // Without quantisation the padded line sum is the server matrix's largest line: padding costs nothing.
    if (options.quantum == 0) {
      EXPECT_EQ(plan.padded_line_sum, max_line_sum(plan.server_matrix, S)) << "case " << seed;
    }
    // No schedule beats the server bound; with equal servers FAST's lanes stay within a byte per entry of it.
    const double lower = server_bound_bytes(c.demand, c.map);
    EXPECT_GE(static_cast<double>(plan.padded_line_sum) + 1e-9, lower) << "case " << seed;
    if (options.quantum == 0 && c.map.is_uniform()) {
      EXPECT_LE(static_cast<double>(plan.padded_line_sum), lower + S) << "case " << seed << " (" << c.name << ")";
    }
    largest_servers = std::max(largest_servers, S);
    largest_gpus = std::max(largest_gpus, c.map.max_gpus_per_server());
  }
  // The seeds do reach the corners the issue names.
  EXPECT_GE(largest_servers, 60);
  EXPECT_GE(largest_gpus, 15);
}

}  // namespace
}  // namespace nestfast::comm
