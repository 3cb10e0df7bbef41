#include "comm/plan/verify_plan.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <tuple>

#include "comm/plan/seeded_hash.hpp"

namespace nestfast::comm {

namespace {

// Order-independent sums of message hashes: what senders say they sent must
// equal, as a multiset, what receivers say they received (a 64-bit hash per
// message; a mismatch is certain, a false match has odds ~2^-64).
struct Ledger {
  std::uint64_t sent = 0, received = 0, sent_count = 0, received_count = 0;
};

enum Channel : std::uint64_t { kBalance = 1, kIntrinsic = 2, kRail = 3, kForward = 4 };

class Verifier {
 public:
  Verifier(const FastPlan& plan, std::size_t max_problems) : plan_(plan), map_(plan.map), max_(max_problems) {}

  std::vector<std::string> run() && {
    if (!shapes()) return std::move(problems_);
    stages();
    matrices();
    streams();
    for (int rank = 0; rank < map_.ranks() && !full(); ++rank) {
      try {
        ranks(rank_schedule(plan_, rank));
      } catch (const std::exception& error) {
        fail(std::string("rank ") + std::to_string(rank) + ": no schedule: " + error.what());
      }
    }
    for (std::uint64_t channel : {kBalance, kIntrinsic, kRail, kForward}) {
      const Ledger& ledger = ledgers_[channel];
      if (ledger.sent != ledger.received || ledger.sent_count != ledger.received_count) {
        fail("channel " + std::string(channel_name(channel)) + ": " + std::to_string(ledger.sent_count) +
             " messages sent and " + std::to_string(ledger.received_count) + " received do not match");
      }
    }
    return std::move(problems_);
  }

 private:
  static const char* channel_name(std::uint64_t channel) {
    switch (channel) {
      case kBalance: return "balance";
      case kIntrinsic: return "intrinsic";
      case kRail: return "rail";
      default: return "forward";
    }
  }
  bool full() const { return problems_.size() >= max_; }
  void fail(std::string problem) {
    if (!full()) problems_.push_back(std::move(problem));
  }
  std::size_t S() const { return static_cast<std::size_t>(map_.servers()); }
  std::uint64_t server_entry(const std::vector<std::uint64_t>& matrix, int s, int t) const {
    return matrix[static_cast<std::size_t>(s) * S() + static_cast<std::size_t>(t)];
  }

  bool shapes() {
    const std::size_t K = plan_.stage_count();
    const auto N = static_cast<std::size_t>(map_.ranks());
    if (plan_.demand.ranks() != map_.ranks()) fail("demand and server map disagree on the rank count");
    if (plan_.server_matrix.size() != S() * S() || plan_.padded_matrix.size() != S() * S()) fail("server matrices are not S x S");
    if (plan_.stage_perms.size() != K * S() || plan_.stage_sources.size() != K * S()) fail("stage permutations are not stages x S");
    if (plan_.rail_begin.size() != N * S() + 1 || plan_.rail_begin.back() != plan_.rail_segments.size()) {
      fail("rail stream index does not match the segments");
    }
    return problems_.empty();
  }

  void stages() {
    std::vector<std::uint64_t> seen(S());
    for (std::size_t k = 0; k < plan_.stage_count(); ++k) {
      const auto perm = plan_.stage_perm(k), source = plan_.stage_source(k);
      std::fill(seen.begin(), seen.end(), 0);
      for (std::size_t s = 0; s < S(); ++s) {
        if (perm[s] < 0 || static_cast<std::size_t>(perm[s]) >= S() || seen[perm[s]]++ != 0) {
          fail("stage " + std::to_string(k) + " is not a permutation (server " + std::to_string(s) + ")");
          break;
        }
        if (source[perm[s]] != static_cast<std::int32_t>(s)) fail("stage " + std::to_string(k) + ": sources are not the inverse");
      }
      if (plan_.stage_weights[k] == 0) fail("stage " + std::to_string(k) + " has weight 0");
      if (k > 0 && plan_.stage_weights[k] > plan_.stage_weights[k - 1]) {
        fail("stage " + std::to_string(k) + " is heavier than stage " + std::to_string(k - 1));
      }
    }
  }

