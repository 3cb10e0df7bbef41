#include "comm/workload/matrix_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace nestfast::comm {
namespace {

std::invalid_argument bad(const std::string& source, int line, const std::string& why) {
  return std::invalid_argument("matrix file " + source + (line > 0 ? ":" + std::to_string(line) : std::string()) +
                               ": " + why);
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

// One strtod number filling the whole token: finite and >= 0.
double parse_value(const std::string& token, const std::string& source, int line) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(token.c_str(), &end);
  if (end == token.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(value)) {
    throw bad(source, line, "'" + token.substr(0, 40) + "' is not a number of bytes");
  }
  if (value < 0) throw bad(source, line, "'" + token + "' is negative");
  return value;
}

}  // namespace

double parse_matrix_scale(const std::string& text, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value) || value < 0) {
    throw std::invalid_argument(what + ": '" + text + "' is not a scale factor (a finite number >= 0)");
  }
  return value;
}

MatrixFile parse_matrix_file(std::string_view text, const std::string& source, int ranks, double scale) {
  if (ranks < 1) throw bad(source, 0, "need at least one rank");
  if (!std::isfinite(scale) || scale < 0) throw bad(source, 0, "the scale factor must be a finite number >= 0");
  if (text.size() > kMaxMatrixFileBytes) {
    throw bad(source, 0, std::to_string(text.size()) + " bytes, more than the " + std::to_string(kMaxMatrixFileBytes) +
                             " a matrix file may have");
  }
  const auto n = static_cast<std::size_t>(ranks);
  std::vector<std::uint64_t> kept(n * n, 0);
  std::size_t rows = 0, columns = 0, in_row = 0;
  int line = 1, row_line = 1;
  auto end_row = [&] {
    if (in_row == 0) return;
    if (rows == 0) columns = in_row;
    if (in_row != columns) {
      throw bad(source, row_line, std::to_string(in_row) + " values, the first row has " + std::to_string(columns));
    }
    ++rows;
    in_row = 0;
  };
  std::size_t position = 0;
  while (position < text.size()) {
    if (blank(text[position])) {
      if (text[position] == '\n') {
        end_row();
        ++line;
      }
      ++position;
      continue;
    }
    std::size_t stop = position;
    while (stop < text.size() && !blank(text[stop])) ++stop;
    const double value = parse_value(std::string(text.substr(position, stop - position)), source, line);
    const long double scaled = static_cast<long double>(value) * static_cast<long double>(scale);
    if (scaled > static_cast<long double>(UINT64_MAX)) {
      std::ostringstream shown;
      shown << "value " << text.substr(position, stop - position) << " x scale " << scale << " overflows 64 bits";
      throw bad(source, line, shown.str());
    }
    if (rows < n && in_row < n) {
      const auto bytes = static_cast<std::uint64_t>(scaled);
      kept[rows * n + in_row] = bytes - bytes % kMatrixAlignment;
    }
    if (in_row == 0) row_line = line;
    ++in_row;
    position = stop;
  }
  end_row();
  if (rows == 0) throw bad(source, 0, "is empty");
  if (rows != columns) {
    throw bad(source, 0, "is not square: " + std::to_string(rows) + " rows of " + std::to_string(columns) + " values");
  }
  if (n > rows) {
    throw bad(source, 0, "is " + std::to_string(rows) + " x " + std::to_string(rows) + ", smaller than the " +
                             std::to_string(ranks) + " ranks");
  }
  MatrixFile out{static_cast<int>(rows), TrafficMatrix(ranks, std::move(kept))};
  out.demand.check_total("matrix file " + source);
  return out;
}

std::uint64_t busiest_rank_bytes(const TrafficMatrix& demand) {
  std::uint64_t most = 0;
  for (int rank = 0; rank < demand.ranks(); ++rank) {
    std::uint64_t sent = 0, received = 0;
    for (int peer = 0; peer < demand.ranks(); ++peer) {
      sent += demand(rank, peer);
      received += demand(peer, rank);
    }
    most = std::max({most, sent, received});
  }
  return most;
}

}  // namespace nestfast::comm
