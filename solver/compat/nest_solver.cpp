// "line N" in this file: nest/Solver/device_placement/device_placement.cpp of
// github.com/scai-tech/Nest at commit 3e163ad (the NEST artifact).
#include "solver/compat/nest_solver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "solver/compat/artifact_stage_times.hpp"
#include "solver/compat/baseline_blocks.hpp"
#include "solver/compat/chain_table.hpp"
#include "solver/compat/compat_model.hpp"
#include "solver/compat/corrected_model.hpp"
#include "solver/compat/skeleton_levels.hpp"
#include "solver/compat/suffix_dp.hpp"

namespace nestfast::compat {

namespace {

constexpr double kInfeasible = SuffixTable::kInfeasible;

// The data-parallel degrees the artifact tries, d <= maxDevices and
// d <= mbsInBatch (line 1165; mbsInBatch is an int there).
int max_data_parallel(const NestProblem& problem) {
  const double micro_batches = std::floor(problem.mbs_in_batch);
  return static_cast<int>(std::min<double>(problem.max_devices, micro_batches));
}

const NestGraph& graph_of(const NestProblem& problem, int tp) {
  const NestGraph* graph = problem.graph_for(tp);
  if (graph == nullptr) throw std::invalid_argument("no graph for tensor-parallel width " + std::to_string(tp));
  return *graph;
}

void check_plan_shape(const NestPlan& plan, std::size_t chain_size) {
  if (plan.stages.empty()) throw std::invalid_argument("stages: the plan has no stage");
  if (plan.dp < 1) throw std::invalid_argument("dataParallelDegree: must be >= 1");
  std::size_t expected = 0;
  for (std::size_t index = 0; index < plan.stages.size(); ++index) {
    const auto& stage = plan.stages[index];
    if (stage.devices < 1) {
      throw std::invalid_argument("stages[" + std::to_string(index) + "].devicesForStage: must be >= 1");
    }
    if (stage.first != expected || stage.end <= stage.first) {
      throw std::invalid_argument("stages[" + std::to_string(index) +
                                  "].nodes: stages must be non-empty contiguous runs of the layer chain in order");
    }
    expected = stage.end;
  }
  if (expected != chain_size) {
    throw std::invalid_argument("stages: the stages cover " + std::to_string(expected) + " of " +
                                std::to_string(chain_size) + " nodes");
  }
}

std::uint64_t devices_of(const std::vector<NestStage>& stages) {
  std::uint64_t devices = 0;
  for (const auto& stage : stages) devices += static_cast<std::uint64_t>(stage.devices);
  return devices;
}

// Per-stage loads of a pipeline in layer order; nullopt when a stage does not fit.
template <class StageLoad>
std::optional<double> bottleneck(const std::vector<NestStage>& stages, StageLoad&& stage_load) {
  double worst = 0.0;
  std::uint64_t devices_after = devices_of(stages);
  const int count = static_cast<int>(stages.size());
  for (int index = 0; index < count; ++index) {
    devices_after -= static_cast<std::uint64_t>(stages[index].devices);
    const std::optional<double> load = stage_load(stages[index], count - index, devices_after);
    if (!load) return std::nullopt;
    worst = std::max(worst, *load);
  }
  return worst;
}

std::uint64_t max_stage_parameters(const ChainTable& chain, const std::vector<NestStage>& stages) {
  std::uint64_t most = 0;
  for (const auto& stage : stages) most = std::max(most, chain.parameter_bytes(stage.first, stage.end));
  return most;
}

// The artifact's evaluator (getTimePerBatchForResult, lines 1879-2033) on
// stages given in layer order. Transfers are charged at the levels of the
// layout with the last stage on device 0, or at those of the artifact's own
// skeleton when one is given. `reversed`: the evaluator receives the stages
// last first, as its baseline path builds them (fixedConfigTimePerBatch,
// lines 2096-2124), so it counts a stage's position from the pipeline's
// start (the last block "is" stage 1, recomputes and holds p micro-batches)
// and all-reduces the parameters of the last block. nullopt: a stage on
// fewer devices than t*ep*cp or out of memory (lines 1989-2009).
std::optional<double> compat_time(const NestProblem& problem, const NestGraph& graph,
                                  const std::vector<NestStage>& stages, int dp, bool reversed,
                                  const NetworkSkeleton* skeleton) {
  const CompatModel model(problem);
  const LevelMap& levels = model.levels();
  const ArtifactStageTimes times(problem, graph, levels);
  const std::optional<SkeletonLevels> placed =
      skeleton ? std::optional<SkeletonLevels>(std::in_place, *skeleton, problem.network, times.size()) : std::nullopt;
  const auto least_devices = static_cast<std::uint64_t>(problem.stage_devices(graph.tp));
  const int count = static_cast<int>(stages.size());
  const auto worst = bottleneck(stages, [&](const NestStage& stage, int remaining, std::uint64_t devices_after) {
    const auto devices = static_cast<std::uint64_t>(stage.devices);
    if (devices < least_devices) return std::optional<double>{};
    const auto [before, after] =
        placed ? placed->stage_levels(stage.first, stage.end)
               : std::pair{levels.boundary_level(devices_after + devices), levels.boundary_level(devices_after)};
    if (before < 0 || after < 0) {
      throw std::invalid_argument("networkSkeleton: no network level joins the devices around stage [" +
                                  std::to_string(stage.first) + ", " + std::to_string(stage.end) + ")");
    }
    const int position = reversed ? count - remaining + 1 : remaining;
    return model.stage_load(times, stage.first, stage.end, position, before, after);
  });
  if (!worst) return std::nullopt;
  const auto& reduced = reversed ? stages.back() : stages.front();
  return model.time_per_batch(*worst, count, dp, devices_of(stages),
                              times.parameter_bytes(reduced.first, reduced.end));
}

std::optional<double> corrected_time(const NestProblem& problem, const ChainTable& chain,
                                     const std::vector<NestStage>& stages, int dp) {
  const CorrectedModel model(problem);
  const auto worst = bottleneck(stages, [&](const NestStage& stage, int remaining, std::uint64_t devices_after) {
    return model.stage_load(chain, stage.first, stage.end, remaining, devices_after, stage.devices);
  });
  if (!worst) return std::nullopt;
  return model.time_per_batch(*worst, static_cast<int>(stages.size()), dp, static_cast<int>(devices_of(stages)),
                              max_stage_parameters(chain, stages));
}

struct Candidate {
  double time = kInfeasible;
  NestPlan plan;
};

NestPlan plan_from_split(int tp, int dp, int stage_devices,
                         const std::vector<std::pair<std::size_t, std::size_t>>& split) {
  NestPlan plan{tp, dp, {}};
  for (const auto& [first, end] : split) plan.stages.push_back(NestStage{stage_devices, first, end});
  return plan;
}

// What both searches need for one graph: its chain table, the devices of a
// stage and the most stages a pipeline can have (one layer each, N devices).
struct GraphSearch {
  GraphSearch(const NestProblem& problem, const NestGraph& graph)
      : chain(graph),
        stage_devices(problem.stage_devices(graph.tp)),
        max_stages(static_cast<int>(
            std::min<std::size_t>(chain.size(), static_cast<std::size_t>(problem.max_devices / stage_devices)))) {}

