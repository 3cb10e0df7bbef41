#include "comm/exec/size_range.hpp"

#include <CLI/CLI.hpp>

#include <cctype>
#include <charconv>
#include <stdexcept>

namespace nestfast::comm {
namespace {

std::invalid_argument bad(const std::string& what, const std::string& text, const std::string& why) {
  return std::invalid_argument(what + ": \"" + text + "\": " + why);
}

}  // namespace

std::uint64_t parse_size(const std::string& text, const std::string& what, bool allow_zero) {
  // The shape first: CLI11 would read "-1" as 2^64 - 1 and "010" as octal.
  std::size_t begin = text.find_first_not_of(' ');
  if (begin == std::string::npos) throw bad(what, text, "empty, expected a size such as 4096, 64K or 1MiB");
  if (text[begin] == '-') throw bad(what, text, "a size cannot be negative");
  if (text.find(':') != std::string::npos) throw bad(what, text, "give one size, not a range");
  std::size_t digits = begin;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::size_t unit = digits;
  while (unit < text.size() && text[unit] == ' ') ++unit;
  std::size_t end = unit;
  while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
  if (digits == begin || text.find_first_not_of(' ', end) != std::string::npos) {
    throw bad(what, text, "not a size (digits and an optional unit: B, K, KB, KiB, M, MB, MiB, G, ... E; 1K = 1024)");
  }
  while (begin + 1 < digits && text[begin] == '0') ++begin;  // decimal, whatever CLI11 makes of a leading zero
  std::string value = text.substr(begin, digits - begin) + text.substr(unit, end - unit);
  try {
    const std::string failure = CLI::AsSizeValue(false)(value);
    if (!failure.empty()) throw bad(what, text, failure);
  } catch (const CLI::ValidationError& error) {
    throw bad(what, text, error.what());
  }
  std::uint64_t bytes = 0;
  const auto [stop, error] = std::from_chars(value.data(), value.data() + value.size(), bytes);
  if (error == std::errc::result_out_of_range) throw bad(what, text, "more than 2^64 - 1 bytes");
  if (error != std::errc{} || stop != value.data() + value.size()) throw bad(what, text, "not a size");
  if (bytes == 0 && !allow_zero) throw bad(what, text, "sizes start at 1 byte");
  return bytes;
}

std::vector<std::uint64_t> parse_size_range(const std::string& text, const std::string& what) {
  const auto colon = text.find(':');
  if (colon != std::string::npos && text.find(':', colon + 1) != std::string::npos) {
    throw bad(what, text, "expected one size or MIN:MAX");
  }
  std::uint64_t low = 0;
  std::uint64_t high = 0;
  try {
    low = parse_size(text.substr(0, colon), what);
    high = colon == std::string::npos ? low : parse_size(text.substr(colon + 1), what);
  } catch (const std::invalid_argument& error) {
    if (colon == std::string::npos) throw;
    throw bad(what, text, std::string(error.what()).substr(what.size() + 2));  // name the whole range
  }
  if (low > high) throw bad(what, text, "MIN is above MAX");
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
