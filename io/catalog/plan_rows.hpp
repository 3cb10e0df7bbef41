#pragma once
// Plan records <-> catalog rows, field by field under the same names
// (solver/search/plan_record.hpp, catalog_rows.hpp), and the all-to-all
// results <-> /validation/alltoallv rows.
#include <vector>

#include "comm/exec/validation.hpp"
#include "io/catalog/catalog_rows.hpp"
#include "solver/search/plan_record.hpp"

namespace nestfast::io {

// The record's point_id (0 when it has none) goes into the row.
PlanEntry plan_entry(const search::PlanRecord& record);
search::PlanRecord plan_record(const PlanRow& row, const std::vector<StageRow>& stages);

ValidationRow validation_row(const comm::ValidationResult& result);
comm::ValidationResult validation_result(const ValidationRow& row);

}  // namespace nestfast::io
