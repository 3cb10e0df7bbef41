#include "jobs/cli_checks.hpp"

#include <charconv>
#include <cstdint>
#include <string>

namespace nestfast::jobs {

const CLI::Validator kUnsigned64(
    [](std::string& text) -> std::string {
      std::uint64_t value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || error != std::errc{} || end != text.data() + text.size()) {
        return "'" + text + "' is not an integer in [0, 2^64)";
      }
      return "";
    },
    "UINT64", "unsigned 64-bit");

void refuse_empty_values(CLI::App& app) {
  const CLI::Validator not_empty([](std::string& text) { return text.empty() ? std::string("an empty value") : ""; },
                                 "", "not empty");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_items_expected_max() > 0) option->check(not_empty);
  }
  for (CLI::App* command : app.get_subcommands({})) refuse_empty_values(*command);
}

}  // namespace nestfast::jobs
