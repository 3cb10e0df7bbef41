#include "jobs/catalog/work_items.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "comm/plan/seeded_hash.hpp"

namespace nestfast::jobs {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// An item's last value is a checksum of the others (52 bits, exact in a
// double): a checkpoint damaged or edited since is refused on resume,
// never decoded into a different plan.
double checksum_of(std::span<const double> values) {
  comm::Fnv1a64 hash;
  for (const double value : values) hash.add_word(std::bit_cast<std::uint64_t>(value));
  return static_cast<double>(hash.value() >> 12);
}

void seal(std::span<double> values) { values.back() = checksum_of(values.first(values.size() - 1)); }

[[noreturn]] void damaged(const std::string& what) {
  throw std::runtime_error("the checkpoint is damaged (" + what + "); rerun with --force to start over");
}

std::span<const double> unsealed(std::span<const double> values) {
  if (values.empty() || values.back() != checksum_of(values.first(values.size() - 1))) {
    damaged("an item's checksum does not match its values");
  }
  return values.first(values.size() - 1);
}

// A stored integer: finite, integral and in [min, max].
long long stored_integer(double value, long long min, long long max, const char* what) {
  if (!(value >= static_cast<double>(min) && value <= static_cast<double>(max)) || value != std::floor(value)) {
    damaged(std::string(what) + " out of range");
  }
  return static_cast<long long>(value);
}

// Chain indices stay below this (models have far fewer layers).
constexpr double kLayerRange = 1 << 20;

double encode_stage(const StagePlan& stage) {
  return (static_cast<double>(stage.recompute_layers) * kLayerRange + static_cast<double>(stage.last_layer)) * 4.0 +
         static_cast<double>(static_cast<int>(stage.recompute));
}

// Stages stored as (recompute_layers * 2^20 + last_layer) * 4 + recompute
// (exact in a double); first layers follow from the previous stage.
std::vector<StagePlan> decode_stages(std::span<const double> values, std::size_t count) {
  if (count > values.size()) damaged("a stage count exceeds its slots");
  std::vector<StagePlan> stages(count);
  int next_first = 0;
  for (std::size_t s = 0; s < count; ++s) {
    const auto range = static_cast<long long>(kLayerRange);
    const long long code = stored_integer(values[s], 0, 4 * range * range - 1, "a stage");
    if (code / 4 % range < next_first || code % 4 > static_cast<int>(Recompute::Full)) {
      damaged("a stage's layers or recompute");
    }
    stages[s].first_layer = next_first;
    stages[s].last_layer = static_cast<int>(code / 4 % range);
    stages[s].recompute_layers = static_cast<int>(code / 4 / range);
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
  return kInstanceHeader + static_cast<std::size_t>(instance.pp) * static_cast<std::size_t>(instance.vpp) + 1;
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
  encode_stages(stages, values.subspan(kInstanceHeader, values.size() - kInstanceHeader - 1));
  seal(values);
}

DecodedInstance decode_instance(std::span<const double> sealed) {
  const std::span<const double> values = unsealed(sealed);
  if (values.size() < kInstanceHeader) damaged("an instance item is too short");
  DecodedInstance decoded;
  decoded.feasible = stored_integer(values[0], 0, 1, "a feasible flag") != 0;
  decoded.iteration_time_s = values[1];
  if (decoded.feasible && !(std::isfinite(values[1]) && values[1] > 0)) damaged("an iteration time");
  std::uint64_t* counts[] = {&decoded.stats.instances,     &decoded.stats.feasible_instances, &decoded.stats.dp_runs,
                             &decoded.stats.states,        &decoded.stats.transitions,        &decoded.stats.pruned_memory,
                             &decoded.stats.pruned_params, &decoded.stats.pruned_bound,       &decoded.stats.plans_evaluated};
  for (std::size_t i = 0; i < 9; ++i) {
    *counts[i] = static_cast<std::uint64_t>(stored_integer(values[2 + i], 0, 1LL << 53, "a search statistic"));
  }
  const auto stages = static_cast<std::size_t>(stored_integer(values[11], 0, 1LL << 20, "a stage count"));
  decoded.stages = decode_stages(values.subspan(kInstanceHeader), stages);
  return decoded;
}

std::size_t baseline_values(const ModelSpec& model, std::size_t baselines) {
  return baselines * (kBaselineHeader + max_stages(model)) + 1;
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
    slot[23] = static_cast<double>(static_cast<int>(plan.framework));  // under nest a baseline may be a megatron-core plan
    slot[24] = static_cast<double>(plan.expert_tp);                    // 0 = tp, 1 = whole experts (megatron-core)
    slot[25] = static_cast<double>(plan.recompute_modules);            // what selective stages checkpoint
    encode_stages(plan.stages, slot.subspan(kBaselineHeader));
  }
  seal(values);
}

std::vector<search::BaselineResult> decode_baselines(std::span<const double> sealed,
                                                     const std::vector<std::string>& names) {
  const std::span<const double> values = unsealed(sealed);
  std::vector<search::BaselineResult> results;
  const std::size_t stride = values.size() / std::max<std::size_t>(names.size(), 1);
  if (stride < kBaselineHeader) damaged("a baseline item is too short");
  for (std::size_t b = 0; b < names.size(); ++b) {
    const std::span<const double> slot = values.subspan(b * stride, stride);
    search::BaselineResult result;
    result.name = names[b];
    const auto integer = [&](std::size_t index, long long max) {
      return static_cast<int>(stored_integer(slot[index], 0, max, "a baseline's plan"));
    };
    result.feasible = integer(0, 1) != 0;
    result.iteration_time_s = slot[1];
    if (result.feasible && !(std::isfinite(slot[1]) && slot[1] > 0)) damaged("a baseline's iteration time");
    result.plans_evaluated = static_cast<std::uint64_t>(stored_integer(slot[2], 0, 1LL << 53, "a baseline's count"));
    Execution& plan = result.plan;
    constexpr long long kMost = std::numeric_limits<int>::max();
    plan.tp = integer(3, kMost);
    plan.cp = integer(4, kMost);
    plan.ep = integer(5, kMost);
    plan.pp = integer(6, kMost);
    plan.dp = integer(7, kMost);
    plan.sp = integer(8, 1) != 0;
    plan.micro_batch = integer(9, kMost);
    plan.global_batch = integer(10, kMost);
    plan.seq_len = integer(11, kMost);
    plan.zero_stage = integer(12, 3);
    plan.vpp = integer(13, kMost);
    plan.optimizer = static_cast<Optimizer>(integer(14, static_cast<int>(Optimizer::Sgd)));
    plan.a2a = static_cast<AllToAllAlgorithm>(integer(15, static_cast<int>(AllToAllAlgorithm::DeepEp)));
    plan.expert_imbalance = slot[16];
    if (!std::isfinite(slot[16])) damaged("a baseline's expert imbalance");
    for (std::size_t d = 0; d < kParallelDims; ++d) {
      plan.placement[d] = static_cast<ParallelDim>(integer(17 + d, static_cast<int>(kParallelDims) - 1));
    }
    plan.stages = decode_stages(slot.subspan(kBaselineHeader),
                                static_cast<std::size_t>(stored_integer(slot[22], 0, 1LL << 20, "a stage count")));
    plan.framework = static_cast<Framework>(
        integer(23, std::max(static_cast<int>(Framework::MegatronCore), static_cast<int>(Framework::Nest))));
    plan.expert_tp = integer(24, 1);
    plan.recompute_modules = static_cast<RecomputeModules>(integer(25, (1 << kRecomputeModuleCount) - 1));
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace nestfast::jobs
