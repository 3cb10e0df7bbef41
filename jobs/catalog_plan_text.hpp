#pragma once
// Stored catalog plans for people: the stage table, the alternatives and
// baselines of a sweep point, its Megatron-LM line, and JSON.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"
#include "jobs/megatron_text.hpp"
#include "solver/model/model_spec.hpp"

namespace nestfast::jobs {

// One sweep point's rows as stored: nest rank 0..k-1 and the baselines.
struct StoredPoint {
  std::vector<io::PlanRow> rows;
  std::vector<io::StageRow> best_stages;  // stages of the best nest plan (empty when infeasible)
  ModelSpec model;                        // the stored model (with a feasible best plan)
  std::uint64_t hbm_bytes = 0;            // per GPU, 0 when unknown
};

// The Megatron-LM launch stored with `plan` (a row of `point` whose stages are
// point.best_stages): the line and environment solve printed for it, and the
// emitter's notes for the stored plan.
MegatronLaunchText stored_launch(const StoredPoint& point, const io::PlanRow& plan);

// The full text of one point: header, stage table, alternatives, baselines, Megatron-LM line.
std::string point_text(const StoredPoint& point);
nlohmann::json point_json(const StoredPoint& point);

// A compact table, one line per sweep point (best plan, speed-up over manual).
std::string summary_table(const std::vector<io::PlanEntry>& plans);
std::string validation_table(const std::vector<io::ValidationRow>& rows);

}  // namespace nestfast::jobs
