#include "io/catalog/plan_rows.hpp"

#include <algorithm>

#include "solver/search/strategy_space.hpp"

namespace nestfast::io {

std::string recompute_summary(const Execution& plan) {
  if (plan.stages.empty()) return "none";
  const Recompute first = plan.stages.front().recompute;
  const bool uniform = std::all_of(plan.stages.begin(), plan.stages.end(),
                                   [&](const StagePlan& stage) { return stage.recompute == first; });
  if (!uniform) return "mixed";
  const int layers = plan.stages.front().recompute_layers;
  return first == Recompute::Full && layers > 0 ? "full/" + std::to_string(layers) : to_string(first);
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
  set_fixed(row.framework, to_string(plan.framework));
  set_fixed(row.attention, to_string(plan.attention));
  set_fixed(row.overlap, to_string(plan.overlap));
}

void set_stage_plan(StageRow& row, const StagePlan& stage, int index, int pp) {
  row.stage = index;
  row.first_layer = stage.first_layer;
  row.last_layer = stage.last_layer;
  row.first_device = stage.first_device;
  row.boundary_level = stage.boundary_level;
  row.pipeline_rank = index % pp;
  row.recompute_layers = stage.recompute_layers;
  set_fixed(row.recompute, to_string(stage.recompute));
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
  plan.framework = parse_framework(get_fixed(row.framework), "framework");
  plan.attention = parse_attention(get_fixed(row.attention), "attention");
  plan.overlap = parse_overlap_text(get_fixed(row.overlap), "overlap");
  for (const StageRow& stored : stages) {
    StagePlan stage;
    stage.first_layer = stored.first_layer;
    stage.last_layer = stored.last_layer;
    stage.recompute = parse_recompute(get_fixed(stored.recompute), "recompute");
    stage.recompute_layers = stored.recompute_layers;
    stage.first_device = stored.first_device;
    stage.boundary_level = stored.boundary_level;
    plan.stages.push_back(stage);
  }
  return out;
}

}  // namespace nestfast::io