  // Devices of the stages after one with `remaining` stages to the end.
  std::uint64_t devices_after(int remaining) const {
    return static_cast<std::uint64_t>(stage_devices) * static_cast<std::uint64_t>(remaining - 1);
  }

  ChainTable chain;
  int stage_devices;
  int max_stages;
};

// Compat: the exact optimum of the artifact's evaluator over the artifact's
// plan space. Stage loads depend only on the stage and its position (the
// layout puts the stage with s stages to the end on devices [(s-1)a, sa)),
// so the suffix DP gives the least bottleneck behind each first stage; the
// first stage is enumerated because the all-reduce prices its parameters
// and, with replicas one pipeline (S*a devices) apart, the stage count. The
// loops run in the artifact's order (d, then the first stage's end, then S,
// lines 1165-1215) and keep the first of equal times, as it does.
void search_compat(const NestProblem& problem, const NestGraph& graph, Candidate& best) {
  const CompatModel model(problem);
  const GraphSearch search(problem, graph);
  const ArtifactStageTimes times(problem, graph, model.levels());
  const auto stage_devices = static_cast<std::uint64_t>(search.stage_devices);
  const int max_stages = search.max_stages;
  const std::size_t positions = times.size();
  if (max_stages < 1) return;
  // Levels of the boundaries before and after the stage with r stages to the end.
  std::vector<std::pair<int, int>> stage_levels(static_cast<std::size_t>(max_stages) + 1);
  for (int remaining = 1; remaining <= max_stages; ++remaining) {
    const std::uint64_t after = search.devices_after(remaining);
    stage_levels[static_cast<std::size_t>(remaining)] = {model.levels().boundary_level(after + stage_devices),
                                                         model.levels().boundary_level(after)};
  }
  const auto stage_load = [&](std::size_t first, std::size_t end, int remaining) {
    const auto [before, after] = stage_levels[static_cast<std::size_t>(remaining)];
    return model.stage_load(times, first, end, remaining, before, after);
  };
  // No tie-break on the suffix's parameters: only the first stage's count.
  const auto no_tie_break = [](std::size_t, std::size_t) { return std::uint64_t{0}; };
  SuffixTable table(positions, max_stages - 1);
  table.fill(stage_load, no_tie_break);
  // head[s][x]: bottleneck of s stages whose first stage is [0, x).
  std::vector<std::vector<double>> head(static_cast<std::size_t>(max_stages) + 1,
                                        std::vector<double>(positions + 1, kInfeasible));
  for (int stages = 1; stages <= max_stages; ++stages) {
    for (std::size_t end = 1; end <= positions; ++end) {
      const double rest = table.best(stages - 1, end);
      if (rest == kInfeasible) continue;
      const auto load = stage_load(0, end, stages);
      if (load) head[stages][end] = std::max(*load, rest);
    }
  }
  for (int dp = 1; dp <= max_data_parallel(problem); ++dp) {
    const int stages_here = std::min(max_stages, problem.max_devices / dp / search.stage_devices);
    if (stages_here < 1) break;
    for (std::size_t end = 1; end <= positions; ++end) {
      const double parameters = times.parameter_bytes(0, end);
      for (int stages = 1; stages <= stages_here; ++stages) {
        if (head[stages][end] == kInfeasible) continue;
        const double time =
            model.time_per_batch(head[stages][end], stages, dp, stage_devices * static_cast<std::uint64_t>(stages),
                                 parameters);
        if (time < best.time) {
          auto split = table.split(stages - 1, end);
          split.insert(split.begin(), {0, end});
          best = Candidate{time, plan_from_split(graph.tp, dp, search.stage_devices, split)};
        }
      }
    }
  }
}

// Corrected: per stage count s, the (bottleneck, largest stage parameters)
// trade-off is what matters: the time is (m + s - 1) * bottleneck plus the
// all-reduce of the largest stage. The DP without a limit gives the least
// bottleneck; the DP again with every stage's parameters capped at each
// smaller value a stage can take gives the rest of the trade-off, so the
// best of these splits per (s, d) is the optimum.
struct SplitChoice {
  double bottleneck;
  std::uint64_t largest;
  std::vector<std::pair<std::size_t, std::size_t>> split;
};

void search_corrected(const NestProblem& problem, const NestGraph& graph, Candidate& best) {
  const CorrectedModel model(problem);
  const GraphSearch search(problem, graph);
  const ChainTable& chain = search.chain;
  const int stage_devices = search.stage_devices;
  const int max_stages = search.max_stages;
  if (max_stages < 1) return;
  const std::size_t positions = chain.size();
  std::vector<std::vector<SplitChoice>> choices(static_cast<std::size_t>(max_stages) + 1);
  const auto solve_capped = [&](std::uint64_t cap) {
    SuffixTable table(positions, max_stages);
    table.fill(
        [&](std::size_t first, std::size_t end, int remaining) -> std::optional<double> {
          if (chain.parameter_bytes(first, end) > cap) return std::nullopt;
          return model.stage_load(chain, first, end, remaining, search.devices_after(remaining), stage_devices);
        },
        [&](std::size_t first, std::size_t end) { return chain.parameter_bytes(first, end); });
    return table;
  };
  const SuffixTable free = solve_capped(UINT64_MAX);
  std::uint64_t useful_cap = 0;
  for (int stages = 1; stages <= max_stages; ++stages) {
    if (free.best(stages, 0) == kInfeasible) continue;
    choices[stages].push_back(SplitChoice{free.best(stages, 0), free.largest_parameters(stages, 0), free.split(stages, 0)});
    useful_cap = std::max(useful_cap, free.largest_parameters(stages, 0));
  }
  std::vector<std::uint64_t> caps;
  for (std::size_t first = 0; first < positions; ++first) {
    for (std::size_t end = first + 1; end <= positions; ++end) {
      if (chain.parameter_bytes(first, end) < useful_cap) caps.push_back(chain.parameter_bytes(first, end));
    }
  }
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  for (std::uint64_t cap : caps) {
    const SuffixTable capped = solve_capped(cap);
    for (int stages = 1; stages <= max_stages; ++stages) {
      const double bottleneck_load = capped.best(stages, 0);
      if (bottleneck_load == kInfeasible || choices[stages].empty()) continue;
      const std::uint64_t largest = capped.largest_parameters(stages, 0);
      if (largest >= choices[stages].front().largest) continue;  // dominated by the free optimum
      choices[stages].push_back(SplitChoice{bottleneck_load, largest, capped.split(stages, 0)});
    }
  }
  for (int dp = 1; dp <= max_data_parallel(problem); ++dp) {
    const int stages_here = std::min(max_stages, problem.max_devices / dp / stage_devices);
    if (stages_here < 1) break;
    for (int stages = 1; stages <= stages_here; ++stages) {
      for (const auto& choice : choices[stages]) {
        const double time =
            model.time_per_batch(choice.bottleneck, stages, dp, stages * stage_devices, choice.largest);
        if (time < best.time) best = Candidate{time, plan_from_split(graph.tp, dp, stage_devices, choice.split)};
      }
    }
  }
}

std::optional<double> baseline_time(const NestProblem& problem, const NestBaseline& baseline, CostModelKind model) {
  const NestGraph& graph = graph_of(problem, baseline.t);
  const int stage_devices = problem.stage_devices(baseline.t);
  // "too many devices used" (line 1929-1931) makes the artifact's baseline
  // null; d above the micro-batches makes it stop altogether ("wrong
  // data-parallel degree", line 1915-1916), here null too.
  if (static_cast<std::uint64_t>(baseline.p) * stage_devices * baseline.d >
          static_cast<std::uint64_t>(problem.max_devices) ||
      baseline.d > max_data_parallel(problem)) {
    return std::nullopt;
  }
  if (model == CostModelKind::Corrected) {
    const ChainTable chain(graph);
    return corrected_time(problem, chain, honest_baseline_stages(baseline, chain.size(), stage_devices), baseline.d);
  }
  return compat_time(problem, graph, artifact_baseline_stages(baseline, graph.layers.size(), stage_devices),
                     baseline.d, true, nullptr);
}

}  // namespace

NestAnswer solve(const NestProblem& problem, CostModelKind model) {
  Candidate best;
  for (const auto& graph : problem.graphs) {
    if (model == CostModelKind::Compat) {
      search_compat(problem, graph, best);
    } else {
      search_corrected(problem, graph, best);
    }
  }
  if (best.time == kInfeasible) {
    throw std::invalid_argument(
        "maxMemoryPerDevice: no plan fits (every stage needs t*ep_degree*cp_degree <= maxDevices devices and must fit "
        "in memory)");
  }
  return NestAnswer{model, best.plan, best.time, evaluate_baselines(problem, model)};
}

std::optional<double> evaluate_plan(const NestProblem& problem, const NestPlan& plan, CostModelKind model,
                                    const NetworkSkeleton* skeleton) {
  const NestGraph& graph = graph_of(problem, plan.tp);
  const ChainTable chain(graph);
  check_plan_shape(plan, chain.size());
  if (devices_of(plan.stages) * static_cast<std::uint64_t>(plan.dp) > static_cast<std::uint64_t>(problem.max_devices)) {
    return std::nullopt;
  }
  if (plan.dp > max_data_parallel(problem)) return std::nullopt;
  return model == CostModelKind::Compat ? compat_time(problem, graph, plan.stages, plan.dp, false, skeleton)
                                        : corrected_time(problem, chain, plan.stages, plan.dp);
}

std::vector<BaselineResult> evaluate_baselines(const NestProblem& problem, CostModelKind model) {
  std::vector<BaselineResult> results;
  for (const auto& baseline : problem.baselines) {
    results.push_back(BaselineResult{baseline.name, baseline_time(problem, baseline, model)});
  }
  return results;
}

}  // namespace nestfast::compat
