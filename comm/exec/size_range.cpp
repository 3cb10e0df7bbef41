#include "comm/exec/size_range.hpp"

#include <charconv>
#include <limits>
#include <stdexcept>

namespace nestfast::comm {

namespace {

std::uint64_t parse_size(const std::string& text, const std::string& what) {
  std::uint64_t value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  const auto [stop, error] = std::from_chars(begin, end, value);
  const std::string unit(stop, end);
  std::uint64_t scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "k" || unit == "KiB") scale = std::uint64_t{1} << 10;
  else if (unit == "M" || unit == "m" || unit == "MiB") scale = std::uint64_t{1} << 20;
  else if (unit == "G" || unit == "g" || unit == "GiB") scale = std::uint64_t{1} << 30;
  if (error != std::errc{} || stop == begin || scale == 0) {
    throw std::invalid_argument(what + ": '" + text + "' is not a size (bytes, optionally B, K, M, G, KiB, MiB, GiB)");
  }
  if (value == 0) throw std::invalid_argument(what + ": sizes must be at least 1 byte");
  if (value > std::numeric_limits<std::uint64_t>::max() / scale) throw std::invalid_argument(what + ": '" + text + "' is too large");
  return value * scale;
}

}  // namespace

std::vector<std::uint64_t> parse_size_range(const std::string& text, const std::string& what) {
  const auto colon = text.find(':');
  const std::uint64_t low = parse_size(text.substr(0, colon), what);
  const std::uint64_t high = colon == std::string::npos ? low : parse_size(text.substr(colon + 1), what);
  if (low > high) throw std::invalid_argument(what + ": MIN " + text.substr(0, colon) + " is above MAX");
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = low; size <= high; size *= 2) {
    sizes.push_back(size);
    if (size > high / 2) break;
  }
  return sizes;
}

std::string format_size(std::uint64_t bytes) {
  const char* suffixes[] = {"G", "M", "K"};
  const int shifts[] = {30, 20, 10};
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t unit = std::uint64_t{1} << shifts[i];
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + suffixes[i];
  }
  return std::to_string(bytes);
}

}  // namespace nestfast::comm
