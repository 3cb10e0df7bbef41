#include "comm/exec/layout.hpp"

#include <algorithm>
#include <span>

namespace nestfast::comm {

namespace {

std::uint64_t extent(const std::vector<std::uint64_t>& counts, const std::vector<std::uint64_t>& displs) {
  std::uint64_t end = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] != 0) end = std::max(end, displs[i] + counts[i]);
  }
  return end;
}

}  // namespace

std::uint64_t AlltoallvLayout::send_bytes() const { return extent(send_counts, send_displs); }
std::uint64_t AlltoallvLayout::recv_bytes() const { return extent(recv_counts, recv_displs); }

AlltoallvLayout layout_of_rank(const TrafficMatrix& demand, int rank) {
  const std::span<const std::uint64_t> row = demand.row(rank);
  return {std::vector<std::uint64_t>(row.begin(), row.end()), demand.send_displacements(rank),
          demand.recv_counts(rank), demand.recv_displacements(rank)};
}

}  // namespace nestfast::comm
