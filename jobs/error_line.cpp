#include "jobs/error_line.hpp"

#include <cstdio>

#include <fmt/format.h>

namespace nestfast::jobs {

std::string one_line(std::string_view message) {
  std::string line;
  line.reserve(message.size());
  for (const char byte : message) {
    const auto code = static_cast<unsigned char>(byte);
    if (code == '\n') {
      line += "\\n";
    } else if (code == '\r') {
      line += "\\r";
    } else if (code == '\t') {
      line += "\\t";
    } else if (code < 0x20 || code == 0x7f) {
      line += fmt::format("\\x{:02x}", code);
    } else {
      line += byte;
    }
  }
  return line;
}

void print_error_line(std::string_view message, int rank) {
  const std::string line = one_line(message);
  if (rank < 0) {
    std::fprintf(stderr, "nestfast: error: %s\n", line.c_str());
  } else {
    std::fprintf(stderr, "nestfast: rank %d: error: %s\n", rank, line.c_str());
  }
  std::fflush(stderr);
}

}  // namespace nestfast::jobs
