#include "io/catalog/row_checks.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "io/catalog/h5_handle.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/strategy_space.hpp"

namespace nestfast::io {
namespace {

// What a catalog job writes into a member. "When feasible" rules hold in
// /plans rows with feasible = 1; a row without a plan (feasible = 0) keeps
// those members at 0 or "" (jobs/catalog/assemble.cpp).
enum class Rule {
  Any,                   // every value is one a job may write (ids, row numbers, byte counts)
  Positive,              // an integer >= 1
  PositiveWhenFeasible,  // an integer >= 1 in a plan, 0 without one
  Index,                 // an integer >= 0
  Level,                 // a network level >= 0, or -1 for none
  Flag,                  // 0 or 1
  ZeroStage,             // 0 to 3
  NonNegative,           // a finite real >= 0 (a time, a bandwidth)
  PriceWhenFeasible,     // a finite real > 0 in a plan, 0 without one
  Percent,               // a finite real in [0, 100]
  Efficiency,            // a percentage in [0, 100], or NaN where there is no bound
  Name,                  // a non-empty text
  Text,                  // any text
  PlanKind,              // nest, manual, phaze, mcmc, exhaustive
  RecomputeSummary,      // none, selective, full, full/N or mixed (io::recompute_summary), in a plan
  StageRecompute,        // none, selective or full
  Optimizer,             // parse_optimizer's names
  AllToAll,              // parse_all_to_all's names
  Framework,             // search::parse_framework's names, in a plan
  Attention,             // search::parse_attention's names, in a plan
  Overlap,               // search::parse_overlap_text's lists, in a plan
  Placement,             // search::parse_placement's orders, or ""
};

struct MemberRule {
  const char* table;
  const char* member;
  Rule rule;
};

// The one table: every member of the catalog's row types (catalog_types.cpp).
constexpr MemberRule kRules[] = {
    {"plans", "point_id", Rule::Any},
    {"plans", "model", Rule::Name},
    {"plans", "cluster", Rule::Name},
    {"plans", "gpus", Rule::Positive},
    {"plans", "global_batch", Rule::Positive},
    {"plans", "seq_len", Rule::Positive},
    {"plans", "kind", Rule::PlanKind},
    {"plans", "rank_k", Rule::Index},
    {"plans", "feasible", Rule::Flag},
    {"plans", "tp", Rule::PositiveWhenFeasible},
    {"plans", "cp", Rule::PositiveWhenFeasible},
    {"plans", "ep", Rule::PositiveWhenFeasible},
    {"plans", "pp", Rule::PositiveWhenFeasible},
    {"plans", "dp", Rule::PositiveWhenFeasible},
    {"plans", "sp", Rule::Flag},
    {"plans", "micro_batch", Rule::PositiveWhenFeasible},
    {"plans", "micro_batches", Rule::PositiveWhenFeasible},
    {"plans", "zero_stage", Rule::ZeroStage},
    {"plans", "vpp", Rule::PositiveWhenFeasible},
    {"plans", "recompute", Rule::RecomputeSummary},
    {"plans", "placement", Rule::Placement},
    {"plans", "optimizer", Rule::Optimizer},
    {"plans", "a2a", Rule::AllToAll},
    {"plans", "framework", Rule::Framework},
    {"plans", "attention", Rule::Attention},
    {"plans", "overlap", Rule::Overlap},
    {"plans", "megatron_args", Rule::Text},
    {"plans", "megatron_environment", Rule::Text},
    {"plans", "moe_imbalance", Rule::NonNegative},
    {"plans", "iteration_time_s", Rule::PriceWhenFeasible},
    {"plans", "tokens_per_s", Rule::PriceWhenFeasible},
    {"plans", "mfu_pct", Rule::Percent},
    {"plans", "compute_s", Rule::NonNegative},
    {"plans", "recompute_s", Rule::NonNegative},
    {"plans", "tp_comm_s", Rule::NonNegative},
    {"plans", "cp_comm_s", Rule::NonNegative},
    {"plans", "ep_comm_s", Rule::NonNegative},
    {"plans", "zero3_gather_s", Rule::NonNegative},
    {"plans", "p2p_s", Rule::NonNegative},
    {"plans", "bubble_s", Rule::NonNegative},
    {"plans", "dp_sync_s", Rule::NonNegative},
    {"plans", "optimizer_s", Rule::NonNegative},
    {"plans", "memory_peak_bytes", Rule::PositiveWhenFeasible},
    {"plans", "hbm_bytes", Rule::Any},
    {"plans", "stage_offset", Rule::Any},  // within /stages: checked where the stages are read
    {"plans", "stage_count", Rule::PositiveWhenFeasible},
    {"stages", "plan_row", Rule::Any},
    {"stages", "stage", Rule::Index},
    {"stages", "pipeline_rank", Rule::Index},
    {"stages", "first_layer", Rule::Index},
    {"stages", "last_layer", Rule::Index},
    {"stages", "devices", Rule::Positive},
    {"stages", "first_device", Rule::Index},
    {"stages", "boundary_level", Rule::Level},
    {"stages", "recompute_layers", Rule::Index},
    {"stages", "recompute", Rule::StageRecompute},
    {"stages", "boundary_level_name", Rule::Text},
    {"stages", "forward_per_microbatch_s", Rule::NonNegative},
    {"stages", "backward_per_microbatch_s", Rule::NonNegative},
    {"stages", "p2p_per_microbatch_s", Rule::NonNegative},
    {"stages", "memory_bytes", Rule::Any},
    {"stages", "weights_bytes", Rule::Any},
    {"stages", "gradients_bytes", Rule::Any},
    {"stages", "optimizer_bytes", Rule::Any},
    {"stages", "activations_bytes", Rule::Any},
    {"stages", "working_bytes", Rule::Any},
    {"validation/alltoallv", "plan_row", Rule::Any},
    {"validation/alltoallv", "algo", Rule::Name},
    {"validation/alltoallv", "picked", Rule::Name},
    {"validation/alltoallv", "bytes_per_rank", Rule::Positive},
    {"validation/alltoallv", "servers", Rule::Positive},
    {"validation/alltoallv", "gpus_per_server", Rule::Positive},
    {"validation/alltoallv", "iterations", Rule::Positive},
    {"validation/alltoallv", "stages", Rule::Index},
    {"validation/alltoallv", "time_min_us", Rule::NonNegative},
    {"validation/alltoallv", "time_avg_us", Rule::NonNegative},
    {"validation/alltoallv", "time_max_us", Rule::NonNegative},
    {"validation/alltoallv", "algbw_GBps", Rule::NonNegative},
    {"validation/alltoallv", "busbw_GBps", Rule::NonNegative},
    {"validation/alltoallv", "lower_bound_us", Rule::NonNegative},
    {"validation/alltoallv", "efficiency_pct", Rule::Efficiency},
    {"validation/alltoallv", "predicted_us", Rule::NonNegative},
    {"validation/alltoallv", "wrong_bytes", Rule::Any},
};

// One member of a row type, as HDF5 describes it.
struct Member {
  std::string name;
  std::size_t offset = 0;
  std::size_t size = 0;
  H5T_class_t kind = H5T_NO_CLASS;
  bool is_signed = false;
};

std::vector<Member> members_of(hid_t row_type) {
  const int count = H5Tget_nmembers(row_type);
  if (count < 0) throw std::runtime_error("HDF5: reading the members of a row type failed");
  std::vector<Member> members;
  for (unsigned i = 0; i < static_cast<unsigned>(count); ++i) {
    char* name = H5Tget_member_name(row_type, i);
    if (name == nullptr) throw std::runtime_error("HDF5: reading the name of a row type's member failed");
    Member member;
    member.name = name;
    H5free_memory(name);
    member.offset = H5Tget_member_offset(row_type, i);
    const H5Handle type(h5_check(H5Tget_member_type(row_type, i), "reading a row member's type"), H5Tclose);
    member.size = H5Tget_size(type);
    member.kind = H5Tget_class(type);
    member.is_signed = member.kind == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_2;
    members.push_back(std::move(member));
  }
  return members;
}

const MemberRule* rule_of(std::string_view table, std::string_view member) {
  for (const MemberRule& rule : kRules) {
    if (table == rule.table && member == rule.member) return &rule;
  }
  return nullptr;
}

// A member's value read from its bytes: an integer (signed or not), a real or a text.
struct Value {
  enum class Kind { Signed, Unsigned, Real, Text } kind = Kind::Signed;
  std::int64_t integer = 0;
  std::uint64_t natural = 0;
  double real = 0;
  std::string text;
  bool terminated = true;  // a text ends inside its field

