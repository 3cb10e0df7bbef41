#pragma once
// Plan records as JSON: the one spelling `solve --json`, `query --json` and
// `evaluate --json` print, and what `evaluate --plan FILE.json` reads back.
// The keys are search::PlanRecord's field names (units in the names), the
// member names of the catalog's /plans and /stages.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "solver/search/plan_record.hpp"

namespace nestfast::io {

nlohmann::json to_json(const search::PlanRecord& record);

// One record object (as to_json writes it). Reads what pricing needs and the
// printed price; std::invalid_argument naming `source` and the key path on a
// missing key, a wrong type or an unknown name.
search::PlanRecord plan_record_from_json(const nlohmann::json& object, const std::string& source,
                                         const std::string& path);

// Every plan record in a document that solve, query or evaluate printed: a
// record, an object with "plans", or an array of those. Each comes with its
// key path ("plans[2]", "[0].plans[1]").
struct FoundRecord {
  std::string path;
  search::PlanRecord record;
};
std::vector<FoundRecord> plan_records_in(const nlohmann::json& document, const std::string& source);

}  // namespace nestfast::io
