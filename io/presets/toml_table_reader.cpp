#include "io/presets/toml_table_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace nestfast::io {

namespace {

std::string_view type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

// toml++ descriptions are one line today; keep the promise if that changes.
std::string one_line(std::string_view text) {
  std::string line(text);
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line;
}

}  // namespace

int source_line(const toml::node& node) {
  const auto line = node.source().begin.line;
  return line == 0 ? 1 : static_cast<int>(line);
}

toml::table parse_toml_file(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    throw std::invalid_argument(fmt::format("{}: no such file", file.string()));
  }
  try {
    return toml::parse_file(file.string());
  } catch (const toml::parse_error& parse_error) {
    const auto& where = parse_error.source().begin;
    throw std::invalid_argument(fmt::format("{}:{}:{}: TOML syntax error: {}", file.string(), where.line,
                                            where.column, one_line(parse_error.description())));
  }
}

TomlTableReader::TomlTableReader(const toml::table& table, std::filesystem::path file, std::string prefix,
                                 std::initializer_list<std::string_view> allowed_keys)
    : table_(table), file_(std::move(file)), prefix_(std::move(prefix)) {
  for (const auto& [key, node] : table_) {
    if (std::find(allowed_keys.begin(), allowed_keys.end(), key.str()) != allowed_keys.end()) continue;
    std::string expected;
    for (auto allowed : allowed_keys) expected += (expected.empty() ? "" : ", ") + std::string(allowed);
    fail(key.str(), fmt::format("unknown key (expected one of: {})", expected));
  }
}

std::string TomlTableReader::key_path(std::string_view key) const {
  return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
}

int TomlTableReader::line_of(std::string_view key) const {
  if (const auto* node = table_.get(key)) return source_line(*node);
  return source_line(table_);
}

void TomlTableReader::fail(std::string_view key, std::string_view problem) const {
  throw std::invalid_argument(
      fmt::format("{}:{}: {}: {}", file_.string(), line_of(key), key_path(key), one_line(problem)));
}

void TomlTableReader::fail_wrong_type(std::string_view key, std::string_view expected) const {
  fail(key, fmt::format("expected {}, got {}", expected, type_name(table_.get(key)->type())));
}

const toml::node& TomlTableReader::required(std::string_view key) const {
  const auto* node = table_.get(key);
  if (node == nullptr) {
    const std::string where = prefix_.empty() ? "" : fmt::format(" in [{}]", prefix_);
    fail(key, fmt::format("missing required key{}", where));
  }
  return *node;
}

std::string TomlTableReader::string(std::string_view key) const {
  const auto* value = required(key).as_string();
  if (value == nullptr) fail_wrong_type(key, "a string");
  if (value->get().empty()) fail(key, "must not be empty");
  return value->get();
}

std::optional<std::string> TomlTableReader::optional_string(std::string_view key) const {
  if (!table_.contains(key)) return std::nullopt;
  return string(key);
}

std::string TomlTableReader::text_or_empty(std::string_view key) const {
  if (!table_.contains(key)) return "";
  const auto* value = table_.get(key)->as_string();
  if (value == nullptr) fail_wrong_type(key, "a string");
  return value->get();
}

bool TomlTableReader::boolean(std::string_view key) const {
  const auto* value = required(key).as_boolean();
  if (value == nullptr) fail_wrong_type(key, "a boolean (true or false)");
  return value->get();
}

std::optional<bool> TomlTableReader::optional_boolean(std::string_view key) const {
  if (!table_.contains(key)) return std::nullopt;
  return boolean(key);
}

void TomlTableReader::check_bound(std::string_view key, double value, Bound bound) const {
  switch (bound) {
    case Bound::Positive:
      if (!(value > 0)) fail(key, fmt::format("must be positive, got {}", value));
      break;
    case Bound::NonNegative:
      if (!(value >= 0)) fail(key, fmt::format("must not be negative, got {}", value));
      break;
    case Bound::AtLeastOne:
      if (!(value >= 1)) fail(key, fmt::format("must be at least 1, got {}", value));
      break;
  }
}

int TomlTableReader::integer(std::string_view key, Bound bound) const {
  const auto* value = required(key).as_integer();
  if (value == nullptr) fail_wrong_type(key, "an integer");
  const std::int64_t raw = value->get();
  check_bound(key, static_cast<double>(raw), bound);
  if (raw > std::numeric_limits<int>::max()) fail(key, fmt::format("{} is too large", raw));
  return static_cast<int>(raw);
}

std::optional<int> TomlTableReader::optional_integer(std::string_view key, Bound bound) const {
  if (!table_.contains(key)) return std::nullopt;
  return integer(key, bound);
}

double TomlTableReader::number(std::string_view key, Bound bound) const {
  const auto& node = required(key);
  double value = 0;
  if (const auto* floating = node.as_floating_point()) {
    value = floating->get();
  } else if (const auto* integral = node.as_integer()) {
    value = static_cast<double>(integral->get());
  } else {
    fail_wrong_type(key, "a number");
  }
  if (!std::isfinite(value)) fail(key, fmt::format("must be finite, got {}", value));
  check_bound(key, value, bound);
  return value;
}

std::optional<double> TomlTableReader::optional_number(std::string_view key, Bound bound) const {
  if (!table_.contains(key)) return std::nullopt;
  return number(key, bound);
}

const toml::table* TomlTableReader::optional_table(std::string_view key) const {
  if (!table_.contains(key)) return nullptr;
  return &table(key);
}

const toml::table& TomlTableReader::table(std::string_view key) const {
  const auto* value = required(key).as_table();
  if (value == nullptr) fail_wrong_type(key, "a table");
  return *value;
}

std::vector<const toml::table*> TomlTableReader::table_array(std::string_view key) const {
  const auto* array = required(key).as_array();
  if (array == nullptr) fail_wrong_type(key, "an array of tables");
  if (array->empty()) fail(key, "must not be empty");
  std::vector<const toml::table*> tables;
  for (const auto& element : *array) {
    const auto* element_table = element.as_table();
    if (element_table == nullptr) {
      throw std::invalid_argument(fmt::format("{}:{}: {}[{}]: expected a table, got {}", file_.string(),
                                              source_line(element), key_path(key), tables.size(),
                                              type_name(element.type())));
    }
    tables.push_back(element_table);
  }
  return tables;
}

}  // namespace nestfast::io
