#include "io/catalog/table_links.hpp"

#include <stdexcept>

namespace nestfast::io {
namespace {

std::invalid_argument damaged(const std::string& path, const std::string& table, std::uint64_t row,
                              const std::string& member, std::uint64_t value, const std::string& why) {
  return std::invalid_argument(path + ": /" + table + " row " + std::to_string(row) + ": " + member + " = " +
                               std::to_string(value) + ": " + why + " (the catalog is damaged or was edited)");
}

std::string rows_text(std::uint64_t first, std::uint64_t count) {
  return count == 0 ? "none" : "rows " + std::to_string(first) + " to " + std::to_string(first + count - 1);
}

}  // namespace

void check_plan_stages(const std::string& path, const std::vector<PlanRow>& plans, const std::vector<StageRow>& stages) {
  const std::uint64_t total = stages.size();
  std::uint64_t next = 0;  // the first /stages row after the previous plans' stages; never past `total`
  for (std::uint64_t p = 0; p < plans.size(); ++p) {
    const PlanRow& plan = plans[p];
    if (plan.stage_offset != next) {
      throw damaged(path, "plans", p, "stage_offset", plan.stage_offset,
                    "is not /stages row " + std::to_string(next) + ", the row after the previous plans' stages");
    }
    // pp and vpp are >= 1 in a feasible plan (row_checks.cpp), both int32: the product fits.
    const std::uint64_t expected =
        plan.feasible != 0 ? static_cast<std::uint64_t>(plan.pp) * static_cast<std::uint64_t>(plan.vpp) : 0;
    if (plan.stage_count != expected) {
      throw damaged(path, "plans", p, "stage_count", plan.stage_count,
                    plan.feasible != 0 ? "is not pp * vpp = " + std::to_string(expected)
                                       : "is not 0 in a row without a plan");
    }
    if (plan.stage_count > total - next) {
      throw damaged(path, "plans", p, "stage_count", plan.stage_count,
                    "runs past the end of /stages (" + std::to_string(total) + " rows) from row " +
                        std::to_string(next));
    }
    for (std::uint64_t s = next; s < next + plan.stage_count; ++s) {
      const StageRow& stage = stages[s];
      if (stage.plan_row != p) {
        throw damaged(path, "stages", s, "plan_row", stage.plan_row,
                      (stage.plan_row >= plans.size() ? "is past /plans (" + std::to_string(plans.size()) + " rows)"
                                                      : "is not /plans row " + std::to_string(p)) +
                          ", whose stages (" + rows_text(next, plan.stage_count) + ") hold it");
      }
      if (static_cast<std::uint64_t>(stage.stage) != s - next) {
        throw damaged(path, "stages", s, "stage", static_cast<std::uint64_t>(stage.stage),
                      "is not its place " + std::to_string(s - next) + " among the stages of /plans row " +
                          std::to_string(p));
      }
    }
    next += plan.stage_count;
  }
  if (next != total) {
    throw damaged(path, "stages", next, "plan_row", stages[next].plan_row,
                  "belongs to no plan (the stages of the " + std::to_string(plans.size()) + " plans are " +
                      rows_text(0, next) + " of " + std::to_string(total) + ")");
  }
}

void check_validation_plans(const std::string& path, const std::vector<ValidationRow>& validation,
                            std::uint64_t plan_rows) {
  for (std::uint64_t v = 0; v < validation.size(); ++v) {
    if (validation[v].plan_row >= plan_rows) {
      throw damaged(path, "validation/alltoallv", v, "plan_row", validation[v].plan_row,
                    "is past /plans (" + std::to_string(plan_rows) + " rows)");
    }
  }
}

}  // namespace nestfast::io
