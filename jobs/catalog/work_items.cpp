#include "jobs/catalog/work_items.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace nestfast::jobs {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double encode_stage(const StagePlan& stage) {
  return static_cast<double>(stage.last_layer) * 4.0 + static_cast<double>(static_cast<int>(stage.recompute));
}

// Stages stored as last_layer * 4 + recompute; first layers follow from the previous stage.
std::vector<StagePlan> decode_stages(std::span<const double> values, std::size_t count) {
  if (count > values.size()) throw std::runtime_error("checkpoint: a stage count exceeds its slots");
  std::vector<StagePlan> stages(count);
  int next_first = 0;
  for (std::size_t s = 0; s < count; ++s) {
    const auto code = static_cast<long long>(values[s]);
    stages[s].first_layer = next_first;
    stages[s].last_layer = static_cast<int>(code / 4);
    stages[s].recompute = static_cast<Recompute>(code % 4);
    next_first = stages[s].last_layer + 1;
  }
  return stages;
}

void encode_stages(const std::vector<StagePlan>& stages, std::span<double> values) {
  if (stages.size() > values.size()) throw std::logic_error("a plan has more stages than its checkpoint slots");
  for (std::size_t s = 0; s < stages.size(); ++s) values[s] = encode_stage(stages[s]);
}

std::size_t max_stages(const ModelSpec& model) { return static_cast<std::size_t>(model.num_layers) + 2; }

}  // namespace

WorkLayout::WorkLayout(const JobWork& work) : baselines_(!work.bundle.job.search.baselines.empty()) {
  point_first_.push_back(0);
  value_offset_.push_back(0);
  for (const PointWork& point : work.points) {
    for (const auto& instance : point.instances) {
      value_offset_.push_back(value_offset_.back() + instance_values(instance));
    }
    point_first_.push_back(point_first_.back() + point.instances.size());
  }
  instance_items_ = point_first_.back();
  if (baselines_) {
    const std::size_t names = work.bundle.job.search.baselines.size();
    for (const PointWork& point : work.points) {
      value_offset_.push_back(value_offset_.back() + baseline_values(point.problem.model, names));
    }
  }
}

std::size_t WorkLayout::point_of(std::uint64_t item) const {
  if (item >= instance_items_) return static_cast<std::size_t>(item - instance_items_);
  const auto it = std::upper_bound(point_first_.begin(), point_first_.end(), item);
  return static_cast<std::size_t>(it - point_first_.begin()) - 1;
}

std::size_t instance_values(const search::DpInstance& instance) {
  return kInstanceHeader + static_cast<std::size_t>(instance.pp) * static_cast<std::size_t>(instance.vpp);
}

void encode_instance(const search::InstanceResult& result, std::span<double> values) {
  std::fill(values.begin(), values.end(), 0.0);
  values[0] = result.feasible ? 1.0 : 0.0;
  values[1] = result.feasible ? result.iteration_time_s : kInfinity;
  const search::SearchStats& stats = result.stats;
  const std::uint64_t counts[] = {stats.instances,     stats.feasible_instances, stats.dp_runs,
                                  stats.states,        stats.transitions,        stats.pruned_memory,
                                  stats.pruned_params, stats.pruned_bound,       stats.plans_evaluated};
  for (std::size_t i = 0; i < 9; ++i) values[2 + i] = static_cast<double>(counts[i]);
  const std::vector<StagePlan>& stages = result.feasible ? result.plan.stages : std::vector<StagePlan>{};
  values[11] = static_cast<double>(stages.size());
  encode_stages(stages, values.subspan(kInstanceHeader));
}

DecodedInstance decode_instance(std::span<const double> values) {
  DecodedInstance decoded;
  decoded.feasible = values[0] != 0.0;
  decoded.iteration_time_s = values[1];
  std::uint64_t* counts[] = {&decoded.stats.instances,     &decoded.stats.feasible_instances, &decoded.stats.dp_runs,
                             &decoded.stats.states,        &decoded.stats.transitions,        &decoded.stats.pruned_memory,
                             &decoded.stats.pruned_params, &decoded.stats.pruned_bound,       &decoded.stats.plans_evaluated};
  for (std::size_t i = 0; i < 9; ++i) *counts[i] = static_cast<std::uint64_t>(values[2 + i]);
  decoded.stages = decode_stages(values.subspan(kInstanceHeader), static_cast<std::size_t>(values[11]));
  return decoded;
}

