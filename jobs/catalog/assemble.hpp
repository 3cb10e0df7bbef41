#pragma once
// From a sweep point's finished work items to its catalog rows: NEST's top-k
// (by iteration time, ties to the lower instance ordinal, as search::reduce
// orders them) and the baselines, each plan priced again by evaluate_plan
// from its stored stages. The rows depend only on the items' results, never
// on which rank computed them or when.
#include <optional>
#include <string>
#include <vector>

#include "comm/exec/validation.hpp"
#include "io/catalog/catalog_rows.hpp"
#include "jobs/catalog/work_items.hpp"
#include "jobs/catalog/work_points.hpp"

namespace nestfast::jobs {

struct AssembledPoint {
  std::vector<io::PlanEntry> plans;  // nest rank 0..k-1 (or one infeasible row), then the baselines in job order
  // The all-to-all of the best plan, for the validation phase (plan_row relative to `plans`).
  std::optional<comm::ValidationRequest> best_all_to_all;
};

AssembledPoint assemble_point(const PointWork& point, const std::vector<DecodedInstance>& instances,
                              const std::vector<search::BaselineResult>& baselines, int top_k);

// A decoded instance's plan as a complete Execution (degrees from the instance, stages from the checkpoint).
Execution rebuild_instance_plan(const PointWork& point, std::size_t instance, const DecodedInstance& decoded);

}  // namespace nestfast::jobs
