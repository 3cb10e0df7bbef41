#include "io/record_json/plan_json.hpp"

#include <cmath>
#include <stdexcept>

#include "io/nest_json/json_fields.hpp"
#include "solver/search/strategy_space.hpp"

namespace nestfast::io {
namespace {

using nest_json::at;
using nest_json::FieldReader;
using nest_json::join;

std::uint64_t bytes(double value) { return static_cast<std::uint64_t>(std::llround(value)); }

// The time split's members, in one list for both directions.
template <class Breakdown, class Visit>
void visit_breakdown(Breakdown& b, Visit&& visit) {
  visit("compute_s", b.compute_s);
  visit("recompute_s", b.recompute_s);
  visit("tp_comm_s", b.tp_comm_s);
  visit("cp_comm_s", b.cp_comm_s);
  visit("ep_comm_s", b.ep_comm_s);
  visit("zero3_gather_s", b.zero3_gather_s);
  visit("p2p_s", b.p2p_s);
  visit("bubble_s", b.bubble_s);
  visit("dp_sync_s", b.dp_sync_s);
  visit("optimizer_s", b.optimizer_s);
}

nlohmann::json stage_json(const search::StageRecord& stage) {
  return {{"stage", stage.stage},
          {"pipeline_rank", stage.pipeline_rank},
          {"first_layer", stage.first_layer},
          {"last_layer", stage.last_layer},
          {"devices", stage.devices},
          {"first_device", stage.first_device},
          {"boundary_level", stage.boundary_level},
          {"boundary_level_name", stage.boundary_level_name},
          {"recompute", to_string(stage.recompute)},
          {"recompute_layers", stage.recompute_layers},
          {"forward_per_microbatch_s", stage.forward_per_microbatch_s},
          {"backward_per_microbatch_s", stage.backward_per_microbatch_s},
          {"p2p_per_microbatch_s", stage.p2p_per_microbatch_s},
          {"memory_bytes", bytes(stage.memory_bytes)},
          {"weights_bytes", bytes(stage.weights_bytes)},
          {"gradients_bytes", bytes(stage.gradients_bytes)},
          {"optimizer_bytes", bytes(stage.optimizer_bytes)},
          {"activations_bytes", bytes(stage.activations_bytes)},
          {"working_bytes", bytes(stage.working_bytes)}};
}

// Optional members: the printed price, read back when present so a caller
// can compare it with a new price.
double optional_number(const FieldReader& reader, const nlohmann::json& object, const std::string& path,
                       const char* key) {
  const auto found = object.find(key);
  return found == object.end() ? 0.0 : reader.finite_number(*found, join(path, key));
}

int integer(const FieldReader& reader, const nlohmann::json& object, const std::string& path, const char* key,
            int minimum) {
  const std::int64_t value = reader.integer(reader.member(object, path, key), join(path, key), minimum);
  if (value > 1'000'000'000) reader.fail(join(path, key), "too large: " + std::to_string(value));
  return static_cast<int>(value);
}

std::string text(const FieldReader& reader, const nlohmann::json& object, const std::string& path, const char* key) {
  return reader.string(reader.member(object, path, key), join(path, key));
}

template <class Parse>
auto parsed(const FieldReader& reader, const nlohmann::json& object, const std::string& path, const char* key,
            Parse&& parse) {
  const std::string value = text(reader, object, path, key);
  try {
    return parse(value, join(path, key));
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(reader.source() + ": " + error.what());
  }
}

search::StageRecord stage_from_json(const FieldReader& reader, const nlohmann::json& object, const std::string& path) {
  reader.require_object(object, path);
  search::StageRecord stage;
  stage.first_layer = integer(reader, object, path, "first_layer", 0);
  stage.last_layer = integer(reader, object, path, "last_layer", 0);
  stage.recompute = parsed(reader, object, path, "recompute", parse_recompute);
  if (object.contains("recompute_layers")) stage.recompute_layers = integer(reader, object, path, "recompute_layers", 0);
  if (const auto found = object.find("stage"); found != object.end()) {
    stage.stage = static_cast<int>(reader.integer(*found, join(path, "stage"), 0));
  }
  stage.forward_per_microbatch_s = optional_number(reader, object, path, "forward_per_microbatch_s");
  stage.backward_per_microbatch_s = optional_number(reader, object, path, "backward_per_microbatch_s");
  stage.p2p_per_microbatch_s = optional_number(reader, object, path, "p2p_per_microbatch_s");
  stage.memory_bytes = optional_number(reader, object, path, "memory_bytes");
  return stage;
}

bool is_record(const nlohmann::json& value) { return value.is_object() && value.contains("tp") && value.contains("stages"); }

void collect(const nlohmann::json& value, const std::string& path, const std::string& source,
             std::vector<FoundRecord>& out) {
  if (is_record(value)) {
    out.push_back({path.empty() ? std::string("(the document)") : path, plan_record_from_json(value, source, path)});
  } else if (value.is_object()) {
    if (const auto plans = value.find("plans"); plans != value.end()) collect(*plans, join(path, "plans"), source, out);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) collect(value[i], at(path, i), source, out);
  }
}

}  // namespace

nlohmann::json to_json(const search::PlanRecord& record) {
  nlohmann::json out = nlohmann::json::object();
  if (record.point_id) out["point_id"] = *record.point_id;
  out["model"] = record.model;
  out["cluster"] = record.cluster;
  out["gpus"] = record.gpus;
  out["global_batch"] = record.global_batch;
  out["seq_len"] = record.seq_len;
  out["kind"] = record.kind;
  out["rank_k"] = record.rank_k;
  out["feasible"] = record.feasible;
  if (!record.infeasible_reason.empty()) out["infeasible_reason"] = record.infeasible_reason;
  out["tp"] = record.tp;
  out["cp"] = record.cp;
  out["ep"] = record.ep;
  out["etp"] = record.etp > 0 ? record.etp : record.tp;
  out["pp"] = record.pp;
  out["dp"] = record.dp;
  out["sp"] = record.sp;
  out["micro_batch"] = record.micro_batch;
  out["micro_batches"] = record.micro_batches;
  out["zero_stage"] = record.zero_stage;
  out["vpp"] = record.vpp;
  out["recompute"] = record.recompute;
  out["recompute_modules"] = to_string_modules(record.recompute_modules);
  out["placement"] = search::placement_to_string(record.placement);
  out["optimizer"] = to_string(record.optimizer);
  out["a2a"] = to_string(record.a2a);
  out["moe_imbalance"] = record.moe_imbalance;
  out["framework"] = to_string(record.framework);
  out["attention"] = to_string(record.attention);
  out["overlap"] = to_string(record.overlap);
  if (!record.overlap_priced.empty()) out["overlap_priced"] = record.overlap_priced;
  out["grad_reduce"] = to_string(record.grad_reduce);
  out["iteration_time_s"] = record.iteration_time_s;
  out["tokens_per_s"] = record.tokens_per_s;
  out["mfu_pct"] = record.mfu_pct;
  out["memory_peak_bytes"] = bytes(record.memory_peak_bytes);
  out["hbm_bytes"] = bytes(record.hbm_bytes);
  nlohmann::json breakdown = nlohmann::json::object();
  visit_breakdown(record.breakdown, [&](const char* key, double value) { breakdown[key] = value; });
  out["breakdown"] = breakdown;
  nlohmann::json stages = nlohmann::json::array();
  for (const search::StageRecord& stage : record.stages) stages.push_back(stage_json(stage));
  out["stages"] = stages;
  if (!record.megatron_args.empty()) {
    out["megatron_args"] = record.megatron_args;
    out["megatron_environment"] = record.megatron_environment;
    out["megatron_notes"] = record.megatron_notes;
  }
  return out;
}

search::PlanRecord plan_record_from_json(const nlohmann::json& object, const std::string& source,
                                         const std::string& path) {
  const FieldReader reader(source);
  reader.require_object(object, path.empty() ? "(the document)" : path);
  search::PlanRecord record;
  if (const auto found = object.find("point_id"); found != object.end()) {
    record.point_id = static_cast<std::uint64_t>(reader.integer(*found, join(path, "point_id"), 0));
  }
  record.model = text(reader, object, path, "model");
  record.cluster = text(reader, object, path, "cluster");
  record.gpus = integer(reader, object, path, "gpus", 1);
  record.global_batch = integer(reader, object, path, "global_batch", 1);
  record.seq_len = integer(reader, object, path, "seq_len", 1);
  if (object.contains("kind")) record.kind = text(reader, object, path, "kind");
  if (object.contains("rank_k")) record.rank_k = integer(reader, object, path, "rank_k", 0);
  record.feasible = object.contains("feasible") && reader.boolean(object.at("feasible"), join(path, "feasible"));
  // An entry for a plan that was not found has its identity only.
  const auto stage_list = object.find("stages");
  if (!record.feasible && (stage_list == object.end() || (stage_list->is_array() && stage_list->empty()))) return record;
  record.tp = integer(reader, object, path, "tp", 1);
  record.cp = integer(reader, object, path, "cp", 1);
  record.ep = integer(reader, object, path, "ep", 1);
  // Absent (files written before it): the experts split like the dense layers.
  record.etp = object.contains("etp") ? integer(reader, object, path, "etp", 1) : record.tp;
  record.pp = integer(reader, object, path, "pp", 1);
  record.dp = integer(reader, object, path, "dp", 1);
  record.sp = reader.boolean(reader.member(object, path, "sp"), join(path, "sp"));
  record.micro_batch = integer(reader, object, path, "micro_batch", 1);
  record.zero_stage = integer(reader, object, path, "zero_stage", 0);
  record.vpp = integer(reader, object, path, "vpp", 1);
  record.placement = parsed(reader, object, path, "placement", search::parse_placement);
  record.optimizer = parsed(reader, object, path, "optimizer", parse_optimizer);
  record.a2a = parsed(reader, object, path, "a2a", parse_all_to_all);
  record.moe_imbalance = reader.finite_number(reader.member(object, path, "moe_imbalance"), join(path, "moe_imbalance"));
  record.framework = parsed(reader, object, path, "framework", parse_framework);
  record.attention = parsed(reader, object, path, "attention", parse_attention);
  record.overlap = parsed(reader, object, path, "overlap", parse_overlap_text);
  // Documents from before the choice existed were priced with fp32 gradients.
  if (object.contains("grad_reduce")) record.grad_reduce = parsed(reader, object, path, "grad_reduce", parse_grad_reduce);
  if (object.contains("recompute")) record.recompute = text(reader, object, path, "recompute");
  // Documents from before the choice existed checkpointed core_attn alone.
  if (object.contains("recompute_modules"))
    record.recompute_modules = parsed(reader, object, path, "recompute_modules", parse_recompute_modules);
  record.iteration_time_s = optional_number(reader, object, path, "iteration_time_s");
  record.tokens_per_s = optional_number(reader, object, path, "tokens_per_s");
  record.mfu_pct = optional_number(reader, object, path, "mfu_pct");
  record.memory_peak_bytes = optional_number(reader, object, path, "memory_peak_bytes");
  record.hbm_bytes = optional_number(reader, object, path, "hbm_bytes");
  const nlohmann::json& stages = reader.member(object, path, "stages");
  reader.require_array(stages, join(path, "stages"));
  for (std::size_t i = 0; i < stages.size(); ++i) {
    search::StageRecord stage = stage_from_json(reader, stages[i], at(join(path, "stages"), i));
    if (!stages[i].contains("stage")) stage.stage = static_cast<int>(i);
    record.stages.push_back(std::move(stage));
  }
  return record;
}

std::vector<FoundRecord> plan_records_in(const nlohmann::json& document, const std::string& source) {
  std::vector<FoundRecord> found;
  collect(document, "", source, found);
  return found;
}

}  // namespace nestfast::io
