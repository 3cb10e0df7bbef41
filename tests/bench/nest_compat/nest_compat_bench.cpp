// Compat-mode search + baselines on the NEST artifact's cases (inputs parsed
// once, outside the timing): each reference fixture on its own, every set in
// one iteration, and the generated set by device count N, to set against the
// artifact's own CPU times (shared/fixtures/nest-generated/cpu_times.txt).
//   taskset -c 0 bench_nest_compat --benchmark_filter='All|ByN'
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

#include "io/nest_json/nest_json.hpp"
#include "solver/compat/nest_solver.hpp"
#include "tests/support/nest_cases.hpp"

namespace {

using nestfast::compat::CostModelKind;
using nestfast::compat::NestProblem;

struct LoadedCase {
  std::string name;
  std::string input;
  NestProblem problem;
};

using LoadedSet = std::vector<LoadedCase>;

const std::map<std::string, LoadedSet>& sets() {
  static const auto loaded = [] {
    std::map<std::string, LoadedSet> result;
    for (const auto& set : nestfast::test::nest_case_sets()) {
      for (const auto& item : nestfast::test::nest_cases(set)) {
        result[set.name].push_back({item.name, item.input, nestfast::io::load_nest_input(item.input)});
      }
    }
    return result;
  }();
  return loaded;
}

void solve_one(benchmark::State& state, const NestProblem* problem, CostModelKind model) {
  for (auto _ : state) benchmark::DoNotOptimize(nestfast::compat::solve(*problem, model));
}

void solve_all(benchmark::State& state, std::vector<const LoadedCase*> cases, CostModelKind model) {
  for (auto _ : state) {
    for (const LoadedCase* item : cases) benchmark::DoNotOptimize(nestfast::compat::solve(item->problem, model));
  }
  state.counters["cases"] = static_cast<double>(cases.size());
}

void parse_and_solve_all(benchmark::State& state, const LoadedSet* cases) {
  for (auto _ : state) {
    for (const auto& item : *cases) {
      const auto parsed = nestfast::io::load_nest_input(item.input);
      benchmark::DoNotOptimize(nestfast::compat::solve(parsed, CostModelKind::Compat));
    }
  }
}

std::vector<const LoadedCase*> all_of(const LoadedSet& cases) {
  std::vector<const LoadedCase*> pointers;
  for (const auto& item : cases) pointers.push_back(&item);
  return pointers;
}

const bool registered = [] {
  for (const auto& [set, cases] : sets()) {
    if (set == "reference") {
      for (const auto& item : cases) {
        benchmark::RegisterBenchmark(("Compat/" + item.name).c_str(), solve_one, &item.problem, CostModelKind::Compat)
            ->Unit(benchmark::kMillisecond);
      }
    }
    benchmark::RegisterBenchmark(("AllCompat/" + set).c_str(), solve_all, all_of(cases), CostModelKind::Compat)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("AllCompatWithParsing/" + set).c_str(), parse_and_solve_all, &cases)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("AllCorrected/" + set).c_str(), solve_all, all_of(cases), CostModelKind::Corrected)
        ->Unit(benchmark::kMillisecond);
    if (set == "generated") {
      std::map<int, std::vector<const LoadedCase*>> by_devices;
      for (const auto& item : cases) by_devices[item.problem.max_devices].push_back(&item);
      for (const auto& [devices, group] : by_devices) {
        benchmark::RegisterBenchmark(("CompatByN/generated/N" + std::to_string(devices)).c_str(), solve_all, group,
                                     CostModelKind::Compat)
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
