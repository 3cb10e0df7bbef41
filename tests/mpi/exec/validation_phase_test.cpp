// The validation phase of `nestfast run`: an EP plan's all-to-all runs with
// each algorithm at each size, every byte arrives, the rows carry the
// topology, bounds and the scaled prediction; dense plans run only on request;
// bad settings fail on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <stdexcept>

#include "comm/exec/validation.hpp"
#include "tests/mpi/exec/world.hpp"

namespace nestfast::comm {
namespace {

using test_world::world_size;

ValidationSettings small_settings() {
  ValidationSettings settings;
  settings.sizes = "4K:8K";
  settings.algos = {"fast", "mpi", "pairwise"};
  settings.virtual_servers = 2;
  settings.iterations = 1;
  settings.warmup = 0;
  return settings;
}

// EP over all ranks, so that the group spans both virtual servers (a group
// inside one server has no cross-server bytes and a zero server bound).
ValidationRequest moe_request() {
  return {.plan_row = 3, .ep = world_size(), .experts = 2 * world_size(), .top_k = 2, .predicted_s = 1e-3,
          .predicted_bytes_per_rank = 8192};
}

TEST(ValidationPhase, RunsTheEpAllToAllWithEveryAlgorithmAndSize) {
  const ValidationRequest dense{.plan_row = 5, .ep = 1, .experts = 0};
  const auto rows = run_validation(MPI_COMM_WORLD, small_settings(), {moe_request(), dense});
  ASSERT_EQ(rows.size(), 6U);  // the dense plan is skipped without all_plans
  const char* algos[] = {"fast", "mpi", "pairwise"};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ValidationResult& row = rows[i];
    EXPECT_EQ(row.plan_row, 3U);
    EXPECT_EQ(row.algo, algos[i % 3]);
    EXPECT_EQ(row.picked, row.algo);
    EXPECT_EQ(row.bytes_per_rank, i < 3 ? 4096U : 8192U);
    EXPECT_EQ(row.servers, 2);
    EXPECT_EQ(row.wrong, 0U) << row.algo << " " << row.first_bad;
    EXPECT_TRUE(row.first_bad.empty());
    EXPECT_GT(row.time_us_avg, 0.0);
    EXPECT_LE(row.time_us_min, row.time_us_avg);
    EXPECT_LE(row.time_us_avg, row.time_us_max);
    EXPECT_GT(row.lb_us, 0.0);
    EXPECT_DOUBLE_EQ(row.predicted_us, i < 3 ? 500.0 : 1000.0);
  }
}

TEST(ValidationPhase, DensePlansRunOnlyWithAllPlans) {
  ValidationSettings settings = small_settings();
  settings.sizes = "4K";
  settings.algos = {"mpi", "auto"};
  const ValidationRequest dense{.plan_row = 5, .ep = 1, .experts = 0};
  EXPECT_TRUE(run_validation(MPI_COMM_WORLD, settings, {dense}).empty());
  settings.all_plans = true;
  const auto rows = run_validation(MPI_COMM_WORLD, settings, {dense});
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[1].algo, "auto");
  EXPECT_TRUE(rows[1].picked == "mpi" || rows[1].picked == "fast") << rows[1].picked;
  for (const auto& row : rows) EXPECT_EQ(row.wrong, 0U);
}

TEST(ValidationPhase, DisabledRunsNothing) {
  ValidationSettings settings = small_settings();
  settings.enabled = false;
  EXPECT_TRUE(run_validation(MPI_COMM_WORLD, settings, {moe_request()}).empty());
}

TEST(ValidationPhase, BadSettingsFailOnEveryRank) {
  ValidationSettings unknown = small_settings();
  unknown.algos = {"fast", "ring"};
  EXPECT_THROW(run_validation(MPI_COMM_WORLD, unknown, {moe_request()}), std::invalid_argument);
  ValidationSettings sizes = small_settings();
  sizes.sizes = "8K:4K";
  EXPECT_THROW(run_validation(MPI_COMM_WORLD, sizes, {moe_request()}), std::invalid_argument);
  ValidationSettings skew = small_settings();
  skew.skew = "zipf:-1";
  EXPECT_THROW(run_validation(MPI_COMM_WORLD, skew, {moe_request()}), std::invalid_argument);
}

}  // namespace
}  // namespace nestfast::comm
