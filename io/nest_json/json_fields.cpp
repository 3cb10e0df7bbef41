#include "io/nest_json/json_fields.hpp"

#include <cmath>
#include <stdexcept>

namespace nestfast::io::nest_json {

void FieldReader::fail(const std::string& path, const std::string& message) const {
  throw std::invalid_argument(source_ + ": " + path + ": " + message);
}

const nlohmann::json& FieldReader::member(const nlohmann::json& object, const std::string& path,
                                          const char* key) const {
  const auto found = object.find(key);
  if (found == object.end()) fail(join(path, key), "missing key");
  return *found;
}

void FieldReader::require_object(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_object()) fail(path, std::string("expected an object, got ") + value.type_name());
}

void FieldReader::require_array(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_array()) fail(path, std::string("expected an array, got ") + value.type_name());
}

void FieldReader::only_keys(const nlohmann::json& object, const std::string& path,
                            std::initializer_list<const char*> allowed) const {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (const char* name : allowed) known = known || key == name;
    if (!known) fail(join(path, key), "unknown key");
  }
}

double FieldReader::finite_number(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_number()) fail(path, std::string("expected a number, got ") + value.type_name());
  const double number = value.get<double>();
  if (!std::isfinite(number)) fail(path, "not a finite number");
  return number;
}

double FieldReader::positive_number(const nlohmann::json& value, const std::string& path) const {
  const double number = finite_number(value, path);
  if (!(number > 0.0)) fail(path, "must be > 0, got " + value.dump());
  return number;
}

double FieldReader::non_negative_number(const nlohmann::json& value, const std::string& path) const {
  const double number = finite_number(value, path);
  if (number < 0.0) fail(path, "must be >= 0, got " + value.dump());
  return number;
}

std::int64_t FieldReader::integer(const nlohmann::json& value, const std::string& path, std::int64_t minimum) const {
  std::int64_t number = 0;
  if (value.is_number_unsigned()) {
    const auto unsigned_number = value.get<std::uint64_t>();
    if (unsigned_number > static_cast<std::uint64_t>(INT64_MAX)) fail(path, "too large: " + value.dump());
    number = static_cast<std::int64_t>(unsigned_number);
  } else if (value.is_number_integer()) {
    number = value.get<std::int64_t>();
  } else if (value.is_number_float()) {
    const double real = value.get<double>();
    if (!std::isfinite(real) || real != std::floor(real) || std::fabs(real) >= 9.2e18) {
      fail(path, "expected an integer, got " + value.dump());
    }
    number = static_cast<std::int64_t>(real);
  } else {
    fail(path, std::string("expected an integer, got ") + value.type_name());
  }
  if (number < minimum) fail(path, "must be >= " + std::to_string(minimum) + ", got " + std::to_string(number));
  return number;
}

bool FieldReader::boolean(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_boolean()) fail(path, std::string("expected true or false, got ") + value.type_name());
  return value.get<bool>();
}

std::string FieldReader::string(const nlohmann::json& value, const std::string& path) const {
  if (!value.is_string()) fail(path, std::string("expected a string, got ") + value.type_name());
  return value.get<std::string>();
}

}  // namespace nestfast::io::nest_json
