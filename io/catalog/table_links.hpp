#pragma once
// The links between a catalog's tables, checked on every read: each /plans
// row's stages are the rows of /stages that follow the previous plans' (as
// the writer and the merge lay them out), as many as the plan has (pp * vpp,
// none without a plan), each pointing back at its plan and in pipeline order;
// no /stages row belongs to no plan; each /validation/alltoallv row names an
// existing plan. A catalog whose values each keep their rule (row_checks.hpp)
// but whose tables disagree (an edited plan_row or stage_count) is refused in
// one line naming the file, table, row, member and value, instead of printing
// a plan with another plan's stages.
#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"

namespace nestfast::io {

// Throws std::invalid_argument "PATH: /TABLE row N: MEMBER = VALUE: WHY".
void check_plan_stages(const std::string& path, const std::vector<PlanRow>& plans, const std::vector<StageRow>& stages);
void check_validation_plans(const std::string& path, const std::vector<ValidationRow>& validation,
                            std::uint64_t plan_rows);

}  // namespace nestfast::io
