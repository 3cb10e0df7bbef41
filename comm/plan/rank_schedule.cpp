// rank_schedule(): one rank's part of a FastPlan, with explicit pieces.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

#include "comm/plan/fast_plan.hpp"
#include "comm/plan/stream_cursor.hpp"

namespace nestfast::comm {

namespace {

// Splits [begin, end) of owner's stream for `server` into the demand blocks it
// covers: visit(dst, offset in block, length, stream position).
template <class Visit>
void for_each_block(const FastPlan& plan, int owner, int server, std::uint64_t begin, std::uint64_t end, Visit&& visit) {
  std::uint64_t block_start = 0;
  for (int j = 0; j < plan.map.gpus_on(server) && block_start < end; ++j) {
    const int dst = plan.map.rank_at(server, j);
    const std::uint64_t block_end = block_start + plan.demand(owner, dst);
    const std::uint64_t from = std::max(begin, block_start), to = std::min(end, block_end);
    if (from < to) visit(dst, from - block_start, to - from, from);
    block_start = block_end;
  }
}

// Follows a rail stream like StreamCursor, but visits only the bytes of one
// destination's block in each segment: what a rank gets forwarded from
// another proxy. O(segments * GPUs per server + stages) for the whole stream.
class OneBlockCursor {
 public:
  OneBlockCursor() = default;
  OneBlockCursor(const FastPlan& plan, std::span<const StreamSegment> segments, int dst)
      : plan_(&plan), segments_(segments), dst_(dst) {}

  // Advances by up to `amount` bytes; visit(segment, offset in block, length)
  // for the part of them in dst's block.
  template <class Visit>
  void take(std::uint64_t amount, Visit&& visit) {
    std::uint64_t taken = 0;
    while (taken < amount && next_ < segments_.size()) {
      const StreamSegment& segment = segments_[next_];
      if (!positioned_) enter(segment);
      const std::uint64_t end = std::min(segment.end, position_ + (amount - taken));
      const std::uint64_t from = std::max(position_, mine_begin_), to = std::min(end, mine_end_);
      if (from < to) visit(segment, from - mine_begin_, to - from);
      taken += end - position_;
      position_ = end;
      if (position_ == segment.end) {
        ++next_;
        positioned_ = false;
      }
    }
  }

 private:
  void enter(const StreamSegment& segment) {
    mine_begin_ = 0;
    for (int j = 0; j < plan_->map.gpus_on(segment.server); ++j) {
      const int dst = plan_->map.rank_at(segment.server, j);
      if (dst == dst_) break;
      mine_begin_ += plan_->demand(segment.owner, dst);
    }
    mine_end_ = mine_begin_ + plan_->demand(segment.owner, dst_);
    position_ = segment.begin;
    positioned_ = true;
  }

  const FastPlan* plan_ = nullptr;
  std::span<const StreamSegment> segments_;
  int dst_ = 0;
  std::size_t next_ = 0;
  bool positioned_ = false;
  std::uint64_t position_ = 0;
  std::uint64_t mine_begin_ = 0, mine_end_ = 0;  // dst's block in the current segment's owner stream
};

// Where each balance range this rank took sits in its staging buffer.
struct StagedRange {
  std::int32_t owner, server;
  std::uint64_t begin, staging;
};

class ScheduleBuilder {
 public:
  ScheduleBuilder(const FastPlan& plan, int rank) : plan_(plan), map_(plan.map), rank_(rank) {
    out_.rank = rank;
    out_.send_displs = plan.demand.send_displacements(rank);
    out_.recv_displs = plan.demand.recv_displacements(rank);
    server_ = map_.server_of(rank);
    lane_ = map_.local_index(rank);
  }

  RankSchedule build() && {
    balance();
    intrinsic();
    stages();
    return std::move(out_);
  }

 private:
  std::uint32_t piece_count() const { return static_cast<std::uint32_t>(out_.pieces.size()); }

  Transfer open(int peer) const { return {peer, piece_count(), 0, 0}; }
  void close(Transfer& transfer) const { transfer.piece_count = piece_count() - transfer.first_piece; }
  void add(Transfer& transfer, const Piece& piece) {
    out_.pieces.push_back(piece);
    transfer.bytes += piece.length;
  }

