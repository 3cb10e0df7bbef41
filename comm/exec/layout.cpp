#include "comm/exec/layout.hpp"

#include <algorithm>
#include <utility>

namespace nestfast::comm {

namespace {

std::vector<std::uint64_t> exclusive_prefix_sum(const std::vector<std::uint64_t>& counts) {
  std::vector<std::uint64_t> displs(counts.size(), 0);
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = offset;
    offset += counts[i];
  }
  return displs;
}

std::uint64_t extent(const std::vector<std::uint64_t>& counts, const std::vector<std::uint64_t>& displs) {
  std::uint64_t end = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] != 0) end = std::max(end, displs[i] + counts[i]);
  }
  return end;
}

}  // namespace

AlltoallvLayout AlltoallvLayout::packed(std::vector<std::uint64_t> send_counts,
                                        std::vector<std::uint64_t> recv_counts) {
  AlltoallvLayout layout;
  layout.send_displs = exclusive_prefix_sum(send_counts);
  layout.recv_displs = exclusive_prefix_sum(recv_counts);
  layout.send_counts = std::move(send_counts);
  layout.recv_counts = std::move(recv_counts);
  return layout;
}

std::uint64_t AlltoallvLayout::send_bytes() const { return extent(send_counts, send_displs); }
std::uint64_t AlltoallvLayout::recv_bytes() const { return extent(recv_counts, recv_displs); }

AlltoallvLayout layout_of_rank(const TrafficCounts& counts, int rank) {
  std::vector<std::uint64_t> send(counts.ranks), recv(counts.ranks);
  for (int peer = 0; peer < counts.ranks; ++peer) {
    send[peer] = counts.at(rank, peer);
    recv[peer] = counts.at(peer, rank);
  }
  return AlltoallvLayout::packed(std::move(send), std::move(recv));
}

}  // namespace nestfast::comm
