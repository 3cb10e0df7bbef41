#pragma once
// Step 1 of FAST (comm.md section 1): for every pair of servers s != t, the
// GPUs of s even out the bytes they hold for t, so that each rail lane
// carries at most T = ceil(total / lanes(s, t)) bytes. GPUs above their cap
// hand the tail of their stream, donors and takers each in increasing local
// index, to the first GPUs below it.
#include <cstdint>
#include <vector>

#include "comm/plan/fast_plan.hpp"

namespace nestfast::comm {

struct BalancedStreams {
  std::vector<std::uint64_t> server_matrix;  // S x S, entry = T of the pair
  std::vector<BalanceMove> moves;            // sorted by (from, to, server, begin)
  std::vector<std::uint32_t> rail_begin;     // N*S + 1, CSR into rail_segments
  std::vector<StreamSegment> rail_segments;  // per (rank, server): kept own range first, then taken ranges
};

BalancedStreams balance_servers(const TrafficMatrix& demand, const ServerMap& map);

}  // namespace nestfast::comm
