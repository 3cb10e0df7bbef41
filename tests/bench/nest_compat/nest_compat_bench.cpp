// Compat-mode search + baselines on each of the 21 NEST reference fixtures
// (inputs parsed once, outside the timing), and all 21 in one iteration:
// the target is <= 1 s for all of them on one core.
//   bench_nest_compat --benchmark_filter=All
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "io/nest_json/nest_json.hpp"
#include "solver/compat/nest_solver.hpp"

namespace {

using nestfast::compat::CostModelKind;
using nestfast::compat::NestProblem;

std::vector<std::pair<std::string, NestProblem>> load_fixtures() {
  const std::filesystem::path folder = std::filesystem::path(NESTFAST_SHARED_DIR) / "fixtures" / "nest-reference";
  std::vector<std::pair<std::string, NestProblem>> problems;
  std::vector<std::filesystem::path> inputs;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().string().ends_with(".in.json")) inputs.push_back(entry.path());
  }
  std::sort(inputs.begin(), inputs.end());
  for (const auto& input : inputs) {
    std::string name = input.filename().string();
    name.resize(name.size() - std::string(".in.json").size());
    problems.emplace_back(name, nestfast::io::load_nest_input(input.string()));
  }
  return problems;
}

const std::vector<std::pair<std::string, NestProblem>>& fixtures() {
  static const auto problems = load_fixtures();
  return problems;
}

void solve_one(benchmark::State& state, const NestProblem* problem, CostModelKind model) {
  for (auto _ : state) benchmark::DoNotOptimize(nestfast::compat::solve(*problem, model));
}

void solve_all(benchmark::State& state, CostModelKind model) {
  for (auto _ : state) {
    for (const auto& [name, problem] : fixtures()) benchmark::DoNotOptimize(nestfast::compat::solve(problem, model));
  }
}

void parse_and_solve_all(benchmark::State& state) {
  const std::filesystem::path folder = std::filesystem::path(NESTFAST_SHARED_DIR) / "fixtures" / "nest-reference";
  for (auto _ : state) {
    for (const auto& [name, problem] : fixtures()) {
      const auto parsed = nestfast::io::load_nest_input((folder / (name + ".in.json")).string());
      benchmark::DoNotOptimize(nestfast::compat::solve(parsed, CostModelKind::Compat));
    }
  }
}

const bool registered = [] {
  for (const auto& [name, problem] : fixtures()) {
    benchmark::RegisterBenchmark(("Compat/" + name).c_str(), solve_one, &problem, CostModelKind::Compat)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("AllCompat", solve_all, CostModelKind::Compat)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("AllCompatWithParsing", parse_and_solve_all)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("AllCorrected", solve_all, CostModelKind::Corrected)->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