  bool is_zero() const {
    switch (kind) {
      case Kind::Signed: return integer == 0;
      case Kind::Unsigned: return natural == 0;
      case Kind::Real: return real == 0;
      case Kind::Text: return text.empty();
    }
    return false;
  }
  std::string shown() const {
    switch (kind) {
      case Kind::Signed: return std::to_string(integer);
      case Kind::Unsigned: return std::to_string(natural);
      case Kind::Real: {
        char shown[32] = {};
        std::snprintf(shown, sizeof shown, "%.17g", real);
        return shown;
      }
      case Kind::Text: return "\"" + text + "\"";
    }
    return "";
  }
};

Value value_at(const unsigned char* row, const Member& member) {
  Value value;
  const unsigned char* bytes = row + member.offset;
  if (member.kind == H5T_STRING) {
    value.kind = Value::Kind::Text;
    const auto* chars = reinterpret_cast<const char*>(bytes);
    const void* end = std::memchr(chars, '\0', member.size);
    value.terminated = end != nullptr;
    value.text.assign(chars, end != nullptr ? static_cast<const char*>(end) - chars : member.size);
  } else if (member.kind == H5T_FLOAT && member.size == sizeof(double)) {
    value.kind = Value::Kind::Real;
    std::memcpy(&value.real, bytes, sizeof(double));
  } else if (member.kind == H5T_INTEGER && member.is_signed && member.size == sizeof(std::int32_t)) {
    std::int32_t integer = 0;
    std::memcpy(&integer, bytes, sizeof integer);
    value.integer = integer;
  } else if (member.kind == H5T_INTEGER && member.is_signed && member.size == sizeof(std::int64_t)) {
    std::memcpy(&value.integer, bytes, sizeof value.integer);
  } else if (member.kind == H5T_INTEGER && !member.is_signed && member.size == sizeof(std::uint64_t)) {
    value.kind = Value::Kind::Unsigned;
    std::memcpy(&value.natural, bytes, sizeof value.natural);
  } else {
    throw std::logic_error("catalog row member " + member.name + " has a type row_checks.cpp does not read");
  }
  return value;
}

bool accepted(const std::string& text, void (*parse)(const std::string&)) {
  try {
    parse(text);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

bool is_recompute_summary(const std::string& text) {
  if (text == "mixed") return true;
  const std::string full = "full/";
  if (text.rfind(full, 0) == 0) {
    const std::string layers = text.substr(full.size());
    return !layers.empty() && layers.size() < 10 && layers.find_first_not_of("0123456789") == std::string::npos &&
           layers[0] != '0';
  }
  return accepted(text, [](const std::string& mode) { (void)parse_recompute(mode, "recompute"); });
}

// "" when `value` keeps `rule` in a row whose plan is `feasible`; what the rule asks otherwise.
std::string broken(Rule rule, const Value& value, bool feasible) {
  const bool integer = value.kind == Value::Kind::Signed || value.kind == Value::Kind::Unsigned;
  const bool at_least_one = value.kind == Value::Kind::Unsigned ? value.natural >= 1 : value.integer >= 1;
  const bool non_negative = value.kind == Value::Kind::Unsigned || value.integer >= 0;
  const std::string& text = value.text;
  const bool empty_without_plan = !feasible && text.empty();
  switch (rule) {
    case Rule::Any:
    case Rule::Text:
      return "";
    case Rule::Positive:
      return integer && at_least_one ? "" : "is not a count (>= 1)";
    case Rule::PositiveWhenFeasible:
      if (!feasible) return integer && non_negative ? "" : "is not 0 or more";
      return integer && at_least_one ? "" : "is not >= 1 in a feasible plan";
    case Rule::Index:
      return integer && non_negative ? "" : "is not an index (>= 0)";
    case Rule::Level:
      return integer && value.integer >= -1 ? "" : "is not a network level (>= 0, or -1 for none)";
    case Rule::Flag:
      return integer && (value.integer == 0 || value.integer == 1) ? "" : "is not 0 or 1";
    case Rule::ZeroStage:
      return integer && value.integer >= 0 && value.integer <= 3 ? "" : "is not a ZeRO stage (0 to 3)";
    case Rule::NonNegative:
      return std::isfinite(value.real) && value.real >= 0 ? "" : "is not a finite value >= 0";
    case Rule::PriceWhenFeasible:
      if (!feasible) return value.real == 0 ? "" : "is not 0 in a row without a plan";
      return std::isfinite(value.real) && value.real > 0 ? "" : "is not a finite value > 0 in a feasible plan";
    case Rule::Percent:
      return std::isfinite(value.real) && value.real >= 0 && value.real <= 100 ? "" : "is not a percentage in [0, 100]";
    case Rule::Efficiency:
      return std::isnan(value.real) || (value.real >= 0 && value.real <= 100)
                 ? ""
                 : "is not an efficiency in [0, 100] % (or NaN)";
    case Rule::Name:
      return !text.empty() ? "" : "is empty";
    case Rule::PlanKind:
      return text == "nest" || text == "manual" || text == "phaze" || text == "mcmc" || text == "exhaustive"
                 ? ""
                 : "is not a plan kind (nest, manual, phaze, mcmc, exhaustive)";
    case Rule::RecomputeSummary:
      return empty_without_plan || is_recompute_summary(text) ? "" : "is not none, selective, full, full/N or mixed";
    case Rule::StageRecompute:
      return accepted(text, [](const std::string& mode) { (void)parse_recompute(mode, "recompute"); })
                 ? ""
                 : "is not none, selective or full";
    case Rule::Optimizer:
      return accepted(text, [](const std::string& name) { (void)parse_optimizer(name, "optimizer"); })
                 ? ""
                 : "is not an optimizer nestfast prices (adam, sgd)";
    case Rule::AllToAll:
      return accepted(text, [](const std::string& name) { (void)parse_all_to_all(name, "a2a"); })
                 ? ""
                 : "is not an all-to-all pricing (fast, fanout)";
    case Rule::Framework:
      return empty_without_plan ||
                     accepted(text, [](const std::string& name) { (void)parse_framework(name, "framework"); })
                 ? ""
                 : "is not a framework nestfast prices for";
    case Rule::Attention:
      return empty_without_plan ||
                     accepted(text, [](const std::string& name) { (void)parse_attention(name, "attention"); })
                 ? ""
                 : "is not an attention nestfast prices";
    case Rule::Overlap:
      return empty_without_plan ||
                     accepted(text, [](const std::string& list) { (void)parse_overlap_text(list, "overlap"); })
                 ? ""
                 : "is not a list of overlaps (all, none or some of grad,param,tp,p2p,a2a)";
    case Rule::Placement:
      return text.empty() ||
                     accepted(text, [](const std::string& order) { (void)search::parse_placement(order, "placement"); })
                 ? ""
                 : "is not a placement order";
  }
  return "";
}

}  // namespace

void check_rows(const std::string& path, const std::string& table, hid_t row_type, const void* rows,
                std::uint64_t count, std::uint64_t first) {
  const std::vector<Member> members = members_of(row_type);
  std::vector<const MemberRule*> rules;
  const Member* feasible = nullptr;
  for (const Member& member : members) {
    const MemberRule* rule = rule_of(table, member.name);
    if (rule == nullptr) throw std::logic_error("/" + table + " member " + member.name + " has no rule in row_checks.cpp");
    rules.push_back(rule);
    if (member.name == "feasible") feasible = &member;
  }
  const std::size_t row_size = H5Tget_size(row_type);
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto* row = static_cast<const unsigned char*>(rows) + i * row_size;
    const bool has_plan = feasible == nullptr || !value_at(row, *feasible).is_zero();
    for (std::size_t m = 0; m < members.size(); ++m) {
      const Value value = value_at(row, members[m]);
      const std::string problem = value.terminated ? broken(rules[m]->rule, value, has_plan) : "does not end in its field";
      if (problem.empty()) continue;
      throw std::invalid_argument(path + ": /" + table + " row " + std::to_string(first + i) + ": " + members[m].name +
                                  " = " + value.shown() + ": " + problem + " (the catalog is damaged or was edited)");
    }
  }
}

std::vector<std::string> members_without_rule(const std::string& table, hid_t row_type) {
  std::vector<std::string> missing;
  for (const Member& member : members_of(row_type)) {
    if (rule_of(table, member.name) == nullptr) missing.push_back(member.name);
  }
  return missing;
}

}  // namespace nestfast::io
