#pragma once
// Stored catalog plans for people: the stage table, the alternatives and
// baselines of a sweep point, a Megatron-LM argument line, and JSON.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"

namespace nestfast::jobs {

// One sweep point's rows as stored: nest rank 0..k-1 and the baselines.
struct StoredPoint {
  std::vector<io::PlanRow> rows;
  std::vector<io::StageRow> best_stages;  // stages of the best nest plan (empty when infeasible)
  std::uint64_t hbm_bytes = 0;            // per GPU, 0 when unknown
};

// Megatron-LM arguments of a plan (the stages give the layer split).
std::string megatron_arguments(const io::PlanRow& plan, const std::vector<io::StageRow>& stages);

// The full text of one point: header, stage table, alternatives, baselines, Megatron-LM line.
std::string point_text(const StoredPoint& point);
nlohmann::json point_json(const StoredPoint& point);

// A compact table, one line per sweep point (best plan, speed-up over manual).
std::string summary_table(const std::vector<io::PlanEntry>& plans);
std::string validation_table(const std::vector<io::ValidationRow>& rows);

}  // namespace nestfast::jobs