  void matrices() {
    std::vector<std::uint64_t> resum(S() * S(), 0);
    for (std::size_t k = 0; k < plan_.stage_count() && problems_.empty(); ++k) {
      const auto perm = plan_.stage_perm(k);
      for (std::size_t s = 0; s < S(); ++s) resum[s * S() + static_cast<std::size_t>(perm[s])] += plan_.stage_weights[k];
    }
    if (problems_.empty() && resum != plan_.padded_matrix) fail("the stages do not re-sum to the padded matrix");
    const std::uint64_t quantum = plan_.options.quantum;
    for (int s = 0; s < map_.servers(); ++s) {
      std::uint64_t row = 0, col = 0;
      for (int t = 0; t < map_.servers(); ++t) {
        row += server_entry(plan_.padded_matrix, s, t);
        col += server_entry(plan_.padded_matrix, t, s);
        if (server_entry(plan_.padded_matrix, s, t) < server_entry(plan_.server_matrix, s, t)) {
          fail("padded matrix below the server matrix at (" + std::to_string(s) + ", " + std::to_string(t) + ")");
        }
        if (quantum > 1 && server_entry(plan_.padded_matrix, s, t) % quantum != 0) {
          fail("padded entry (" + std::to_string(s) + ", " + std::to_string(t) + ") is not a multiple of the quantum");
        }
      }
      if (server_entry(plan_.server_matrix, s, s) != 0) fail("server matrix has traffic on its diagonal at " + std::to_string(s));
      if (row != plan_.padded_line_sum || col != plan_.padded_line_sum) {
        fail("padded line sums of server " + std::to_string(s) + " are " + std::to_string(row) + " / " +
             std::to_string(col) + ", not " + std::to_string(plan_.padded_line_sum));
      }
    }
  }

  std::uint64_t stream_length(int owner, int server) const {
    std::uint64_t bytes = 0;
    for (int j = 0; j < map_.gpus_on(server); ++j) bytes += plan_.demand(owner, map_.rank_at(server, j));
    return bytes;
  }

  void streams() {
    for (int rank = 0; rank < map_.ranks(); ++rank) {
      const int s = map_.server_of(rank);
      for (int t = 0; t < map_.servers(); ++t) {
        const std::uint64_t bytes = plan_.rail_stream_bytes(rank, t);
        const bool idle_lane = t == s || map_.local_index(rank) >= map_.lanes(s, t);
        if (idle_lane && bytes > 0) fail("rank " + std::to_string(rank) + " has a rail stream to server " + std::to_string(t) + " but no lane");
        if (bytes > server_entry(plan_.server_matrix, s, t)) {
          fail("rank " + std::to_string(rank) + " streams " + std::to_string(bytes) + " bytes to server " +
               std::to_string(t) + ", above the server matrix entry");
        }
        for (const StreamSegment& segment : plan_.rail_stream(rank, t)) {
          if (segment.server != t || segment.owner < 0 || segment.owner >= map_.ranks() || map_.server_of(segment.owner) != s ||
              segment.begin >= segment.end || segment.end > stream_length(segment.owner, t)) {
            fail("rank " + std::to_string(rank) + " has a malformed rail segment for server " + std::to_string(t));
          }
        }
      }
    }
  }

  std::uint64_t message_hash(std::uint64_t channel, std::size_t k, int from, int to, const RankSchedule& schedule,
                             const Transfer& transfer) const {
    std::uint64_t h = splitmix64(channel ^ splitmix64(k ^ splitmix64(static_cast<std::uint64_t>(from) ^ splitmix64(static_cast<std::uint64_t>(to)))));
    for (std::uint32_t p = transfer.first_piece; p < transfer.first_piece + transfer.piece_count; ++p) {
      const Piece& piece = schedule.pieces[p];
      h = splitmix64(h ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(piece.src)) << 32 | static_cast<std::uint32_t>(piece.dst)));
      h = splitmix64(h ^ piece.offset ^ (piece.length << 40) ^ (piece.length >> 24));
    }
    return h;
  }
  void sent(std::uint64_t channel, std::size_t k, int to, const RankSchedule& schedule, const Transfer& transfer) {
    ledgers_[channel].sent += message_hash(channel, k, schedule.rank, to, schedule, transfer);
    ++ledgers_[channel].sent_count;
  }
  void received(std::uint64_t channel, std::size_t k, int from, const RankSchedule& schedule, const Transfer& transfer) {
    ledgers_[channel].received += message_hash(channel, k, from, schedule.rank, schedule, transfer);
    ++ledgers_[channel].received_count;
  }

  bool inside_block(const Piece& piece) const {
    return piece.src >= 0 && piece.src < map_.ranks() && piece.dst >= 0 && piece.dst < map_.ranks() && piece.length > 0 &&
           piece.offset + piece.length <= plan_.demand(piece.src, piece.dst);
  }

