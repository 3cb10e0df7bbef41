#pragma once
// A plan and its /plans row, both ways: what the catalog job writes for a
// plan (degrees, the recompute summary, the placement) and the plan a stored
// row and its /stages rows describe, for everything that reads a catalog
// back (query, the Megatron-LM line). One place, so the two directions
// cannot drift apart.
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"
#include "solver/search/execution.hpp"

namespace nestfast::io {

// Every stage's mode, or "mixed" when they differ ("none" without stages).
std::string recompute_summary(const Execution& plan);

// The row's degrees, recompute summary and placement order from `plan`.
void set_plan_degrees(PlanRow& row, const Execution& plan);

struct StoredPlan {
  Execution plan;
  // The catalog keeps one recompute summary per plan; for a "mixed" plan the
  // stages' own modes are unknown and every stage reads as full recompute
  // (the mode that fits wherever the plan fits).
  bool recompute_per_stage_unknown = false;
};

// The plan of a feasible row and its stages (layer ranges, first devices,
// boundary levels). The optimizer, all-to-all pricing and attention are not
// stored and keep Execution's defaults.
StoredPlan stored_plan(const PlanRow& row, const std::vector<StageRow>& stages);

}  // namespace nestfast::io
