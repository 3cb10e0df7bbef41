#include "comm/plan/intra_server_balance.hpp"

#include <algorithm>

namespace nestfast::comm {

namespace {

// Bytes each rank holds for each server before the balance, laid out so
// that the GPUs of server s holding data for t are contiguous: entry
// (s, t, i) at server_base[s] + t * gpus_on(s) + i.
struct StreamLengths {
  std::vector<std::size_t> server_base;
  std::vector<std::uint64_t> bytes;
  const std::uint64_t* of(const ServerMap& map, int s, int t) const {
    return &bytes[server_base[s] + static_cast<std::size_t>(t) * static_cast<std::size_t>(map.gpus_on(s))];
  }
};

StreamLengths stream_lengths(const TrafficMatrix& demand, const ServerMap& map) {
  const auto servers = static_cast<std::size_t>(map.servers());
  StreamLengths lengths;
  lengths.server_base.assign(servers + 1, 0);
  for (std::size_t s = 0; s < servers; ++s) {
    lengths.server_base[s + 1] = lengths.server_base[s] + servers * static_cast<std::size_t>(map.gpus_on(static_cast<int>(s)));
  }
  lengths.bytes.assign(lengths.server_base.back(), 0);
  for (int g = 0; g < map.ranks(); ++g) {
    const int s = map.server_of(g);
    const auto m = static_cast<std::size_t>(map.gpus_on(s));
    std::uint64_t* out = &lengths.bytes[lengths.server_base[s] + static_cast<std::size_t>(map.local_index(g))];
    const auto row = demand.row(g);
    for (int t = 0; t < map.servers(); ++t) {  // summed in a register, server by server
      std::uint64_t sum = 0;
      for (int j = 0; j < map.gpus_on(t); ++j) sum += row[map.rank_at(t, j)];
      out[static_cast<std::size_t>(t) * m] = sum;
    }
  }
  return lengths;
}

// The balance of one pair (s, t): calls keep(rank, bytes) for the prefix each
// GPU keeps, then move(from, to, begin, end) for every handed range, in
// stream order of each taker. Returns the lane cap T.
template <class Keep, class Move>
std::uint64_t balance_pair(const StreamLengths& lengths, const ServerMap& map, int s, int t, Keep&& keep, Move&& move) {
  const int gpus = map.gpus_on(s);
  const int lanes = map.lanes(s, t);
  const std::uint64_t* const held_bytes = lengths.of(map, s, t);
  auto held = [&](int i) { return held_bytes[i]; };
  std::uint64_t total = 0;
  for (int i = 0; i < gpus; ++i) total += held(i);
  if (total == 0) return 0;
  const auto lane_count = static_cast<std::uint64_t>(lanes);
  const std::uint64_t cap = (total + lane_count - 1) / lane_count;
  auto cap_of = [&](int i) { return i < lanes ? cap : std::uint64_t{0}; };
  for (int i = 0; i < gpus; ++i) {
    const std::uint64_t kept = std::min(held(i), cap_of(i));
    if (kept > 0) keep(map.rank_at(s, i), kept);
  }
  int donor = 0, taker = 0;
  std::uint64_t donor_position = 0, donor_excess = 0, taker_room = 0;
  auto load_donor = [&] {
    for (; donor < gpus; ++donor) {
      const std::uint64_t kept = std::min(held(donor), cap_of(donor));
      donor_position = kept;
      donor_excess = held(donor) - kept;
      if (donor_excess > 0) return;
    }
  };
  auto load_taker = [&] {
    for (; taker < lanes; ++taker) {
      taker_room = cap - std::min(held(taker), cap);
      if (taker_room > 0) return;
    }
  };
  load_donor();
  load_taker();
  while (donor < gpus && taker < lanes) {
    const std::uint64_t amount = std::min(donor_excess, taker_room);
    move(map.rank_at(s, donor), map.rank_at(s, taker), donor_position, donor_position + amount);
    donor_position += amount;
    donor_excess -= amount;
    taker_room -= amount;
    if (donor_excess == 0) {
      ++donor;
      load_donor();
    }
    if (taker_room == 0) {
      ++taker;
      load_taker();
    }
  }
  return cap;
}

}  // namespace

BalancedStreams balance_servers(const TrafficMatrix& demand, const ServerMap& map) {
  const int servers = map.servers();
  const auto S = static_cast<std::size_t>(servers);
  const auto N = static_cast<std::size_t>(map.ranks());
  const StreamLengths lengths = stream_lengths(demand, map);
  BalancedStreams out;
  out.server_matrix.assign(S * S, 0);
  out.rail_begin.assign(N * S + 1, 0);
  auto slot = [&](int rank, int t) { return static_cast<std::size_t>(rank) * S + static_cast<std::size_t>(t); };

  // Moves are stored sorted by (from, to, server, begin) without sorting:
  // pass 1 counts them per (from, local index of to), pass 2 places them;
  // each pair's moves are made in (server, begin) order.
  std::vector<std::size_t> pair_offset(N + 1, 0);
  for (int g = 0; g < map.ranks(); ++g) pair_offset[g + 1] = pair_offset[g] + static_cast<std::size_t>(map.gpus_on(map.server_of(g)));
  auto pair = [&](int from, int to) { return pair_offset[from] + static_cast<std::size_t>(map.local_index(to)); };
  std::vector<std::size_t> pair_begin(pair_offset.back() + 1, 0);

  // Pass 1: the number of segments of every stream, the caps, the move counts.
  for (int s = 0; s < servers; ++s) {
    for (int t = 0; t < servers; ++t) {
      if (s == t) continue;
      out.server_matrix[static_cast<std::size_t>(s) * S + static_cast<std::size_t>(t)] = balance_pair(
          lengths, map, s, t, [&](int rank, std::uint64_t) { ++out.rail_begin[slot(rank, t) + 1]; },
          [&](int from, int to, std::uint64_t, std::uint64_t) {
            ++out.rail_begin[slot(to, t) + 1];
            ++pair_begin[pair(from, to) + 1];
          });
    }
  }
  for (std::size_t i = 0; i < N * S; ++i) out.rail_begin[i + 1] += out.rail_begin[i];
  for (std::size_t i = 1; i < pair_begin.size(); ++i) pair_begin[i] += pair_begin[i - 1];
  out.moves.resize(pair_begin.back());

  // Pass 2: fill the streams, kept prefix first, then taken ranges in order.
  out.rail_segments.resize(out.rail_begin.back());
  std::vector<std::uint32_t> fill(out.rail_begin.begin(), out.rail_begin.end() - 1);
  for (int s = 0; s < servers; ++s) {
    for (int t = 0; t < servers; ++t) {
      if (s == t) continue;
      balance_pair(
          lengths, map, s, t,
          [&](int rank, std::uint64_t kept) { out.rail_segments[fill[slot(rank, t)]++] = {rank, t, 0, kept}; },
          [&](int from, int to, std::uint64_t begin, std::uint64_t end) {
            out.rail_segments[fill[slot(to, t)]++] = {from, t, begin, end};
            out.moves[pair_begin[pair(from, to)]++] = {from, to, {from, t, begin, end}};
          });
    }
  }
  return out;
}

}  // namespace nestfast::comm
