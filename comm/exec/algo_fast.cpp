#include "comm/exec/algo_fast.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

namespace {

// A piece of a message: `length` bytes at `at` of buffer `kind`.
struct Range {
  BufferKind kind;
  std::uint64_t at;
  std::uint64_t length;
};

class ScheduleCompiler {
 public:
  ScheduleCompiler(const RankSchedule& schedule, const ServerTopology& topology, FastProgram& program)
      : schedule_(schedule), topology_(topology), program_(program) {}

  void compile() {
    node_traffic();
    rail_traffic();
    program_.internal_bytes[static_cast<std::size_t>(BufferKind::kStaging)] = schedule_.staging_bytes;
  }

 private:
  std::uint64_t& size_of(BufferKind kind) { return program_.internal_bytes[static_cast<std::size_t>(kind)]; }

  template <class KindOf>
  std::vector<Range> ranges(const Transfer& transfer, KindOf kind_of) const {
    std::vector<Range> out;
    out.reserve(transfer.piece_count);
    for (std::uint32_t p = transfer.first_piece; p < transfer.first_piece + transfer.piece_count; ++p) {
      const Piece& piece = schedule_.pieces[p];
      out.push_back({kind_of(piece), piece.at, piece.length});
    }
    return out;
  }
  static auto kind(BufferKind fixed) {
    return [fixed](const Piece&) { return fixed; };
  }
  static bool contiguous(const std::vector<Range>& pieces) {
    for (std::size_t i = 1; i < pieces.size(); ++i) {
      if (pieces[i].kind != pieces[0].kind || pieces[i].at != pieces[i - 1].at + pieces[i - 1].length) return false;
    }
    return true;
  }

  // A message of scattered pieces: straight from (into) them when they are
  // one range, else through a region of its own in the pack (unpack) buffer,
  // gathered before the send is posted (scattered once the receive is done).
  ProgramMessage message(const std::vector<Range>& pieces, int peer, int tag, MPI_Comm comm, bool outgoing) {
    const BufferKind region = outgoing ? BufferKind::kPack : BufferKind::kUnpack;
    ProgramMessage out{region, 0, 0, peer, tag, comm, {}};
    for (const Range& piece : pieces) out.bytes += piece.length;
    if (contiguous(pieces)) {
      out.buffer = pieces.front().kind;
      out.at = pieces.front().at;
      return out;
    }
    out.at = size_of(region);
    for (const Range& piece : pieces) {
      const std::uint64_t at = size_of(region);
      out.copies.push_back(outgoing ? CopyRange{piece.kind, piece.at, region, at, piece.length}
                                    : CopyRange{region, at, piece.kind, piece.at, piece.length});
      size_of(region) += piece.length;
    }
    return out;
  }
  ProgramMessage outgoing(const std::vector<Range>& pieces, int peer, int tag, MPI_Comm comm) {
    return message(pieces, peer, tag, comm, true);
  }
  ProgramMessage incoming(const std::vector<Range>& pieces, int peer, int tag, MPI_Comm comm) {
    return message(pieces, peer, tag, comm, false);
  }

  int node_peer(int rank) const {
    if (topology_.map().server_of(rank) != topology_.map().server_of(schedule_.rank)) {
      throw std::logic_error("fast: node message between servers (rank " + std::to_string(schedule_.rank) +
                             " and " + std::to_string(rank) + ")");
    }
    return topology_.node_rank_of(rank);
  }
  int rail_peer(int rank) const {
    if (topology_.map().local_index(rank) != topology_.map().local_index(schedule_.rank)) {
      throw std::logic_error("fast: rail message off the rail (rank " + std::to_string(schedule_.rank) + " and " +
                             std::to_string(rank) + ")");
    }
    return topology_.rail_rank_of(rank);
  }
  static int tag(MPI_Comm comm, TagPhase phase, std::size_t stage) { return phase_tag(comm, phase, static_cast<int>(stage)); }

  void node_traffic() {
    const MPI_Comm node = topology_.node_comm();
    const int me = schedule_.rank;
    for (const Transfer& recv : schedule_.balance_recvs) {
      program_.balance_receives.push_back(
          incoming(ranges(recv, kind(BufferKind::kStaging)), node_peer(recv.peer), tag(node, TagPhase::kBalance, 0), node));
    }
    for (const Transfer& recv : schedule_.intrinsic_recvs) {
      if (recv.peer == me) continue;
      program_.node_receives.push_back(
          incoming(ranges(recv, kind(BufferKind::kRecv)), node_peer(recv.peer), tag(node, TagPhase::kIntrinsic, 0), node));
    }
    for (std::size_t k = 0; k + 1 < schedule_.forward_recv_begin.size(); ++k) {
      for (std::uint32_t i = schedule_.forward_recv_begin[k]; i < schedule_.forward_recv_begin[k + 1]; ++i) {
        const Transfer& recv = schedule_.forward_recvs[i];
        program_.node_receives.push_back(
            incoming(ranges(recv, kind(BufferKind::kRecv)), node_peer(recv.peer), tag(node, TagPhase::kForward, k), node));
      }
    }
    for (const Transfer& send : schedule_.balance_sends) {
      program_.node_sends.push_back(
          outgoing(ranges(send, kind(BufferKind::kSend)), node_peer(send.peer), tag(node, TagPhase::kBalance, 0), node));
    }
    for (const Transfer& send : schedule_.intrinsic_sends) {
      if (send.peer != me) {
        program_.node_sends.push_back(
            outgoing(ranges(send, kind(BufferKind::kSend)), node_peer(send.peer), tag(node, TagPhase::kIntrinsic, 0), node));
        continue;
      }
      for (std::uint32_t p = send.first_piece; p < send.first_piece + send.piece_count; ++p) {
        const Piece& piece = schedule_.pieces[p];
        program_.self_copies.push_back(
            {BufferKind::kSend, piece.at, BufferKind::kRecv, schedule_.recv_displs[piece.src] + piece.offset, piece.length});
      }
    }
  }

