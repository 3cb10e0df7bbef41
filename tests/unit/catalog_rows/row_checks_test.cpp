// The value checks of every catalog table read (io/catalog/row_checks.hpp):
// rows as a catalog job writes them pass, an edited value is refused in one
// line naming the file, table, row, member and value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"
#include "io/catalog/catalog_types.hpp"
#include "io/catalog/row_checks.hpp"

namespace nestfast::io {
namespace {

// A sweep point's row without a plan: degrees, times and texts stay 0 and "".
PlanRow point_row(const char* kind) {
  PlanRow row;
  set_fixed(row.model, "llama2-7b");
  set_fixed(row.cluster, "h100-superpod");
  row.gpus = 8;
  row.global_batch = 64;
  row.seq_len = 4096;
  set_fixed(row.kind, kind);
  set_fixed(row.optimizer, "adam");  // the search problem's choices are written even without a plan
  set_fixed(row.a2a, "fast");
  return row;
}

PlanRow feasible_plan() {
  PlanRow row = point_row("nest");
  row.feasible = 1;
  row.tp = 8;
  row.pp = row.dp = row.ep = row.etp = row.cp = row.micro_batch = row.vpp = 1;
  row.micro_batches = 8;
  row.zero_stage = 1;
  set_fixed(row.recompute, "full/2");
  set_fixed(row.recompute_modules, "core_attn");
  set_fixed(row.placement, "tp,ep,pp,dp");
  set_fixed(row.optimizer, "adam");
  set_fixed(row.a2a, "fast");
  set_fixed(row.framework, "megatron-core");
  set_fixed(row.attention, "flash");
  set_fixed(row.grad_reduce, "fp32");
  set_fixed(row.overlap, "all");
  set_fixed(row.megatron_args, "--tensor-model-parallel-size 8");
  row.iteration_time_s = 1.5;
  row.tokens_per_s = 174762.7;
  row.mfu_pct = 41;
  row.memory_peak_bytes = 40ull << 30;
  row.stage_count = 1;
  return row;
}

// The message of check_rows on `row` as row 3 of /plans, or "" when it passes.
template <typename Row>
std::string refusal(const Row& row, const char* table, RowTable type) {
  try {
    check_rows("cat.h5", table, type, &row, 1, 3);
    return "";
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
}

std::string plan_refusal(const PlanRow& row) { return refusal(row, "plans", RowTable::Plans); }

TEST(CatalogRowChecks, RowsAsAJobWritesThemPass) {
  EXPECT_EQ(plan_refusal(feasible_plan()), "");
  EXPECT_EQ(plan_refusal(point_row("mcmc")), "");

  StageRow stage;
  stage.devices = 8;
  stage.boundary_level = -1;
  set_fixed(stage.recompute, "selective");
  stage.forward_per_microbatch_s = 0.1;
  EXPECT_EQ(refusal(stage, "stages", RowTable::Stages), "");

  ValidationRow validation;
  set_fixed(validation.algo, "fast");
  set_fixed(validation.picked, "fast");
  validation.iterations = 5;
  validation.bytes_per_rank = 1 << 20;
  validation.servers = 2;
  validation.gpus_per_server = 4;
  validation.efficiency_pct = std::numeric_limits<double>::quiet_NaN();  // no bound
  EXPECT_EQ(refusal(validation, "validation/alltoallv", RowTable::Validation), "");
}

TEST(CatalogRowChecks, EditedValuesAreRefusedNamingRowMemberAndValue) {
  PlanRow row = feasible_plan();
  row.tp = 0;
  EXPECT_EQ(plan_refusal(row), "cat.h5: /plans row 3: tp = 0: is not >= 1 in a feasible plan (the catalog is damaged or "
                               "was edited)");
  row = feasible_plan();
  row.iteration_time_s = std::nan("");
  EXPECT_NE(plan_refusal(row).find("/plans row 3: iteration_time_s = nan: is not a finite value > 0"), std::string::npos);
  row = feasible_plan();
  row.iteration_time_s = -1;
  EXPECT_NE(plan_refusal(row).find("iteration_time_s = -1: is not a finite value > 0"), std::string::npos);
  row = feasible_plan();
  row.tokens_per_s = std::numeric_limits<double>::infinity();
  EXPECT_NE(plan_refusal(row).find("tokens_per_s = inf"), std::string::npos);
  row = feasible_plan();
  row.stage_count = 0;
  EXPECT_NE(plan_refusal(row).find("stage_count = 0"), std::string::npos);
  row = feasible_plan();
  set_fixed(row.kind, "nesT");
  EXPECT_NE(plan_refusal(row).find("kind = \"nesT\": is not a plan kind"), std::string::npos);
  row = feasible_plan();
  set_fixed(row.recompute, "full/0");
  EXPECT_NE(plan_refusal(row).find("recompute = \"full/0\""), std::string::npos);
  row = feasible_plan();
  set_fixed(row.framework, "");
  EXPECT_NE(plan_refusal(row).find("framework = \"\""), std::string::npos);
  row = feasible_plan();
  set_fixed(row.overlap, "grad,bogus");
  EXPECT_NE(plan_refusal(row).find("overlap = \"grad,bogus\": is not a list of overlaps"), std::string::npos);
  row = feasible_plan();
  set_fixed(row.recompute_modules, "core_attn,attention");
  EXPECT_NE(plan_refusal(row).find("recompute_modules = \"core_attn,attention\": is not a list of selective recompute"),
            std::string::npos);
  row = feasible_plan();
  set_fixed(row.grad_reduce, "fp16");
  EXPECT_NE(plan_refusal(row).find("grad_reduce = \"fp16\": is not a gradient dtype"), std::string::npos);
  row = feasible_plan();
  row.zero_stage = 4;
  EXPECT_NE(plan_refusal(row).find("zero_stage = 4"), std::string::npos);
  row = feasible_plan();
  row.feasible = 2;
  EXPECT_NE(plan_refusal(row).find("feasible = 2: is not 0 or 1"), std::string::npos);
  row = feasible_plan();
  row.mfu_pct = 150;
  EXPECT_NE(plan_refusal(row).find("mfu_pct = 150"), std::string::npos);
  row = feasible_plan();
  std::memset(row.model, 'x', sizeof row.model);  // no NUL left in the field
  EXPECT_NE(plan_refusal(row).find("model = \"xxxx"), std::string::npos);
  EXPECT_NE(plan_refusal(row).find("does not end in its field"), std::string::npos);

  PlanRow none = point_row("nest");  // without a plan a time must still be 0, not a price
  none.iteration_time_s = 2;
  EXPECT_NE(plan_refusal(none).find("iteration_time_s = 2: is not 0 in a row without a plan"), std::string::npos);

  StageRow stage;
  stage.devices = 1;
  stage.boundary_level = -2;
  set_fixed(stage.recompute, "none");
  EXPECT_NE(refusal(stage, "stages", RowTable::Stages).find("/stages row 3: boundary_level = -2"), std::string::npos);
  stage.boundary_level = 0;
  set_fixed(stage.recompute, "mixed");  // a plan's summary, never a stage's mode
  EXPECT_NE(refusal(stage, "stages", RowTable::Stages).find("recompute = \"mixed\""), std::string::npos);

  ValidationRow validation;
  set_fixed(validation.algo, "fast");
  set_fixed(validation.picked, "fast");
  validation.iterations = 1;
  validation.bytes_per_rank = 1;
  validation.servers = validation.gpus_per_server = 1;
  validation.time_avg_us = -3;
  EXPECT_NE(refusal(validation, "validation/alltoallv", RowTable::Validation).find("time_avg_us = -3"),
            std::string::npos);
}

TEST(CatalogRowChecks, TheFirstBadRowOfSeveralIsNamed) {
  PlanRow rows[3] = {feasible_plan(), feasible_plan(), feasible_plan()};
  rows[2].pp = -1;
  try {
    check_rows("cat.h5", "plans", RowTable::Plans, rows, 3, 10);
    FAIL() << "no error";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("/plans row 12: pp = -1"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace nestfast::io
