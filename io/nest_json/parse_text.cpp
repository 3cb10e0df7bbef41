#include "io/nest_json/parse_text.hpp"

#include <algorithm>
#include <stdexcept>

#include "io/host/files.hpp"

namespace nestfast::io::nest_json {

namespace {

// The last "key": before `offset`, or "" when there is none.
std::string key_before(std::string_view text, std::size_t offset) {
  std::size_t position = std::min(offset, text.size());
  while (position > 0) {
    const std::size_t colon = text.rfind(':', position - 1);
    if (colon == std::string_view::npos) return "";
    std::size_t end = colon;
    while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\n' || text[end - 1] == '\r')) {
      --end;
    }
    if (end > 0 && text[end - 1] == '"') {
      const std::size_t open = text.rfind('"', end - 2);
      if (open != std::string_view::npos) return std::string(text.substr(open + 1, end - 2 - open));
    }
    position = colon;
  }
  return "";
}

}  // namespace

nlohmann::json parse_text(std::string_view text, const std::string& source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& error) {
    const std::size_t offset = error.byte > 0 ? error.byte - 1 : 0;
    std::size_t line = 1;
    for (std::size_t index = 0; index < offset && index < text.size(); ++index) line += text[index] == '\n' ? 1 : 0;
    const std::string key = key_before(text, offset);
    std::string message = source + ":" + std::to_string(line) + ": invalid JSON";
    if (!key.empty()) message += " in the value of key \"" + key + "\"";
    message += " (NaN and Infinity are not JSON numbers)";
    throw std::invalid_argument(message);
  } catch (const nlohmann::json::out_of_range& error) {
    // A number beyond a double, e.g. 4e089049 (found by fuzz_nest_json): the
    // parser throws out_of_range, not parse_error.
    throw std::invalid_argument(source + ": invalid JSON: a number does not fit a double (" + error.what() + ")");
  }
}

std::string read_text_file(const std::string& path) {
  // The artifact's largest inputs are a few MB; 256 MiB leaves room and refuses a stray device or data file.
  return read_input_file(path, "JSON file", std::uint64_t{256} << 20);
}

}  // namespace nestfast::io::nest_json