  void balance() {
    const auto& moves = plan_.balance;
    auto first = std::lower_bound(moves.begin(), moves.end(), rank_,
                                  [](const BalanceMove& move, int from) { return move.from < from; });
    for (auto it = first; it != moves.end() && it->from == rank_;) {
      Transfer send = open(it->to);
      for (const int to = it->to; it != moves.end() && it->from == rank_ && it->to == to; ++it) {
        for_each_block(plan_, rank_, it->range.server, it->range.begin, it->range.end,
                       [&](int dst, std::uint64_t offset, std::uint64_t length, std::uint64_t) {
                         add(send, {rank_, dst, offset, length, out_.send_displs[dst] + offset});
                       });
      }
      close(send);
      out_.balance_sends.push_back(send);
    }
    // Moves are sorted by sender: the ones to this rank come grouped by sender.
    for (std::size_t i = 0; i < moves.size();) {
      if (moves[i].to != rank_) {
        ++i;
        continue;
      }
      const int from = moves[i].from;
      Transfer recv = open(from);
      for (; i < moves.size() && moves[i].from == from; ++i) {
        if (moves[i].to != rank_) continue;
        const StreamSegment& range = moves[i].range;
        staged_.push_back({range.owner, range.server, range.begin, out_.staging_bytes});
        for_each_block(plan_, from, range.server, range.begin, range.end,
                       [&](int dst, std::uint64_t offset, std::uint64_t length, std::uint64_t) {
                         add(recv, {from, dst, offset, length, out_.staging_bytes});
                         out_.staging_bytes += length;
                       });
      }
      close(recv);
      out_.balance_recvs.push_back(recv);
    }
    std::sort(staged_.begin(), staged_.end(), [](const StagedRange& a, const StagedRange& b) {
      return std::tie(a.owner, a.server, a.begin) < std::tie(b.owner, b.server, b.begin);
    });
  }

  std::uint64_t staging_of(const StreamSegment& segment) const {
    auto it = std::lower_bound(staged_.begin(), staged_.end(), segment, [](const StagedRange& r, const StreamSegment& s) {
      return std::tie(r.owner, r.server, r.begin) < std::tie(s.owner, s.server, s.begin);
    });
    if (it == staged_.end() || it->owner != segment.owner || it->server != segment.server || it->begin != segment.begin) {
      throw std::logic_error("rank schedule: rank " + std::to_string(rank_) + " streams bytes of rank " +
                             std::to_string(segment.owner) + " it never received");
    }
    return it->staging;
  }

  void intrinsic() {
    for (int j = 0; j < map_.gpus_on(server_); ++j) {
      const int peer = map_.rank_at(server_, j);
      if (const std::uint64_t bytes = plan_.demand(rank_, peer); bytes > 0) {
        Transfer send = open(peer);
        add(send, {rank_, peer, 0, bytes, out_.send_displs[peer]});
        close(send);
        out_.intrinsic_sends.push_back(send);
      }
    }
    for (int j = 0; j < map_.gpus_on(server_); ++j) {
      const int peer = map_.rank_at(server_, j);
      if (const std::uint64_t bytes = plan_.demand(peer, rank_); bytes > 0) {
        Transfer recv = open(peer);
        add(recv, {peer, rank_, 0, bytes, out_.recv_displs[peer]});
        close(recv);
        out_.intrinsic_recvs.push_back(recv);
      }
    }
  }

