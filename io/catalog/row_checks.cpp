#include "io/catalog/row_checks.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "io/catalog/catalog_types.hpp"
#include "solver/search/execution.hpp"
#include "solver/search/strategy_space.hpp"

namespace nestfast::io {
namespace {

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

Value value_at(const unsigned char* row, const RowField& field) {
  Value value;
  const unsigned char* bytes = row + field.offset;
  switch (field.type) {
    case FieldType::U64:
      value.kind = Value::Kind::Unsigned;
      std::memcpy(&value.natural, bytes, sizeof value.natural);
      break;
    case FieldType::I32: {
      std::int32_t integer = 0;
      std::memcpy(&integer, bytes, sizeof integer);
      value.integer = integer;
      break;
    }
    case FieldType::F64:
      value.kind = Value::Kind::Real;
      std::memcpy(&value.real, bytes, sizeof value.real);
      break;
    default: {
      value.kind = Value::Kind::Text;
      const std::size_t size = field_bytes(field.type);
      const auto* chars = reinterpret_cast<const char*>(bytes);
      const void* end = std::memchr(chars, '\0', size);
      value.terminated = end != nullptr;
      value.text.assign(chars, end != nullptr ? static_cast<const char*>(end) - chars : size);
    }
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
std::string broken(ValueRule rule, const Value& value, bool feasible) {
  const bool integer = value.kind == Value::Kind::Signed || value.kind == Value::Kind::Unsigned;
  const bool at_least_one = value.kind == Value::Kind::Unsigned ? value.natural >= 1 : value.integer >= 1;
  const bool non_negative = value.kind == Value::Kind::Unsigned || value.integer >= 0;
  const std::string& text = value.text;
  const bool empty_without_plan = !feasible && text.empty();
  switch (rule) {
    case ValueRule::Any:
    case ValueRule::Text:
      return "";
    case ValueRule::Positive:
      return integer && at_least_one ? "" : "is not a count (>= 1)";
    case ValueRule::PositiveWhenFeasible:
      if (!feasible) return integer && non_negative ? "" : "is not 0 or more";
      return integer && at_least_one ? "" : "is not >= 1 in a feasible plan";
    case ValueRule::Index:
      return integer && non_negative ? "" : "is not an index (>= 0)";
    case ValueRule::Level:
      return integer && value.integer >= -1 ? "" : "is not a network level (>= 0, or -1 for none)";
    case ValueRule::Flag:
      return integer && (value.integer == 0 || value.integer == 1) ? "" : "is not 0 or 1";
    case ValueRule::ZeroStage:
      return integer && value.integer >= 0 && value.integer <= 3 ? "" : "is not a ZeRO stage (0 to 3)";
    case ValueRule::NonNegative:
      return std::isfinite(value.real) && value.real >= 0 ? "" : "is not a finite value >= 0";
    case ValueRule::PriceWhenFeasible:
      if (!feasible) return value.real == 0 ? "" : "is not 0 in a row without a plan";
      return std::isfinite(value.real) && value.real > 0 ? "" : "is not a finite value > 0 in a feasible plan";
    case ValueRule::Percent:
      return std::isfinite(value.real) && value.real >= 0 && value.real <= 100 ? "" : "is not a percentage in [0, 100]";
    case ValueRule::Efficiency:
      return std::isnan(value.real) || (value.real >= 0 && value.real <= 100)
                 ? ""
                 : "is not an efficiency in [0, 100] % (or NaN)";
    case ValueRule::Name:
      return !text.empty() ? "" : "is empty";
    case ValueRule::PlanKind:
      return text == "nest" || text == "manual" || text == "phaze" || text == "mcmc" || text == "exhaustive"
                 ? ""
                 : "is not a plan kind (nest, manual, phaze, mcmc, exhaustive)";
    case ValueRule::RecomputeSummary:
      return empty_without_plan || is_recompute_summary(text) ? "" : "is not none, selective, full, full/N or mixed";
    case ValueRule::StageRecompute:
      return accepted(text, [](const std::string& mode) { (void)parse_recompute(mode, "recompute"); })
                 ? ""
                 : "is not none, selective or full";
    case ValueRule::Optimizer:
      return accepted(text, [](const std::string& name) { (void)parse_optimizer(name, "optimizer"); })
                 ? ""
                 : "is not an optimizer nestfast prices (adam, sgd)";
    case ValueRule::AllToAll:
      return accepted(text, [](const std::string& name) { (void)parse_all_to_all(name, "a2a"); })
                 ? ""
                 : "is not an all-to-all pricing (fast, fanout, deepep)";
    case ValueRule::RecomputeModules:
      return empty_without_plan ||
                     accepted(text, [](const std::string& list) { (void)parse_recompute_modules(list, "recompute_modules"); })
                 ? ""
                 : "is not a list of selective recompute modules (core_attn, layernorm, moe_act, ...)";
    case ValueRule::Framework:
      return empty_without_plan ||
                     accepted(text, [](const std::string& name) { (void)parse_framework(name, "framework"); })
                 ? ""
                 : "is not a framework nestfast prices for";
    case ValueRule::Attention:
      return empty_without_plan ||
                     accepted(text, [](const std::string& name) { (void)parse_attention(name, "attention"); })
                 ? ""
                 : "is not an attention nestfast prices";
    case ValueRule::Overlap:
      return empty_without_plan ||
                     accepted(text, [](const std::string& list) { (void)parse_overlap_text(list, "overlap"); })
                 ? ""
                 : "is not a list of overlaps (all, none or some of grad,param,tp,p2p,a2a,shared,wgrad)";
    case ValueRule::GradReduce:
      return empty_without_plan ||
                     accepted(text, [](const std::string& name) { (void)parse_grad_reduce(name, "grad_reduce"); })
                 ? ""
                 : "is not a gradient dtype nestfast prices (fp32, bf16)";
    case ValueRule::Placement:
      return text.empty() ||
                     accepted(text, [](const std::string& order) { (void)search::parse_placement(order, "placement"); })
                 ? ""
                 : "is not a placement order";
  }
  return "";
}

}  // namespace

void check_rows(const std::string& path, const std::string& table, RowTable layout, const void* rows,
                std::uint64_t count, std::uint64_t first) {
  const std::vector<RowField>& fields = row_fields(layout);
  const RowField* feasible = nullptr;
  for (const RowField& field : fields) {
    if (std::string_view(field.name) == "feasible") feasible = &field;
  }
  const std::size_t size = row_size(layout);
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto* row = static_cast<const unsigned char*>(rows) + i * size;
    const bool has_plan = feasible == nullptr || !value_at(row, *feasible).is_zero();
    for (const RowField& field : fields) {
      const Value value = value_at(row, field);
      const std::string problem = value.terminated ? broken(field.rule, value, has_plan) : "does not end in its field";
      if (problem.empty()) continue;
      throw std::invalid_argument(path + ": /" + table + " row " + std::to_string(first + i) + ": " + field.name +
                                  " = " + value.shown() + ": " + problem + " (the catalog is damaged or was edited)");
    }
  }
}

}  // namespace nestfast::io
