#include "io/catalog/plan_rows.hpp"

#include <algorithm>

#include "solver/search/strategy_space.hpp"

namespace nestfast::io {

std::string recompute_summary(const Execution& plan) {
  if (plan.stages.empty()) return "none";
  const Recompute first = plan.stages.front().recompute;
  const bool uniform = std::all_of(plan.stages.begin(), plan.stages.end(),
                                   [&](const StagePlan& stage) { return stage.recompute == first; });
  return uniform ? to_string(first) : "mixed";
}

void set_plan_degrees(PlanRow& row, const Execution& plan) {
  row.tp = plan.tp;
  row.pp = plan.pp;
  row.dp = plan.dp;
  row.ep = plan.ep;
  row.cp = plan.cp;
  row.sp = plan.sp ? 1 : 0;
  row.mbs = plan.micro_batch;
  row.zero = plan.zero_stage;
  row.vpp = plan.vpp;
  set_fixed(row.recompute, recompute_summary(plan));
  set_fixed(row.placement_order, search::placement_to_string(plan.placement));
}

StoredPlan stored_plan(const PlanRow& row, const std::vector<StageRow>& stages) {
  StoredPlan out;
  Execution& plan = out.plan;
  plan.tp = row.tp;
  plan.pp = row.pp;
  plan.dp = row.dp;
  plan.ep = row.ep;
  plan.cp = row.cp;
  plan.sp = row.sp != 0;
  plan.micro_batch = row.mbs;
  plan.global_batch = row.global_batch;
  plan.seq_len = row.seq_len;
  plan.zero_stage = row.zero;
  plan.vpp = row.vpp;
  const std::string order = get_fixed(row.placement_order);
  if (!order.empty()) plan.placement = search::parse_placement(order, "placement_order");
  const std::string recompute = get_fixed(row.recompute);
  out.recompute_per_stage_unknown = recompute == "mixed";
  const Recompute mode = out.recompute_per_stage_unknown ? Recompute::Full : parse_recompute(recompute, "recompute");
  for (const StageRow& stored : stages) {
    StagePlan stage;
    stage.first_layer = stored.first_layer;
    stage.last_layer = stored.last_layer;
    stage.recompute = mode;
    stage.first_device = stored.first_device;
    stage.boundary_level = stored.boundary_level;
    plan.stages.push_back(stage);
  }
  return out;
}

}  // namespace nestfast::io
