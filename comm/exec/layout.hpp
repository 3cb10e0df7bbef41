#pragma once
// One rank's side of an alltoallv, in bytes: how much it sends to and
// receives from every rank, and where each block lies in its buffers.
#include <cstdint>
#include <vector>

#include "comm/plan/traffic_matrix.hpp"

namespace nestfast::comm {

struct AlltoallvLayout {
  std::vector<std::uint64_t> send_counts;
  std::vector<std::uint64_t> send_displs;
  std::vector<std::uint64_t> recv_counts;
  std::vector<std::uint64_t> recv_displs;

  int ranks() const { return static_cast<int>(send_counts.size()); }
  std::uint64_t send_bytes() const;  // extent of the send buffer
  std::uint64_t recv_bytes() const;  // extent of the receive buffer
};

// Rank `rank`'s side of a whole matrix, blocks back to back in rank order
// (the benchmark and the validation phase know the whole matrix).
AlltoallvLayout layout_of_rank(const TrafficMatrix& demand, int rank);

}  // namespace nestfast::comm
