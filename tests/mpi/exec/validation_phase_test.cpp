// The validation phase of `nestfast run`: an EP plan's all-to-all runs with
// each algorithm at each size, every byte arrives, the rows carry the
// topology, bounds and the price of the traffic that ran; dense plans run only on request;
// bad settings fail on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
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
  return {.plan_row = 3, .ep = world_size(), .experts = 2 * world_size(), .top_k = 2, .cluster = "test-cluster",
          .gpu_nic_Bps = 50e9, .gpu_scaleup_Bps = 450e9};
}

// A price that shows what it was given: 1 us per KiB of the traffic that ran,
// plus 1 s per server of the map it ran on (2 virtual servers).
double traffic_price(const ValidationRequest& request, const TrafficMatrix& demand, const ServerMap& map) {
  EXPECT_EQ(request.cluster, "test-cluster");
  return static_cast<double>(demand.total()) / 1024 * 1e-6 + map.servers();
}

TEST(ValidationPhase, RunsTheEpAllToAllWithEveryAlgorithmAndSize) {
  const ValidationRequest dense{.plan_row = 5, .ep = 1, .experts = 0};
  const auto rows = run_validation(MPI_COMM_WORLD, small_settings(), {moe_request(), dense}, traffic_price);
  ASSERT_EQ(rows.size(), 6U);  // the dense plan is skipped without all_plans
  const char* algos[] = {"fast", "mpi", "pairwise"};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ValidationResult& row = rows[i];
    EXPECT_EQ(row.plan_row, 3U);
    EXPECT_EQ(row.algo, algos[i % 3]);
    EXPECT_EQ(row.picked, row.algo);
    EXPECT_EQ(row.bytes_per_rank, i < 3 ? 4096U : 8192U);
    EXPECT_EQ(row.servers, 2);
    EXPECT_EQ(row.wrong_bytes, 0U) << row.algo << " " << row.first_bad;
    EXPECT_TRUE(row.first_bad.empty());
    EXPECT_GT(row.time_avg_us, 0.0);
    EXPECT_LE(row.time_min_us, row.time_avg_us);
    EXPECT_LE(row.time_avg_us, row.time_max_us);
    EXPECT_GT(row.lower_bound_us, 0.0);  // at the request's declared 50 GB/s per GPU
    // An efficiency is a percentage the fastest iteration allows, or unknown.
    if (row.bound_violated) EXPECT_TRUE(std::isnan(row.efficiency_pct));
    else EXPECT_TRUE(row.efficiency_pct > 0 && row.efficiency_pct <= 100) << row.efficiency_pct;
    // The price of the (request, size) traffic itself: every rank sends bytes_per_rank.
    EXPECT_DOUBLE_EQ(row.predicted_us, 2e6 + static_cast<double>(world_size()) * (i < 3 ? 4.0 : 8.0));
  }
}

// The bound rests on declared rates only: none declared, none given; the
// machine's NIC rate (validate.nic_GBps) replaces the preset's; a rate far
// below what shared memory carries is beaten, and then no efficiency is given.
TEST(ValidationPhase, TheBoundRestsOnTheDeclaredRates) {
  ValidationSettings settings = small_settings();
  settings.sizes = "64K";
  settings.algos = {"pairwise"};
  ValidationRequest undeclared = moe_request();
  undeclared.gpu_nic_Bps = 0;
  const auto none = run_validation(MPI_COMM_WORLD, settings, {undeclared});
  ASSERT_EQ(none.size(), 1U);
  EXPECT_EQ(none[0].lower_bound_us, 0.0);
  EXPECT_TRUE(std::isnan(none[0].efficiency_pct));
  EXPECT_FALSE(none[0].bound_violated);

  const auto preset = run_validation(MPI_COMM_WORLD, settings, {moe_request()});
  settings.nic_GBps = 25;  // per NIC: half the preset's 50 GB/s per GPU, so twice the bound
  const auto machine = run_validation(MPI_COMM_WORLD, settings, {moe_request()});
  ASSERT_EQ(preset.size(), 1U);
  ASSERT_EQ(machine.size(), 1U);
  EXPECT_DOUBLE_EQ(machine[0].lower_bound_us, 2 * preset[0].lower_bound_us);

  settings.nic_GBps = 1e-6;  // 1 kB/s: every iteration beats this "bound"
  const auto slow = run_validation(MPI_COMM_WORLD, settings, {moe_request()});
  ASSERT_EQ(slow.size(), 1U);
  EXPECT_TRUE(slow[0].bound_violated);
  EXPECT_TRUE(std::isnan(slow[0].efficiency_pct));
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
  for (const auto& row : rows) EXPECT_EQ(row.wrong_bytes, 0U);
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
