#include "comm/plan/traffic_matrix.hpp"

#include <numeric>
#include <stdexcept>
#include <string>

namespace nestfast::comm {

TrafficMatrix::TrafficMatrix(int ranks) : TrafficMatrix(ranks, std::vector<std::uint64_t>(
                                                                   ranks > 0 ? static_cast<std::size_t>(ranks) * ranks : 0)) {}

TrafficMatrix::TrafficMatrix(int ranks, std::vector<std::uint64_t> row_major_bytes)
    : ranks_(ranks), bytes_(std::move(row_major_bytes)) {
  if (ranks < 0) throw std::invalid_argument("traffic matrix: negative rank count " + std::to_string(ranks));
  const std::size_t expected = static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks);
  if (bytes_.size() != expected) {
    throw std::invalid_argument("traffic matrix: " + std::to_string(bytes_.size()) + " entries for " +
                                std::to_string(ranks) + " ranks (expected " + std::to_string(expected) + ")");
  }
}

std::span<const std::uint64_t> TrafficMatrix::row(int src) const {
  return {bytes_.data() + index(src, 0), static_cast<std::size_t>(ranks_)};
}

std::uint64_t TrafficMatrix::row_sum(int src) const {
  const auto r = row(src);
  return std::accumulate(r.begin(), r.end(), std::uint64_t{0});
}

std::uint64_t TrafficMatrix::col_sum(int dst) const {
  std::uint64_t sum = 0;
  for (int g = 0; g < ranks_; ++g) sum += (*this)(g, dst);
  return sum;
}

std::uint64_t TrafficMatrix::total() const {
  return std::accumulate(bytes_.begin(), bytes_.end(), std::uint64_t{0});
}

void TrafficMatrix::check_total(const std::string& what) const {
  std::uint64_t sum = 0;
  for (const std::uint64_t bytes : bytes_) {
    if (bytes > kMaxTotalBytes - sum) {
      throw std::invalid_argument(what + ": the demand adds up to more than " + std::to_string(kMaxTotalBytes) +
                                  " bytes (2^50, 1 PiB), the most one alltoallv may move");
    }
    sum += bytes;
  }
}

std::vector<std::uint64_t> TrafficMatrix::send_displacements(int src) const {
  std::vector<std::uint64_t> displs(static_cast<std::size_t>(ranks_));
  std::uint64_t position = 0;
  for (int h = 0; h < ranks_; ++h) {
    displs[h] = position;
    position += (*this)(src, h);
  }
  return displs;
}

std::vector<std::uint64_t> TrafficMatrix::recv_counts(int dst) const {
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(ranks_));
  for (int g = 0; g < ranks_; ++g) counts[g] = (*this)(g, dst);
  return counts;
}

std::vector<std::uint64_t> TrafficMatrix::recv_displacements(int dst) const {
  std::vector<std::uint64_t> displs(static_cast<std::size_t>(ranks_));
  std::uint64_t position = 0;
  for (int g = 0; g < ranks_; ++g) {
    displs[g] = position;
    position += (*this)(g, dst);
  }
  return displs;
}

}  // namespace nestfast::comm
