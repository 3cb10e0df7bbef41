#pragma once
// One rank's side of an alltoallv, in bytes: how much it sends to and
// receives from every rank, and where each block lies in its buffers.
#include <cstdint>
#include <vector>

namespace nestfast::comm {

struct AlltoallvLayout {
  std::vector<std::uint64_t> send_counts;
  std::vector<std::uint64_t> send_displs;
  std::vector<std::uint64_t> recv_counts;
  std::vector<std::uint64_t> recv_displs;

  // Blocks laid out back to back in rank order.
  static AlltoallvLayout packed(std::vector<std::uint64_t> send_counts, std::vector<std::uint64_t> recv_counts);

  int ranks() const { return static_cast<int>(send_counts.size()); }
  std::uint64_t send_bytes() const;  // extent of the send buffer
  std::uint64_t recv_bytes() const;  // extent of the receive buffer
};

// The whole exchange as every rank sees it after the counts were gathered:
// bytes[src * ranks + dst] = bytes src sends to dst.
struct TrafficCounts {
  int ranks = 0;
  std::vector<std::uint64_t> bytes;

  std::uint64_t at(int src, int dst) const { return bytes[static_cast<std::size_t>(src) * ranks + dst]; }
};

// The layout of rank `rank` for a global matrix (the benchmark knows the whole matrix).
AlltoallvLayout layout_of_rank(const TrafficCounts& counts, int rank);

}  // namespace nestfast::comm
