#include "io/catalog/plan_rows.hpp"

#include <cmath>

#include "solver/search/strategy_space.hpp"

namespace nestfast::io {
namespace {

// Copies one field into a row (set_fixed for names, 0/1 for flags, whole
// bytes for memory, names for enums) ...
struct ToRow {
  template <std::size_t N>
  void operator()(char (&field)[N], const std::string& value) const { set_fixed(field, value); }
  void operator()(std::int32_t& field, int value) const { field = value; }
  void operator()(std::int32_t& field, bool value) const { field = value ? 1 : 0; }
  void operator()(double& field, double value) const { field = value; }
  void operator()(std::uint64_t& field, std::uint64_t value) const { field = value; }
  void operator()(std::uint64_t& field, double bytes) const { field = static_cast<std::uint64_t>(std::llround(bytes)); }
  template <std::size_t N>
  void operator()(char (&field)[N], const std::vector<ParallelDim>& order) const {
    set_fixed(field, search::placement_to_string(order));
  }
  template <std::size_t N, class Enum>
  void operator()(char (&field)[N], Enum value) const { set_fixed(field, to_string(value)); }
  template <std::size_t N>
  void operator()(char (&field)[N], RecomputeModules modules) const { set_fixed(field, to_string_modules(modules)); }
};

// ... and back out of one, parsing the names it wrote.
struct FromRow {
  template <std::size_t N>
  void operator()(const char (&field)[N], std::string& value) const { value = get_fixed(field); }
  void operator()(const std::int32_t& field, int& value) const { value = field; }
  void operator()(const std::int32_t& field, bool& value) const { value = field != 0; }
  void operator()(const double& field, double& value) const { value = field; }
  void operator()(const std::uint64_t& field, std::uint64_t& value) const { value = field; }
  void operator()(const std::uint64_t& field, double& bytes) const { bytes = static_cast<double>(field); }
  template <std::size_t N>
  void operator()(const char (&field)[N], std::vector<ParallelDim>& order) const {
    const std::string text = get_fixed(field);
    order = text.empty() ? std::vector<ParallelDim>{} : search::parse_placement(text, "placement");
  }
  template <std::size_t N>
  void operator()(const char (&field)[N], Optimizer& value) const { value = parse_optimizer(get_fixed(field), "optimizer"); }
  template <std::size_t N>
  void operator()(const char (&field)[N], AllToAllAlgorithm& value) const {
    value = parse_all_to_all(get_fixed(field), "a2a");
  }
  template <std::size_t N>
  void operator()(const char (&field)[N], Recompute& value) const { value = parse_recompute(get_fixed(field), "recompute"); }
  template <std::size_t N>
  void operator()(const char (&field)[N], RecomputeModules& value) const {
    const std::string text = get_fixed(field);
    value = text.empty() ? kDefaultRecomputeModules : parse_recompute_modules(text, "recompute_modules");
  }
  template <std::size_t N>
  void operator()(const char (&field)[N], Attention& value) const { value = parse_attention(get_fixed(field), "attention"); }
  template <std::size_t N>
  void operator()(const char (&field)[N], GradReduce& value) const {
    value = parse_grad_reduce(get_fixed(field), "grad_reduce");
  }
  template <std::size_t N>
  void operator()(const char (&field)[N], Overlap& value) const {
    value = parse_overlap_text(get_fixed(field), "overlap");
  }
  template <std::size_t N>
  void operator()(const char (&field)[N], Framework& value) const {
    value = parse_framework(get_fixed(field), "framework");
  }
};

// The members of /plans and of a PlanRecord, pairwise: one list for both directions.
template <class Row, class Record, class Visit>
void visit_plan(Row& row, Record& record, Visit&& visit) {
  visit(row.model, record.model);
  visit(row.cluster, record.cluster);
  visit(row.gpus, record.gpus);
  visit(row.global_batch, record.global_batch);
  visit(row.seq_len, record.seq_len);
  visit(row.kind, record.kind);
  visit(row.rank_k, record.rank_k);
  visit(row.feasible, record.feasible);
  visit(row.tp, record.tp);
  visit(row.cp, record.cp);
  visit(row.ep, record.ep);
  visit(row.etp, record.etp);
  visit(row.pp, record.pp);
  visit(row.dp, record.dp);
  visit(row.sp, record.sp);
  visit(row.micro_batch, record.micro_batch);
  visit(row.micro_batches, record.micro_batches);
  visit(row.zero_stage, record.zero_stage);
  visit(row.vpp, record.vpp);
  visit(row.recompute, record.recompute);
  visit(row.recompute_modules, record.recompute_modules);
  visit(row.placement, record.placement);
  visit(row.optimizer, record.optimizer);
  visit(row.a2a, record.a2a);
  visit(row.moe_imbalance, record.moe_imbalance);
  visit(row.framework, record.framework);
  visit(row.attention, record.attention);
  visit(row.overlap, record.overlap);
  visit(row.grad_reduce, record.grad_reduce);
  visit(row.megatron_args, record.megatron_args);
  visit(row.megatron_environment, record.megatron_environment);
  visit(row.iteration_time_s, record.iteration_time_s);
  visit(row.tokens_per_s, record.tokens_per_s);
  visit(row.mfu_pct, record.mfu_pct);
  visit(row.compute_s, record.breakdown.compute_s);
  visit(row.recompute_s, record.breakdown.recompute_s);
  visit(row.tp_comm_s, record.breakdown.tp_comm_s);
  visit(row.cp_comm_s, record.breakdown.cp_comm_s);
  visit(row.ep_comm_s, record.breakdown.ep_comm_s);
  visit(row.zero3_gather_s, record.breakdown.zero3_gather_s);
  visit(row.p2p_s, record.breakdown.p2p_s);
  visit(row.bubble_s, record.breakdown.bubble_s);
  visit(row.dp_sync_s, record.breakdown.dp_sync_s);
  visit(row.optimizer_s, record.breakdown.optimizer_s);
  visit(row.memory_peak_bytes, record.memory_peak_bytes);
  visit(row.hbm_bytes, record.hbm_bytes);
}

template <class Row, class Record, class Visit>
void visit_stage(Row& row, Record& record, Visit&& visit) {
  visit(row.stage, record.stage);
  visit(row.pipeline_rank, record.pipeline_rank);
  visit(row.first_layer, record.first_layer);
  visit(row.last_layer, record.last_layer);
  visit(row.devices, record.devices);
  visit(row.first_device, record.first_device);
  visit(row.boundary_level, record.boundary_level);
  visit(row.recompute, record.recompute);
  visit(row.recompute_layers, record.recompute_layers);
  visit(row.boundary_level_name, record.boundary_level_name);
  visit(row.forward_per_microbatch_s, record.forward_per_microbatch_s);
  visit(row.backward_per_microbatch_s, record.backward_per_microbatch_s);
  visit(row.p2p_per_microbatch_s, record.p2p_per_microbatch_s);
  visit(row.memory_bytes, record.memory_bytes);
  visit(row.weights_bytes, record.weights_bytes);
  visit(row.gradients_bytes, record.gradients_bytes);
  visit(row.optimizer_bytes, record.optimizer_bytes);
  visit(row.activations_bytes, record.activations_bytes);
  visit(row.working_bytes, record.working_bytes);
}

template <class Row, class Result, class Visit>
void visit_validation(Row& row, Result& result, Visit&& visit) {
  visit(row.plan_row, result.plan_row);
  visit(row.algo, result.algo);
  visit(row.picked, result.picked);
  visit(row.bytes_per_rank, result.bytes_per_rank);
  visit(row.servers, result.servers);
  visit(row.gpus_per_server, result.gpus_per_server);
  visit(row.iterations, result.iterations);
  visit(row.stages, result.stages);
  visit(row.time_min_us, result.time_min_us);
  visit(row.time_avg_us, result.time_avg_us);
  visit(row.time_max_us, result.time_max_us);
  visit(row.algbw_GBps, result.algbw_GBps);
  visit(row.busbw_GBps, result.busbw_GBps);
  visit(row.lower_bound_us, result.lower_bound_us);
  visit(row.efficiency_pct, result.efficiency_pct);
  visit(row.predicted_us, result.predicted_us);
  visit(row.wrong_bytes, result.wrong_bytes);
}

}  // namespace

PlanEntry plan_entry(const search::PlanRecord& record) {
  PlanEntry entry;
  entry.row.point_id = record.point_id.value_or(0);
  visit_plan(entry.row, record, ToRow{});
  for (const search::StageRecord& stage : record.stages) {
    StageRow row;
    visit_stage(row, stage, ToRow{});
    entry.stages.push_back(row);
  }
  return entry;
}

search::PlanRecord plan_record(const PlanRow& row, const std::vector<StageRow>& stages) {
  search::PlanRecord record;
  record.point_id = row.point_id;
  visit_plan(row, record, FromRow{});
  for (const StageRow& stage : stages) {
    search::StageRecord out;
    visit_stage(stage, out, FromRow{});
    record.stages.push_back(std::move(out));
  }
  return record;
}

ValidationRow validation_row(const comm::ValidationResult& result) {
  ValidationRow row;
  visit_validation(row, result, ToRow{});
  return row;
}

comm::ValidationResult validation_result(const ValidationRow& row) {
  comm::ValidationResult result;
  visit_validation(row, result, FromRow{});
  return result;
}

}  // namespace nestfast::io
