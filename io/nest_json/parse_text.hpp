#pragma once
// JSON text -> nlohmann::json with a one-line error naming the source, the
// line and the nearest key before the problem (JSON has no NaN or Infinity,
// so a NaN written by Python lands here).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace nestfast::io::nest_json {

nlohmann::json parse_text(std::string_view text, const std::string& source);
std::string read_text_file(const std::string& path);

}  // namespace nestfast::io::nest_json
