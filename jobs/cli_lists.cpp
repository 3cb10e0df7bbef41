#include "jobs/cli_lists.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "solver/search/strategy_space.hpp"

namespace nestfast::jobs {
namespace {

bool means_all(const std::vector<std::string>& items) {
  return items.empty() || (items.size() == 1 && (items.front() == "all" || items.front().empty()));
}

template <typename T>
std::vector<T> sorted_unique(std::vector<T> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

}  // namespace

CLI::Option* add_list_option(CLI::App& command, const std::string& name, std::vector<std::string>& items,
                             const std::string& description, char delimiter) {
  return command.add_option(name, items, description)->delimiter(delimiter);
}

int parse_int(const std::string& item, const std::string& what, int minimum, int maximum) {
  int value = 0;
  const char* end = item.data() + item.size();
  const auto [stop, error] = std::from_chars(item.data(), end, value);
  if (item.empty() || error != std::errc() || stop != end) {
    throw std::invalid_argument(what + ": '" + item + "' is not an integer");
  }
  if (value < minimum || value > maximum) {
    throw std::invalid_argument(what + ": " + item + " is not in " + std::to_string(minimum) + ".." +
                                std::to_string(maximum));
  }
  return value;
}

std::vector<int> int_list(const std::vector<std::string>& items, const std::string& what, int minimum, int maximum) {
  if (means_all(items)) return {};
  std::vector<int> values;
  for (const std::string& item : items) values.push_back(parse_int(item, what, minimum, maximum));
  return sorted_unique(std::move(values));
}

std::vector<Recompute> recompute_list(const std::vector<std::string>& items, const std::string& what) {
  if (means_all(items)) return {};
  std::vector<Recompute> modes;
  for (const std::string& item : items) modes.push_back(parse_recompute(item, what));
  return sorted_unique(std::move(modes));
}

std::vector<RecomputeModules> module_set_list(const std::vector<std::string>& items, const std::string& what) {
  if (means_all(items) || (items.size() == 1 && items.front() == "auto")) return {};
  std::vector<RecomputeModules> sets;
  for (const std::string& item : items) {
    const RecomputeModules set = parse_recompute_modules(item, what);
    if (std::find(sets.begin(), sets.end(), set) != sets.end())
      throw std::invalid_argument(what + ": the set '" + item + "' is listed twice");
    sets.push_back(set);
  }
  return sets;
}

std::vector<std::vector<ParallelDim>> placement_list(const std::vector<std::string>& items, const std::string& what) {
  if (means_all(items)) return {};
  std::vector<std::vector<ParallelDim>> orders;
  for (const std::string& item : items) orders.push_back(search::parse_placement(item, what));
  return orders;
}

}  // namespace nestfast::jobs
