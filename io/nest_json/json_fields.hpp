#pragma once
// Typed, strict access to JSON fields for the NEST reader: each getter names
// the full key path (e.g. nodes.1[3].optimalLatencyFw) in its one-line error.
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

namespace nestfast::io::nest_json {

class FieldReader {
 public:
  explicit FieldReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& message) const;

  const nlohmann::json& member(const nlohmann::json& object, const std::string& path, const char* key) const;
  void require_object(const nlohmann::json& value, const std::string& path) const;
  void require_array(const nlohmann::json& value, const std::string& path) const;
  // Rejects keys outside `allowed`.
  void only_keys(const nlohmann::json& object, const std::string& path,
                 std::initializer_list<const char*> allowed) const;

  double finite_number(const nlohmann::json& value, const std::string& path) const;
  double positive_number(const nlohmann::json& value, const std::string& path) const;
  double non_negative_number(const nlohmann::json& value, const std::string& path) const;
  // Integers (an integral float such as 64.0 is accepted) in [minimum, 2^63).
  std::int64_t integer(const nlohmann::json& value, const std::string& path, std::int64_t minimum) const;
  bool boolean(const nlohmann::json& value, const std::string& path) const;
  std::string string(const nlohmann::json& value, const std::string& path) const;

  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

inline std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
inline std::string at(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

}  // namespace nestfast::io::nest_json