std::size_t baseline_values(const ModelSpec& model, std::size_t baselines) {
  return baselines * (kBaselineHeader + max_stages(model));
}

void encode_baselines(const std::vector<search::BaselineResult>& results, const std::vector<std::string>& names,
                      const ModelSpec& model, std::span<double> values) {
  std::fill(values.begin(), values.end(), 0.0);
  const std::size_t stride = kBaselineHeader + max_stages(model);
  for (std::size_t b = 0; b < names.size(); ++b) {
    std::span<double> slot = values.subspan(b * stride, stride);
    const auto found = std::find_if(results.begin(), results.end(), [&](const auto& r) { return r.name == names[b]; });
    if (found == results.end()) {
      slot[1] = kInfinity;
      continue;
    }
    const Execution& plan = found->plan;
    slot[0] = found->feasible ? 1.0 : 0.0;
    slot[1] = found->feasible ? found->iteration_time_s : kInfinity;
    slot[2] = static_cast<double>(found->plans_evaluated);
    const double scalars[] = {static_cast<double>(plan.tp),           static_cast<double>(plan.cp),
                              static_cast<double>(plan.ep),           static_cast<double>(plan.pp),
                              static_cast<double>(plan.dp),           plan.sp ? 1.0 : 0.0,
                              static_cast<double>(plan.micro_batch),  static_cast<double>(plan.global_batch),
                              static_cast<double>(plan.seq_len),      static_cast<double>(plan.zero_stage),
                              static_cast<double>(plan.vpp),          static_cast<double>(static_cast<int>(plan.optimizer)),
                              static_cast<double>(static_cast<int>(plan.a2a)), plan.expert_imbalance};
    std::copy(std::begin(scalars), std::end(scalars), slot.begin() + 3);
    if (plan.placement.size() != kParallelDims) throw std::logic_error("a baseline plan has an incomplete placement");
    for (std::size_t d = 0; d < kParallelDims; ++d) slot[17 + d] = static_cast<double>(static_cast<int>(plan.placement[d]));
    slot[22] = static_cast<double>(plan.stages.size());
    encode_stages(plan.stages, slot.subspan(kBaselineHeader));
  }
}

std::vector<search::BaselineResult> decode_baselines(std::span<const double> values,
                                                     const std::vector<std::string>& names) {
  std::vector<search::BaselineResult> results;
  const std::size_t stride = values.size() / std::max<std::size_t>(names.size(), 1);
  for (std::size_t b = 0; b < names.size(); ++b) {
    const std::span<const double> slot = values.subspan(b * stride, stride);
    search::BaselineResult result;
    result.name = names[b];
    result.feasible = slot[0] != 0.0;
    result.iteration_time_s = slot[1];
    result.plans_evaluated = static_cast<std::uint64_t>(slot[2]);
    Execution& plan = result.plan;
    plan.tp = static_cast<int>(slot[3]);
    plan.cp = static_cast<int>(slot[4]);
    plan.ep = static_cast<int>(slot[5]);
    plan.pp = static_cast<int>(slot[6]);
    plan.dp = static_cast<int>(slot[7]);
    plan.sp = slot[8] != 0.0;
    plan.micro_batch = static_cast<int>(slot[9]);
    plan.global_batch = static_cast<int>(slot[10]);
    plan.seq_len = static_cast<int>(slot[11]);
    plan.zero_stage = static_cast<int>(slot[12]);
    plan.vpp = static_cast<int>(slot[13]);
    plan.optimizer = static_cast<Optimizer>(static_cast<int>(slot[14]));
    plan.a2a = static_cast<AllToAllAlgorithm>(static_cast<int>(slot[15]));
    plan.expert_imbalance = slot[16];
    for (std::size_t d = 0; d < kParallelDims; ++d) plan.placement[d] = static_cast<ParallelDim>(static_cast<int>(slot[17 + d]));
    plan.stages = decode_stages(slot.subspan(kBaselineHeader), static_cast<std::size_t>(slot[22]));
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace nestfast::jobs
