// Scheduling time of the FAST plan (issue 7): dense zipf:0.8 and uniform-random
// demand, 8 GPUs per server, 8 to 256 servers. The reference scheduler takes
// about 0.3 ms (8 servers), 2.4 ms (16), 28 ms (32), 68 ms (40), 0.52 s (64);
// targets here: <= 30 us at 8, <= 2 ms at 40, <= 30 ms at 128 servers.
//   build_fast_plan: everything a rank computes (server matrix, balance with
//                    provenance, padding, Birkhoff stages, the plan's copy of the demand)
//   latency_aware:   the same with a stage cost of 2 us at 50 GB/s (100 kB): the
//                    decomposition of least sum(w) + K alpha (issue 18 target:
//                    <= 4S stages, <= 5% over the bound, <= 30 ms at 128 x 8);
//                    counters: stages, loss (padded line sum / bound - 1), cover (1 if chosen)
//   birkhoff:        the decomposition of the padded server matrix alone
//   rank_schedule:   one rank's explicit piece lists (what an executor expands)
//   demand_pass:     the baseline: one read of the demand (its server bound), the
//                    least any plan does; quote plan times as ratios to it, since
//                    both read the same N x N matrix on the same shared machine
#include <benchmark/benchmark.h>

#include "comm/plan/birkhoff.hpp"
#include "comm/plan/bounds.hpp"
#include "comm/plan/fast_plan.hpp"
#include "comm/workload/workload.hpp"

namespace {

using namespace nestfast::comm;

constexpr int kGpusPerServer = 8;
constexpr std::uint64_t kBytesPerRank = 64u << 20;

const char* workload_of(int index) { return index == 0 ? "zipf:0.8" : "random"; }

void BM_BuildFastPlan(benchmark::State& state) {
  const auto servers = static_cast<int>(state.range(0));
  const ServerMap map = ServerMap::uniform(servers, kGpusPerServer);
  const TrafficMatrix demand = make_workload(workload_of(static_cast<int>(state.range(1))), map.ranks(), kBytesPerRank, 1);
  std::size_t stages = 0;
  for (auto _ : state) {
    FastPlan plan = build_fast_plan(demand, map);
    stages = plan.stage_count();
    benchmark::DoNotOptimize(plan.stage_weights.data());
  }
  state.counters["stages"] = static_cast<double>(stages);
  state.SetLabel(workload_of(static_cast<int>(state.range(1))));
}

void BM_LatencyAwarePlan(benchmark::State& state) {
  const auto servers = static_cast<int>(state.range(0));
  const ServerMap map = ServerMap::uniform(servers, kGpusPerServer);
  const TrafficMatrix demand = make_workload(workload_of(static_cast<int>(state.range(1))), map.ranks(), kBytesPerRank, 1);
  const FastPlanOptions options{.stage_cost_bytes = 100000};
  FastPlan plan;
  for (auto _ : state) {
    plan = build_fast_plan(demand, map, options);
    benchmark::DoNotOptimize(plan.stage_weights.data());
  }
  state.counters["stages"] = static_cast<double>(plan.stage_count());
  state.counters["loss"] = static_cast<double>(plan.padded_line_sum) / server_bound_bytes(demand, map) - 1;
  state.counters["cover"] = plan.method == StageMethod::cover ? 1 : 0;
  state.SetLabel(workload_of(static_cast<int>(state.range(1))));
}

void BM_Birkhoff(benchmark::State& state) {
  const auto servers = static_cast<int>(state.range(0));
  const ServerMap map = ServerMap::uniform(servers, kGpusPerServer);
  const TrafficMatrix demand = make_workload(workload_of(static_cast<int>(state.range(1))), map.ranks(), kBytesPerRank, 1);
  const FastPlan plan = build_fast_plan(demand, map, {.method = StageMethod::birkhoff});
  for (auto _ : state) {
    BirkhoffStages stages = birkhoff_decompose(plan.padded_matrix, servers, plan.padded_line_sum);
    benchmark::DoNotOptimize(stages.weights.data());
  }
  state.counters["stages"] = static_cast<double>(plan.stage_count());
  state.SetLabel(workload_of(static_cast<int>(state.range(1))));
}

void BM_RankSchedule(benchmark::State& state) {
  const auto servers = static_cast<int>(state.range(0));
  const ServerMap map = ServerMap::uniform(servers, kGpusPerServer);
  const TrafficMatrix demand = make_workload(workload_of(static_cast<int>(state.range(1))), map.ranks(), kBytesPerRank, 1);
  const FastPlan plan = build_fast_plan(demand, map);
  std::size_t pieces = 0;
  for (auto _ : state) {
    RankSchedule schedule = rank_schedule(plan, map.ranks() / 2);
    pieces = schedule.pieces.size();
    benchmark::DoNotOptimize(schedule.pieces.data());
  }
  state.counters["pieces"] = static_cast<double>(pieces);
  state.SetLabel(workload_of(static_cast<int>(state.range(1))));
}

void BM_DemandPass(benchmark::State& state) {
  const auto servers = static_cast<int>(state.range(0));
  const ServerMap map = ServerMap::uniform(servers, kGpusPerServer);
  const TrafficMatrix demand = make_workload(workload_of(static_cast<int>(state.range(1))), map.ranks(), kBytesPerRank, 1);
  for (auto _ : state) benchmark::DoNotOptimize(server_bound_bytes(demand, map));
  state.SetLabel(workload_of(static_cast<int>(state.range(1))));
}

void server_counts(benchmark::internal::Benchmark* bench) {
  for (int workload : {0, 1}) {
    for (int servers : {8, 16, 32, 40, 64, 128, 256}) bench->Args({servers, workload});
  }
}

BENCHMARK(BM_BuildFastPlan)->Apply(server_counts)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LatencyAwarePlan)->Apply(server_counts)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Birkhoff)->Apply(server_counts)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RankSchedule)->Apply(server_counts)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DemandPass)->Apply(server_counts)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
