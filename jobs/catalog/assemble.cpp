#include "jobs/catalog/assemble.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "io/catalog/plan_rows.hpp"
#include "solver/model/layer_work.hpp"
#include "solver/search/execution_layout.hpp"
#include "solver/search/plan_record.hpp"
#include "solver/search/solve.hpp"

namespace nestfast::jobs {
namespace {

io::PlanEntry unpriced_entry(const PointWork& point, const char* kind, int rank_k, const Execution* plan) {
  search::PlanRecord record = search::unpriced_plan_record(point.problem.model.name, point.problem.cluster.name,
                                                           point.point.gpus, point.point.global_batch,
                                                           point.point.seq_len, kind, rank_k, plan);
  record.framework = point.problem.framework;  // the space that was searched, also when nothing fits
  record.point_id = point.point.id;
  return io::plan_entry(record);
}

io::PlanEntry priced_entry(const PointWork& point, const Execution& plan, const char* kind, int rank_k,
                           double expected_time_s) {
  // The stored rows carry attention, overlaps and the gradients' dtype, the
  // checkpoint does not: a point's plans are priced with its problem's (under
  // megatron-core cp > 1 runs fused, plan_attention; a nest search's plans may
  // be megatron-core plans).
  Execution priced = plan;
  priced.attention = search::plan_attention(plan.framework, point.problem.attention, plan.cp);
  priced.overlap = point.problem.overlap;
  priced.grad_reduce = point.problem.grad_reduce;
  search::PlanRecord record = search::price_plan_record(point.problem.model, point.problem.cluster, priced, kind, rank_k);
  if (!record.feasible || record.iteration_time_s != expected_time_s) {
    throw std::runtime_error("point " + std::to_string(point.point.id) + " (" + kind + " #" + std::to_string(rank_k) +
                             "): the stored plan does not reproduce its iteration time (checkpoint from another build?)");
  }
  record.point_id = point.point.id;
  return io::plan_entry(record);
}

// The MoE all-to-all of one layer of `plan`, for validation: the run prices
// the traffic it generates on its own ranks (jobs/traffic_price.hpp).
std::optional<comm::ValidationRequest> all_to_all_of(const PointWork& point, const Execution& plan) {
  const ModelSpec& model = point.problem.model;
  if (!model.moe.enabled()) return std::nullopt;
  int moe_layer = -1;
  for (int layer = 1; layer <= model.num_layers; ++layer) {
    if (layer_kind(model, layer) == LayerKind::MoeBlock) {
      moe_layer = layer;
      break;
    }
  }
  if (moe_layer < 0) return std::nullopt;
  comm::ValidationRequest request;
  request.ep = plan.ep;
  request.experts = model.moe.num_experts;
  request.top_k = model.moe.top_k;
  request.cluster = point.point.cluster;
  // The bound rests on the line rates the cluster declares: a GPU's NIC (the
  // first level above its node) and its scale-up link; oversubscription only
  // slows links down, so the raw rates keep the bound a bound.
  const auto& levels = point.problem.cluster.levels;
  if (!levels.empty()) request.gpu_scaleup_Bps = levels.front().bandwidth_Bps;
  if (levels.size() > 1) request.gpu_nic_Bps = levels[1].bandwidth_Bps;
  return request;
}

}  // namespace

Execution rebuild_instance_plan(const PointWork& point, std::size_t instance, const DecodedInstance& decoded) {
  Execution plan = search::execution_skeleton(point.problem, point.instances.at(instance));
  plan.stages = decoded.stages;
  return plan;
}

AssembledPoint assemble_point(const PointWork& point, const std::vector<DecodedInstance>& instances,
                              const std::vector<search::BaselineResult>& baselines, int top_k) {
  AssembledPoint out;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < instances.size(); ++i) {
    if (instances[i].feasible) order.push_back(i);
  }
  // Instance index i is the instance's ordinal (enumerate_instances order): the tie-break.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return instances[a].iteration_time_s < instances[b].iteration_time_s;
  });
  if (order.size() > static_cast<std::size_t>(top_k)) order.resize(static_cast<std::size_t>(top_k));
  if (order.empty()) {
    out.plans.push_back(unpriced_entry(point, "nest", 0, nullptr));
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    const DecodedInstance& decoded = instances[order[k]];
    Execution plan = rebuild_instance_plan(point, order[k], decoded);
    out.plans.push_back(priced_entry(point, plan, "nest", static_cast<int>(k), decoded.iteration_time_s));
    if (k == 0) {
      out.best_all_to_all = all_to_all_of(point, plan);
    }
  }
  for (const search::BaselineResult& baseline : baselines) {
    if (baseline.feasible) {
      // The checkpoint keeps degrees, stages and the framework.
      const Execution& plan = baseline.plan;
      out.plans.push_back(priced_entry(point, plan, baseline.name.c_str(), 0, baseline.iteration_time_s));
    } else {
      // Degrees only: a plan that does not fit keeps them so people see what was tried.
      out.plans.push_back(unpriced_entry(point, baseline.name.c_str(), 0, baseline.plan.tp > 0 ? &baseline.plan : nullptr));
    }
  }
  return out;
}

}  // namespace nestfast::jobs