  void stages() {
    const int S = map_.servers();
    const std::size_t K = plan_.stage_count();
    std::vector<StreamCursor> sends(static_cast<std::size_t>(S));
    for (int t = 0; t < S; ++t) sends[t] = StreamCursor(plan_, plan_.rail_stream(rank_, t));
    // What lane i of server u sends to this server: cursor [u * m + i].
    const auto m = static_cast<std::size_t>(map_.gpus_on(server_));
    // (this rank is the proxy of its own lane only).
    std::vector<StreamCursor> arriving(static_cast<std::size_t>(S));
    std::vector<OneBlockCursor> forwarded(static_cast<std::size_t>(S) * m);
    for (int u = 0; u < S; ++u) {
      for (int i = 0; i < map_.lanes(u, server_); ++i) {
        const auto stream = plan_.rail_stream(map_.rank_at(u, i), server_);
        if (i == lane_) arriving[u] = StreamCursor(plan_, stream);
        else forwarded[static_cast<std::size_t>(u) * m + i] = OneBlockCursor(plan_, stream, rank_);
      }
    }
    out_.rail_sends.assign(K, Transfer{});
    out_.rail_recvs.assign(K, Transfer{});
    out_.forward_send_begin.assign(K + 1, 0);
    out_.forward_recv_begin.assign(K + 1, 0);
    for (std::size_t k = 0; k < K; ++k) {
      const std::uint64_t weight = plan_.stage_weights[k];
      const int to_server = plan_.stage_perm(k)[server_];
      if (to_server != server_ && lane_ < map_.lanes(server_, to_server)) {
        Transfer send = open(map_.rank_at(to_server, lane_));
        sends[to_server].take(weight, [&](const StreamSegment& segment, int dst, std::uint64_t offset, std::uint64_t length,
                                          std::uint64_t position) {
          const std::uint64_t at = segment.owner == rank_ ? out_.send_displs[dst] + offset
                                                          : staging_of(segment) + (position - segment.begin);
          add(send, {segment.owner, dst, offset, length, at});
        });
        close(send);
        if (send.bytes > 0) out_.rail_sends[k] = send;
        else out_.pieces.resize(send.first_piece);
      }
      out_.forward_send_begin[k] = static_cast<std::uint32_t>(out_.forward_sends.size());
      out_.forward_recv_begin[k] = static_cast<std::uint32_t>(out_.forward_recvs.size());
      const int from_server = plan_.stage_source(k)[server_];
      if (from_server == server_) continue;
      for (int i = 0; i < map_.lanes(from_server, server_); ++i) {
        if (i == lane_) receive_rail(k, map_.rank_at(from_server, i), arriving[from_server], weight);
        else receive_forwarded(map_.rank_at(server_, i), forwarded[static_cast<std::size_t>(from_server) * m + i], weight);
      }
    }
    out_.forward_send_begin[K] = static_cast<std::uint32_t>(out_.forward_sends.size());
    out_.forward_recv_begin[K] = static_cast<std::uint32_t>(out_.forward_recvs.size());
  }

  // This rank is the proxy: the message lands here; what is not for this rank
  // is forwarded, grouped by final destination in stream order.
  void receive_rail(std::size_t k, int sender, StreamCursor& cursor, std::uint64_t weight) {
    Transfer recv = open(sender);
    std::uint64_t position = 0;
    cursor.take(weight, [&](const StreamSegment& segment, int dst, std::uint64_t offset, std::uint64_t length, std::uint64_t) {
      add(recv, {segment.owner, dst, offset, length, position});
      position += length;
    });
    close(recv);
    if (recv.bytes == 0) {
      out_.pieces.resize(recv.first_piece);
      return;
    }
    out_.rail_recvs[k] = recv;
    std::vector<Piece>& onward = onward_;
    onward.clear();
    for (std::uint32_t p = recv.first_piece; p < recv.first_piece + recv.piece_count; ++p) {
      if (out_.pieces[p].dst != rank_) onward.push_back(out_.pieces[p]);
    }
    std::stable_sort(onward.begin(), onward.end(), [](const Piece& a, const Piece& b) { return a.dst < b.dst; });
    for (std::size_t p = 0; p < onward.size();) {
      Transfer send = open(onward[p].dst);
      for (const int dst = onward[p].dst; p < onward.size() && onward[p].dst == dst; ++p) add(send, onward[p]);
      close(send);
      out_.forward_sends.push_back(send);
    }
  }

  // Another GPU of this server is the proxy: it forwards the pieces for this rank.
  void receive_forwarded(int proxy, OneBlockCursor& cursor, std::uint64_t weight) {
    Transfer recv = open(proxy);
    cursor.take(weight, [&](const StreamSegment& segment, std::uint64_t offset, std::uint64_t length) {
      add(recv, {segment.owner, rank_, offset, length, out_.recv_displs[segment.owner] + offset});
    });
    close(recv);
    if (recv.bytes > 0) out_.forward_recvs.push_back(recv);
    else out_.pieces.resize(recv.first_piece);
  }

  const FastPlan& plan_;
  const ServerMap& map_;
  int rank_;
  int server_ = 0;
  int lane_ = 0;
  std::vector<StagedRange> staged_;
  std::vector<Piece> onward_;  // scratch of receive_rail
  RankSchedule out_;
};

}  // namespace

RankSchedule rank_schedule(const FastPlan& plan, int rank) {
  if (rank < 0 || rank >= plan.ranks()) {
    throw std::invalid_argument("rank schedule: rank " + std::to_string(rank) + " outside 0.." +
                                std::to_string(plan.ranks() - 1));
  }
  return ScheduleBuilder(plan, rank).build();
}

}  // namespace nestfast::comm