  void rail_traffic() {
    const MPI_Comm rail = topology_.rail_comm();
    const MPI_Comm node = topology_.node_comm();
    const int me = schedule_.rank;
    for (std::size_t k = 0; k < schedule_.rail_sends.size(); ++k) {
      const Transfer& send = schedule_.rail_sends[k];
      if (send.peer < 0 || send.bytes == 0) continue;
      RailSend out;
      out.stage = static_cast<int>(k);
      const std::vector<Range> pieces =
          ranges(send, [me](const Piece& piece) { return piece.src == me ? BufferKind::kSend : BufferKind::kStaging; });
      out.needs_staging = std::any_of(pieces.begin(), pieces.end(), [](const Range& r) { return r.kind == BufferKind::kStaging; });
      out.data = outgoing(pieces, rail_peer(send.peer), tag(rail, TagPhase::kRail, k), rail);
      out.grant_tag = tag(rail, TagPhase::kGrant, k);
      program_.rail_sends.push_back(std::move(out));
    }
    for (std::size_t k = 0; k < schedule_.rail_recvs.size(); ++k) {
      const Transfer& recv = schedule_.rail_recvs[k];
      if (recv.peer < 0 || recv.bytes == 0) continue;
      RailReceive out;
      out.stage = static_cast<int>(k);
      out.grant_tag = tag(rail, TagPhase::kGrant, k);
      const auto first = schedule_.pieces.begin() + recv.first_piece;
      const bool all_mine =
          std::all_of(first, first + recv.piece_count, [&](const Piece& piece) { return piece.dst == me; });
      if (all_mine) {  // nothing to forward: land the pieces where they belong
        std::vector<Range> pieces;
        for (auto piece = first; piece != first + recv.piece_count; ++piece) {
          pieces.push_back({BufferKind::kRecv, schedule_.recv_displs[piece->src] + piece->offset, piece->length});
        }
        out.data = incoming(pieces, rail_peer(recv.peer), tag(rail, TagPhase::kRail, k), rail);
      } else {
        const std::uint64_t region = size_of(BufferKind::kArrival);
        size_of(BufferKind::kArrival) += recv.bytes;
        out.data = ProgramMessage{BufferKind::kArrival, region, recv.bytes, rail_peer(recv.peer),
                                  tag(rail, TagPhase::kRail, k), rail, {}};
        for (auto piece = first; piece != first + recv.piece_count; ++piece) {
          if (piece->dst != me) continue;
          out.data.copies.push_back({BufferKind::kArrival, region + piece->at, BufferKind::kRecv,
                                     schedule_.recv_displs[piece->src] + piece->offset, piece->length});
        }
        out.first_forward = static_cast<std::uint32_t>(program_.forwards.size());
        for (std::uint32_t i = schedule_.forward_send_begin[k]; i < schedule_.forward_send_begin[k + 1]; ++i) {
          const Transfer& forward = schedule_.forward_sends[i];
          std::vector<Range> pieces = ranges(forward, kind(BufferKind::kArrival));
          for (Range& piece : pieces) piece.at += region;
          program_.forwards.push_back(outgoing(pieces, node_peer(forward.peer), tag(node, TagPhase::kForward, k), node));
        }
        out.forward_count = static_cast<std::uint32_t>(program_.forwards.size()) - out.first_forward;
      }
      program_.rail_receives.push_back(std::move(out));
    }
  }

  const RankSchedule& schedule_;
  const ServerTopology& topology_;
  FastProgram& program_;
};

// Every rank must hold the same plan: compare the fingerprints (min == max).
void check_same_plan(MPI_Comm comm, std::uint64_t fingerprint) {
  std::uint64_t range[2] = {fingerprint, ~fingerprint};
  allreduce_yielding(MPI_IN_PLACE, range, 2, MPI_UINT64_T, MPI_MAX, comm);
  if (range[0] != fingerprint || ~range[1] != fingerprint) {
    throw std::runtime_error("fast: ranks built different plans from the same counts (fingerprint mismatch)");
  }
}

}  // namespace

FastProgram compile_schedule(const RankSchedule& schedule, const ServerTopology& topology, std::uint64_t chunk_bytes) {
  FastProgram program;
  program.chunk_bytes = chunk_bytes;
  ScheduleCompiler(schedule, topology, program).compile();
  program.allocate();
  return program;
}

void FastAlltoallv::prepare(const ServerTopology& topology, const AlltoallvLayout&, const TrafficMatrix& counts) {
  const FastPlan plan = build_fast_plan(counts, topology.map(), options_);
  check_same_plan(topology.comm(), plan_fingerprint(plan));
  const RankSchedule schedule = rank_schedule(plan, topology.rank());
  program_ = compile_schedule(schedule, topology, chunk_bytes_);
  stages_ = static_cast<int>(plan.stage_count());
  plan_time_s_ = plan.plan_time_s;
}

std::string FastAlltoallv::decision() const {
  char text[64];
  std::snprintf(text, sizeof text, "plan %.3f ms", plan_time_s_ * 1e3);
  return text;
}

}  // namespace nestfast::comm
