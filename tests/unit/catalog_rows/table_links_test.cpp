// The links between a catalog's tables (io/catalog/table_links.hpp): tables
// as the writer lays them out pass; a stage that points at another plan or at
// none, a stage count that is not the plan's pp * vpp, an offset that skips or
// repeats stages, a validation row past /plans are refused in one line naming
// the file, table, row, member and value.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"
#include "io/catalog/table_links.hpp"

namespace nestfast::io {
namespace {

struct Tables {
  std::vector<PlanRow> plans;
  std::vector<StageRow> stages;
};

// Plans with pp = 2, 1 (infeasible: no stages) and 3, laid out as CatalogWriter::write_plans does.
Tables written_tables() {
  Tables tables;
  for (const int pp : {2, 0, 3}) {
    PlanRow plan;
    plan.feasible = pp > 0 ? 1 : 0;
    plan.pp = pp;
    plan.vpp = pp > 0 ? 1 : 0;
    plan.stage_offset = tables.stages.size();
    plan.stage_count = static_cast<std::uint64_t>(pp);
    for (int s = 0; s < pp; ++s) {
      StageRow stage;
      stage.plan_row = tables.plans.size();
      stage.stage = s;
      tables.stages.push_back(stage);
    }
    tables.plans.push_back(plan);
  }
  return tables;
}

std::string refusal(const Tables& tables) {
  try {
    check_plan_stages("cat.h5", tables.plans, tables.stages);
    return "";
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
}

TEST(CatalogTableLinks, TablesAsTheWriterLaysThemOutPass) {
  EXPECT_EQ(refusal(written_tables()), "");
  EXPECT_EQ(refusal(Tables{}), "");
  std::vector<ValidationRow> validation(2);
  validation[1].plan_row = 2;
  EXPECT_NO_THROW(check_validation_plans("cat.h5", validation, 3));
}

TEST(CatalogTableLinks, AStagePointingAtAnotherPlanOrNoneIsRefused) {
  Tables tables = written_tables();
  tables.stages[1].plan_row = 2;
  EXPECT_EQ(refusal(tables),
            "cat.h5: /stages row 1: plan_row = 2: is not /plans row 0, whose stages (rows 0 to 1) hold it (the "
            "catalog is damaged or was edited)");
  tables = written_tables();
  tables.stages[3].plan_row = 7;
  EXPECT_NE(refusal(tables).find("/stages row 3: plan_row = 7: is past /plans (3 rows), whose stages (rows 2 to 4)"),
            std::string::npos)
      << refusal(tables);
  tables = written_tables();
  tables.stages.push_back(tables.stages.back());  // a stage row after the last plan's
  EXPECT_NE(refusal(tables).find("/stages row 5: plan_row = 2: belongs to no plan (the stages of the 3 plans are "
                                 "rows 0 to 4 of 6)"),
            std::string::npos)
      << refusal(tables);
  tables = written_tables();
  tables.stages[4].stage = 1;
  EXPECT_NE(refusal(tables).find("/stages row 4: stage = 1: is not its place 2 among the stages of /plans row 2"),
            std::string::npos)
      << refusal(tables);
}

TEST(CatalogTableLinks, AStageCountOrOffsetThatDisagreesWithTheStagesIsRefused) {
  Tables tables = written_tables();
  tables.plans[0].stage_count = 3;  // one of the next plan's stages
  EXPECT_NE(refusal(tables).find("/plans row 0: stage_count = 3: is not pp * vpp = 2"), std::string::npos)
      << refusal(tables);
  tables = written_tables();
  tables.plans[0].pp = 1;
  tables.plans[0].vpp = 2;  // one pipeline rank of two chunks: two stages still
  EXPECT_EQ(refusal(tables), "");
  tables = written_tables();
  tables.plans[1].stage_count = 1;
  EXPECT_NE(refusal(tables).find("/plans row 1: stage_count = 1: is not 0 in a row without a plan"),
            std::string::npos)
      << refusal(tables);
  tables = written_tables();
  tables.plans[2].stage_offset = 0;  // the first plan's stages again
  EXPECT_NE(refusal(tables).find("/plans row 2: stage_offset = 0: is not /stages row 2, the row after the previous "
                                 "plans' stages"),
            std::string::npos)
      << refusal(tables);
  tables = written_tables();
  tables.plans[0].stage_offset = UINT64_MAX;  // merge read past its vector here once (SIGSEGV)
  EXPECT_NE(refusal(tables).find("/plans row 0: stage_offset = 18446744073709551615"), std::string::npos);
  tables = written_tables();
  tables.stages.pop_back();  // the last plan's third stage lost
  EXPECT_NE(refusal(tables).find("/plans row 2: stage_count = 3: runs past the end of /stages (4 rows) from row 2"),
            std::string::npos)
      << refusal(tables);
}

TEST(CatalogTableLinks, AValidationRowPastThePlansIsRefused) {
  std::vector<ValidationRow> validation(2);
  validation[1].plan_row = 3;
  try {
    check_validation_plans("cat.h5", validation, 3);
    FAIL() << "no error";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()),
              "cat.h5: /validation/alltoallv row 1: plan_row = 3: is past /plans (3 rows) (the catalog is damaged or "
              "was edited)");
  }
}

}  // namespace
}  // namespace nestfast::io
