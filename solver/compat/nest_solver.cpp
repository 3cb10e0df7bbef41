#include "solver/compat/nest_solver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "solver/compat/baseline_blocks.hpp"
#include "solver/compat/chain_table.hpp"
#include "solver/compat/compat_model.hpp"
#include "solver/compat/corrected_model.hpp"
#include "solver/compat/suffix_dp.hpp"

namespace nestfast::compat {

namespace {

constexpr double kInfeasible = SuffixTable::kInfeasible;

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

std::optional<double> compat_time(const NestProblem& problem, const ChainTable& chain,
                                  const std::vector<NestStage>& stages, int dp) {
  const CompatModel model(problem);
  const auto worst = bottleneck(stages, [&](const NestStage& stage, int remaining, std::uint64_t devices_after) {
    return model.stage_load(chain, stage.first, stage.end, remaining, devices_after);
  });
  if (!worst) return std::nullopt;
  const auto& first = stages.front();
  return model.time_per_batch(*worst, static_cast<int>(stages.size()), dp,
                              chain.parameter_bytes(first.first, first.end));
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

// Compat: the first stage is enumerated explicitly because the all-reduce
// prices its parameters; the rest is the suffix DP's best split.
void search_compat(const NestProblem& problem, const NestGraph& graph, Candidate& best) {
  const CompatModel model(problem);
  const GraphSearch search(problem, graph);
  const ChainTable& chain = search.chain;
  const int stage_devices = search.stage_devices;
  const int max_stages = search.max_stages;
  const std::size_t positions = chain.size();
  if (max_stages < 1) return;
  const auto stage_load = [&](std::size_t first, std::size_t end, int remaining) {
    return model.stage_load(chain, first, end, remaining, search.devices_after(remaining));
  };
  // No tie-break on the suffix's parameters: only the first stage's count
  // here, and without one the splits are the artifact's own.
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
  std::vector<double> allreduce(positions + 1);
  for (int dp = 1; dp <= max_data_parallel(problem); ++dp) {
    const int stages_here = std::min(max_stages, problem.max_devices / dp / stage_devices);
    if (stages_here < 1) break;
    const int micro_batches = model.micro_batches(dp);
    for (std::size_t end = 1; end <= positions; ++end) allreduce[end] = model.allreduce(dp, chain.parameter_bytes(0, end));
    for (int stages = 1; stages <= stages_here; ++stages) {
      for (std::size_t end = 1; end <= positions; ++end) {
        if (head[stages][end] == kInfeasible) continue;
        const double time = head[stages][end] * (micro_batches + stages - 1) + allreduce[end];
        if (time < best.time) {
          auto split = table.split(stages - 1, end);
          split.insert(split.begin(), {0, end});
          best = Candidate{time, plan_from_split(graph.tp, dp, stage_devices, split)};
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
  const ChainTable chain(graph);
  const int stage_devices = problem.stage_devices(baseline.t);
  if (static_cast<std::uint64_t>(baseline.p) * stage_devices * baseline.d >
      static_cast<std::uint64_t>(problem.max_devices)) {
    return std::nullopt;
  }
  if (model == CostModelKind::Corrected) {
    return corrected_time(problem, chain, honest_baseline_stages(baseline, chain.size(), stage_devices), baseline.d);
  }
  // The artifact's evaluator: stages reversed (the last block is costed as
  // stage 1), only the chain edge between neighbouring blocks is priced, and
  // memory is not checked (no reference baseline was rejected for memory).
  auto blocks = artifact_baseline_stages(baseline, chain.size(), stage_devices);
  std::reverse(blocks.begin(), blocks.end());
  const CompatModel compat(problem);
  const LevelMap& levels = compat.levels();
  const int count = static_cast<int>(blocks.size());
  const auto price = [&](int level, std::uint64_t bytes) {
    const double data = static_cast<double>(bytes);
    if (level == 0) return data / levels.clipped_bandwidth(0) + levels.latency(0);
    return 2.0 * (data / levels.clipped_bandwidth(level) + levels.latency(level));
  };
  double worst = 0.0;
  for (int index = 0; index < count; ++index) {
    const auto& block = blocks[index];
    const bool last = index == count - 1;
    const bool recomputes = problem.recompute && !last;
    const double bw = chain.bw_ms(block.first, block.end);
    double load = chain.fw_ms(block.first, block.end) + bw + (recomputes ? bw : 0.0);
    const auto devices_through = static_cast<std::uint64_t>(stage_devices) * static_cast<std::uint64_t>(index + 1);
    if (index + 1 < count) load += price(levels.boundary_level(devices_through), chain.chain_edge_bytes(block.first));
    if (!recomputes && index > 0) {
      load += price(levels.boundary_level(devices_through - stage_devices), chain.chain_edge_bytes(block.end));
    }
    worst = std::max(worst, load);
  }
  const auto& first = blocks.front();
  return compat.time_per_batch(worst, count, baseline.d, chain.parameter_bytes(first.first, first.end));
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

std::optional<double> evaluate_plan(const NestProblem& problem, const NestPlan& plan, CostModelKind model) {
  const NestGraph& graph = graph_of(problem, plan.tp);
  const ChainTable chain(graph);
  check_plan_shape(plan, chain.size());
  if (devices_of(plan.stages) * static_cast<std::uint64_t>(plan.dp) > static_cast<std::uint64_t>(problem.max_devices)) {
    return std::nullopt;
  }
  return model == CostModelKind::Compat ? compat_time(problem, chain, plan.stages, plan.dp)
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