  void ranks(const RankSchedule& schedule) {
    const int rank = schedule.rank;
    const int s = map_.server_of(rank);
    const std::string who = "rank " + std::to_string(rank);
    const std::size_t K = plan_.stage_count();
    auto pieces_of = [&](const Transfer& transfer) {
      return std::span<const Piece>(schedule.pieces.data() + transfer.first_piece, transfer.piece_count);
    };
    std::vector<Piece> delivered;  // offset/length of what lands in the receive buffer, src in .src
    std::vector<Piece> staged;     // the balance receives, sorted, for the holding check

    for (const Transfer& send : schedule.balance_sends) {
      if (send.peer == rank || map_.server_of(send.peer) != s) fail(who + " balances to a rank of another server");
      for (const Piece& piece : pieces_of(send)) {
        if (piece.src != rank || !inside_block(piece) || piece.at != schedule.send_displs[piece.dst] + piece.offset) {
          fail(who + " hands over bytes that are not its own send-buffer bytes");
        }
      }
      sent(kBalance, 0, send.peer, schedule, send);
    }
    for (const Transfer& recv : schedule.balance_recvs) {
      for (const Piece& piece : pieces_of(recv)) staged.push_back(piece);
      received(kBalance, 0, recv.peer, schedule, recv);
    }
    std::sort(staged.begin(), staged.end(), [](const Piece& a, const Piece& b) {
      return std::tie(a.src, a.dst, a.offset) < std::tie(b.src, b.dst, b.offset);
    });
    for (const Transfer& send : schedule.intrinsic_sends) {
      if (map_.server_of(send.peer) != s) fail(who + " sends intrinsic bytes off its server");
      sent(kIntrinsic, 0, send.peer, schedule, send);
    }
    for (const Transfer& recv : schedule.intrinsic_recvs) {
      if (map_.server_of(recv.peer) != s) fail(who + " receives intrinsic bytes from off its server");
      for (const Piece& piece : pieces_of(recv)) {
        if (piece.src != recv.peer) fail(who + " receives an intrinsic piece from the wrong rank");
        delivered.push_back(piece);
      }
      received(kIntrinsic, 0, recv.peer, schedule, recv);
    }

    if (schedule.rail_sends.size() != K || schedule.rail_recvs.size() != K || schedule.forward_send_begin.size() != K + 1 ||
        schedule.forward_recv_begin.size() != K + 1) {
      fail(who + ": per-stage lists do not have one entry per stage");
      return;
    }
    for (std::size_t k = 0; k < K && !full(); ++k) {
      auto where = [&] { return who + " stage " + std::to_string(k); };
      const std::uint64_t weight = plan_.stage_weights[k];
      const Transfer& send = schedule.rail_sends[k];
      if (send.peer >= 0) {
        const int t = plan_.stage_perm(k)[s];
        if (t == s || map_.server_of(send.peer) != t || map_.local_index(send.peer) != map_.local_index(rank)) {
          fail(where() + ": rail send is not to its rail peer on server " + std::to_string(t));
        }
        if (send.bytes > weight) fail(where() + ": sends " + std::to_string(send.bytes) + " bytes, above the weight " + std::to_string(weight));
        for (const Piece& piece : pieces_of(send)) {
          if (!inside_block(piece) || map_.server_of(piece.dst) != t) fail(where() + ": rail piece bound for another server");
          else if (!holds(schedule, staged, piece)) fail(where() + ": sends bytes it does not hold");
        }
        sent(kRail, k, send.peer, schedule, send);
      }
      const Transfer& recv = schedule.rail_recvs[k];
      std::vector<Piece>& onward = onward_;
      onward.clear();
      if (recv.peer >= 0) {
        const int from = plan_.stage_source(k)[s];
        if (from == s || map_.server_of(recv.peer) != from || map_.local_index(recv.peer) != map_.local_index(rank)) {
          fail(where() + ": rail receive is not from its rail peer");
        }
        if (recv.bytes > weight) fail(where() + ": receives more than the weight");
        std::uint64_t position = 0;
        for (const Piece& piece : pieces_of(recv)) {
          if (piece.at != position) fail(where() + ": received pieces are not packed");
          position += piece.length;
          if (!inside_block(piece) || map_.server_of(piece.dst) != s) fail(where() + ": received a piece for another server");
          else if (piece.dst == rank) delivered.push_back({piece.src, piece.dst, piece.offset, piece.length, schedule.recv_displs[piece.src] + piece.offset});
          else onward.push_back(piece);
        }
        received(kRail, k, recv.peer, schedule, recv);
      }
      std::vector<Piece>& forwarded = forwarded_;
      forwarded.clear();
      for (std::uint32_t f = schedule.forward_send_begin[k]; f < schedule.forward_send_begin[k + 1]; ++f) {
        const Transfer& forward = schedule.forward_sends[f];
        for (const Piece& piece : pieces_of(forward)) {
          if (piece.dst != forward.peer) fail(where() + ": forwards a piece to the wrong rank");
          forwarded.push_back(piece);
        }
        sent(kForward, k, forward.peer, schedule, forward);
      }
      auto by_position = [](const Piece& a, const Piece& b) { return a.at < b.at; };
      std::sort(onward.begin(), onward.end(), by_position);
      std::sort(forwarded.begin(), forwarded.end(), by_position);
      if (onward != forwarded) fail(where() + ": forwards other than what it received for its neighbours");
      for (std::uint32_t f = schedule.forward_recv_begin[k]; f < schedule.forward_recv_begin[k + 1]; ++f) {
        const Transfer& forward = schedule.forward_recvs[f];
        if (map_.server_of(forward.peer) != s || forward.peer == rank) fail(where() + ": forwarded bytes come from off its server");
        for (const Piece& piece : pieces_of(forward)) {
          if (piece.dst != rank) fail(where() + ": receives a forwarded piece for another rank");
          delivered.push_back(piece);
        }
        received(kForward, k, forward.peer, schedule, forward);
      }
    }
    deliveries(schedule, std::move(delivered));
  }

