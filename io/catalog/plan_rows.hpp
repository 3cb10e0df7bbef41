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

// The row's degrees, recompute summary, placement order, framework,
// attention and overlaps from `plan`.
void set_plan_degrees(PlanRow& row, const Execution& plan);

// Stage `index` of a plan with `pp` pipeline ranks: its layers, devices,
// boundary level, pipeline rank and recompute (mode and block layers).
void set_stage_plan(StageRow& row, const StagePlan& stage, int index, int pp);

struct StoredPlan {
  Execution plan;
};

// The plan of a feasible row and its stages (layer ranges, recompute mode
// and block layers per stage, first devices, boundary levels), with the
// row's framework, attention and overlaps. The optimizer and all-to-all pricing are
// not stored and keep Execution's defaults.
StoredPlan stored_plan(const PlanRow& row, const std::vector<StageRow>& stages);

}  // namespace nestfast::io
