#include "solver/search/strategy_space.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace nestfast::search {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (c == separator) {
      parts.push_back(current);
      current.clear();
    } else if (c != ' ') {
      current.push_back(c);
    }
  }
  parts.push_back(current);
  return parts;
}

bool means_all(const std::string& text) {
  std::string trimmed;
  for (char c : text) {
    if (c != ' ') trimmed.push_back(c);
  }
  return trimmed.empty() || trimmed == "all";
}

}  // namespace

std::vector<int> parse_int_list(const std::string& text, const std::string& what, int minimum) {
  if (means_all(text)) return {};
  std::vector<int> values;
  for (const auto& item : split(text, ',')) {
    int value = 0;
    const auto* end = item.data() + item.size();
    const auto [ptr, ec] = std::from_chars(item.data(), end, value);
    if (item.empty() || ec != std::errc() || ptr != end) {
      throw std::invalid_argument(what + ": '" + item + "' is not an integer (expected a list like 1,2,4 or 'all')");
    }
    if (value < minimum) {
      throw std::invalid_argument(what + ": " + std::to_string(value) + " is below the minimum " +
                                  std::to_string(minimum));
    }
    values.push_back(value);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::vector<Recompute> parse_recompute_list(const std::string& text, const std::string& what) {
  if (means_all(text)) return {};
  std::vector<Recompute> modes;
  for (const auto& item : split(text, ',')) modes.push_back(parse_recompute(item, what));
  std::sort(modes.begin(), modes.end());
  modes.erase(std::unique(modes.begin(), modes.end()), modes.end());
  return modes;
}

std::vector<std::vector<ParallelDim>> parse_placement_list(const std::string& text, const std::string& what) {
  if (means_all(text)) return {};
  static const std::vector<ParallelDim> kDefaultOrder = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep,
                                                         ParallelDim::Dp, ParallelDim::Pp};
  std::vector<std::vector<ParallelDim>> orders;
  for (const auto& order_text : split(text, ';')) {
    std::vector<ParallelDim> order;
    for (const auto& item : split(order_text, ',')) {
      const ParallelDim dim = parse_parallel_dim(item, what);
      if (std::find(order.begin(), order.end(), dim) != order.end()) {
        throw std::invalid_argument(what + ": '" + order_text + "' names " + item + " twice");
      }
      order.push_back(dim);
    }
    for (ParallelDim dim : kDefaultOrder) {
      if (std::find(order.begin(), order.end(), dim) == order.end()) order.push_back(dim);
    }
    orders.push_back(order);
  }
  return orders;
}

std::string placement_to_string(const std::vector<ParallelDim>& placement) {
  std::string text;
  for (ParallelDim dim : placement) {
    if (!text.empty()) text += ',';
    text += to_string(dim);
  }
  return text;
}

}  // namespace nestfast::search