  // A rail piece is the rank's own send-buffer bytes or lies inside what it
  // took in the balance, at the matching staging position.
  bool holds(const RankSchedule& schedule, const std::vector<Piece>& staged, const Piece& piece) const {
    if (piece.src == schedule.rank) return piece.at == schedule.send_displs[piece.dst] + piece.offset;
    auto it = std::upper_bound(staged.begin(), staged.end(), piece, [](const Piece& a, const Piece& b) {
      return std::tie(a.src, a.dst, a.offset) < std::tie(b.src, b.dst, b.offset);
    });
    if (it == staged.begin()) return false;
    --it;
    return it->src == piece.src && it->dst == piece.dst && piece.offset + piece.length <= it->offset + it->length &&
           piece.at == it->at + (piece.offset - it->offset);
  }

  // Every byte of every block bound for this rank arrives exactly once, at
  // its offset in the receive buffer.
  void deliveries(const RankSchedule& schedule, std::vector<Piece> delivered) {
    const int rank = schedule.rank;
    for (const Piece& piece : delivered) {
      if (piece.at != schedule.recv_displs[piece.src] + piece.offset) {
        fail("rank " + std::to_string(rank) + ": bytes from rank " + std::to_string(piece.src) + " land at the wrong offset");
        return;
      }
    }
    // By source (counting sort), then by offset within each source.
    std::vector<std::size_t> begin(static_cast<std::size_t>(map_.ranks()) + 1, 0);
    for (const Piece& piece : delivered) ++begin[static_cast<std::size_t>(piece.src) + 1];
    for (std::size_t i = 1; i < begin.size(); ++i) begin[i] += begin[i - 1];
    std::vector<Piece> sorted(delivered.size());
    std::vector<std::size_t> fill(begin.begin(), begin.end() - 1);
    for (const Piece& piece : delivered) sorted[fill[piece.src]++] = piece;
    for (std::size_t i = 0; i + 1 < begin.size(); ++i) {
      std::sort(sorted.begin() + static_cast<std::ptrdiff_t>(begin[i]), sorted.begin() + static_cast<std::ptrdiff_t>(begin[i + 1]),
                [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
    }
    delivered.swap(sorted);
    std::size_t p = 0;
    for (int src = 0; src < map_.ranks(); ++src) {
      std::uint64_t covered = 0;
      for (; p < delivered.size() && delivered[p].src == src; ++p) {
        if (delivered[p].offset != covered) {
          fail("rank " + std::to_string(rank) + ": bytes from rank " + std::to_string(src) + " at offset " +
               std::to_string(std::min(covered, delivered[p].offset)) +
               (delivered[p].offset < covered ? " arrive twice" : " never arrive"));
          return;
        }
        covered += delivered[p].length;
      }
      if (covered != plan_.demand(src, rank)) {
        fail("rank " + std::to_string(rank) + ": receives " + std::to_string(covered) + " of " +
             std::to_string(plan_.demand(src, rank)) + " bytes from rank " + std::to_string(src));
        return;
      }
    }
  }

  const FastPlan& plan_;
  const ServerMap& map_;
  std::size_t max_;
  std::vector<std::string> problems_;
  Ledger ledgers_[5];
  std::vector<Piece> onward_, forwarded_;  // per-stage scratch
};

}  // namespace

std::vector<std::string> verify_plan(const FastPlan& plan, std::size_t max_problems) {
  return Verifier(plan, max_problems).run();
}

}  // namespace nestfast::comm
