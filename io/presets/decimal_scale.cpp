#include "io/presets/decimal_scale.hpp"

#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace nestfast::io {

double decimal_scaled(double value, int exponent) {
  char digits[64] = {};
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);  // shortest round trip
  if (error != std::errc{}) throw std::logic_error("decimal_scaled: to_chars failed");
  std::string text(digits, end);
  // "6.69e+13" already has an exponent: add ours to it.
  if (const auto e = text.find_first_of("eE"); e != std::string::npos) {
    exponent += std::stoi(text.substr(e + 1));
    text.resize(e);
  }
  text += "e" + std::to_string(exponent);
  return std::strtod(text.c_str(), nullptr);
}

}  // namespace nestfast::io
