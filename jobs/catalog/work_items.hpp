#pragma once
// The work items of a catalog job and where their results go in
// /checkpoint/values.
//
// Items are numbered point-major: first every DP instance of point 0, then of
// point 1, ...; after all instances, one baseline item per point (when the job
// asks for baselines; they need the point's DP statistics, so they run in a
// second phase). Each item owns a fixed range of values, known from the
// enumeration alone, so every rank (and every later resume) agrees on it.
//
// An instance item's values: [feasible, iteration_time_s, 9 search stats,
// stage count, then per stage last_layer * 4 + recompute]. That is enough to
// rebuild the plan exactly (execution_skeleton + stages, priced again by
// evaluate_plan), so a finished item is never solved again.
// A baseline item's values: per requested baseline, [feasible,
// iteration_time_s, plans_evaluated, the Execution's scalars and placement,
// stage count, stages as above], padded to the model's most stages.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "jobs/catalog/work_points.hpp"
#include "solver/search/solve.hpp"

namespace nestfast::jobs {

class WorkLayout {
 public:
  explicit WorkLayout(const JobWork& work);

  std::uint64_t instance_items() const { return instance_items_; }
  std::uint64_t items() const { return value_offset_.size() - 1; }
  std::uint64_t values() const { return value_offset_.back(); }
  bool has_baselines() const { return baselines_; }

  // Instance items of point p (local index into JobWork::points): [first, last).
  std::uint64_t first_instance_item(std::size_t point) const { return point_first_[point]; }
  std::uint64_t end_instance_item(std::size_t point) const { return point_first_[point + 1]; }
  std::uint64_t baseline_item(std::size_t point) const { return instance_items_ + point; }
  std::size_t point_of(std::uint64_t item) const;

  std::uint64_t value_offset(std::uint64_t item) const { return value_offset_[item]; }
  std::uint64_t value_count(std::uint64_t item) const { return value_offset_[item + 1] - value_offset_[item]; }

 private:
  std::uint64_t instance_items_ = 0;
  bool baselines_ = false;
  std::vector<std::uint64_t> point_first_;   // points + 1
  std::vector<std::uint64_t> value_offset_;  // items + 1
};

inline constexpr std::size_t kInstanceHeader = 12;
std::size_t instance_values(const search::DpInstance& instance);
void encode_instance(const search::InstanceResult& result, std::span<double> values);

struct DecodedInstance {
  bool feasible = false;
  double iteration_time_s = 0;
  search::SearchStats stats;
  std::vector<StagePlan> stages;  // first/last layer and recompute; derived fields not yet filled
};
DecodedInstance decode_instance(std::span<const double> values);

inline constexpr std::size_t kBaselineHeader = 26;
std::size_t baseline_values(const ModelSpec& model, std::size_t baselines);
// `names` are the job's baselines in order; a baseline the search did not return is stored infeasible.
void encode_baselines(const std::vector<search::BaselineResult>& results, const std::vector<std::string>& names,
                      const ModelSpec& model, std::span<double> values);
std::vector<search::BaselineResult> decode_baselines(std::span<const double> values,
                                                     const std::vector<std::string>& names);

}  // namespace nestfast::jobs
