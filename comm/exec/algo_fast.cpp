#include "comm/exec/algo_fast.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

namespace {

using Range = StepBuilder::Range;

class ScheduleCompiler {
 public:
  ScheduleCompiler(const RankSchedule& schedule, const ServerTopology& topology, StepProgram& program)
      : schedule_(schedule), topology_(topology), builder_(program), program_(program) {}

  void compile(std::size_t stages) {
    step_zero();
    for (std::size_t step = 1; step <= stages + 1; ++step) {
      if (step <= stages) rail_receive(step - 1);
      if (step >= 2) forward_receives(step - 2);
      if (step <= stages) rail_send(step - 1);
      if (step >= 2) forward_sends(step - 2);
      builder_.finish();
    }
    program_.internal_bytes[static_cast<std::size_t>(BufferKind::kStaging)] = schedule_.staging_bytes;
  }

 private:
  static BufferKind ping_pong(std::size_t stage) { return stage % 2 == 0 ? BufferKind::kPing : BufferKind::kPong; }

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

  static int tag(MPI_Comm comm, TagPhase phase, std::size_t stage) {
    return phase_tag(comm, phase, static_cast<int>(stage));
  }

  void step_zero() {
    const MPI_Comm node = topology_.node_comm();
    const int me = schedule_.rank;
    for (const Transfer& recv : schedule_.balance_recvs) {
      builder_.receive(ranges(recv, kind(BufferKind::kStaging)), node_peer(recv.peer),
                       tag(node, TagPhase::kBalance, 0), node);
    }
    for (const Transfer& recv : schedule_.intrinsic_recvs) {
      if (recv.peer == me) continue;
      builder_.receive(ranges(recv, kind(BufferKind::kRecv)), node_peer(recv.peer),
                       tag(node, TagPhase::kIntrinsic, 0), node);
    }
    for (const Transfer& send : schedule_.balance_sends) {
      builder_.send(ranges(send, kind(BufferKind::kSend)), node_peer(send.peer), tag(node, TagPhase::kBalance, 0),
                    node);
    }
    for (const Transfer& send : schedule_.intrinsic_sends) {
      if (send.peer != me) {
        builder_.send(ranges(send, kind(BufferKind::kSend)), node_peer(send.peer),
                      tag(node, TagPhase::kIntrinsic, 0), node);
        continue;
      }
      for (std::uint32_t p = send.first_piece; p < send.first_piece + send.piece_count; ++p) {
        const Piece& piece = schedule_.pieces[p];
        builder_.copy_before(BufferKind::kSend, piece.at, BufferKind::kRecv,
                             schedule_.recv_displs[piece.src] + piece.offset, piece.length);
      }
    }
    builder_.finish();
  }

  void rail_receive(std::size_t stage) {
    const Transfer& recv = schedule_.rail_recvs[stage];
    if (recv.peer < 0 || recv.bytes == 0) return;
    const MPI_Comm rail = topology_.rail_comm();
    const int peer = rail_peer(recv.peer);
    const int rail_tag = tag(rail, TagPhase::kRail, stage);
    const auto first = schedule_.pieces.begin() + recv.first_piece;
    const bool all_mine = std::all_of(first, first + recv.piece_count,
                                      [&](const Piece& piece) { return piece.dst == schedule_.rank; });
    if (all_mine) {  // nothing to forward: land the pieces where they belong
      std::vector<Range> pieces;
      for (auto piece = first; piece != first + recv.piece_count; ++piece) {
        pieces.push_back({BufferKind::kRecv, schedule_.recv_displs[piece->src] + piece->offset, piece->length});
      }
      builder_.receive(pieces, peer, rail_tag, rail);
      return;
    }
    const BufferKind buffer = ping_pong(stage);
    auto& size = program_.internal_bytes[static_cast<std::size_t>(buffer)];
    size = std::max(size, recv.bytes);
    builder_.receive_whole(buffer, 0, recv.bytes, peer, rail_tag, rail);
    for (auto piece = first; piece != first + recv.piece_count; ++piece) {
      if (piece->dst != schedule_.rank) continue;
      builder_.copy_after(buffer, piece->at, BufferKind::kRecv, schedule_.recv_displs[piece->src] + piece->offset,
                          piece->length);
    }
  }

  void rail_send(std::size_t stage) {
    const Transfer& send = schedule_.rail_sends[stage];
    if (send.peer < 0 || send.bytes == 0) return;
    const MPI_Comm rail = topology_.rail_comm();
    const int me = schedule_.rank;
    builder_.send(ranges(send, [me](const Piece& piece) { return piece.src == me ? BufferKind::kSend : BufferKind::kStaging; }),
                  rail_peer(send.peer), tag(rail, TagPhase::kRail, stage), rail);
  }

  void forward_receives(std::size_t stage) {
    const MPI_Comm node = topology_.node_comm();
    for (std::uint32_t i = schedule_.forward_recv_begin[stage]; i < schedule_.forward_recv_begin[stage + 1]; ++i) {
      const Transfer& recv = schedule_.forward_recvs[i];
      builder_.receive(ranges(recv, kind(BufferKind::kRecv)), node_peer(recv.peer),
                       tag(node, TagPhase::kForward, stage), node);
    }
  }

  void forward_sends(std::size_t stage) {
    const MPI_Comm node = topology_.node_comm();
    for (std::uint32_t i = schedule_.forward_send_begin[stage]; i < schedule_.forward_send_begin[stage + 1]; ++i) {
      const Transfer& send = schedule_.forward_sends[i];
      builder_.send(ranges(send, kind(ping_pong(stage))), node_peer(send.peer), tag(node, TagPhase::kForward, stage),
                    node);
    }
  }

  const RankSchedule& schedule_;
  const ServerTopology& topology_;
  StepBuilder builder_;
  StepProgram& program_;
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

StepProgram compile_schedule(const RankSchedule& schedule, std::size_t stages, const ServerTopology& topology) {
  StepProgram program;
  ScheduleCompiler(schedule, topology, program).compile(stages);
  program.allocate();
  return program;
}

void FastAlltoallv::prepare(const ServerTopology& topology, const AlltoallvLayout&, const TrafficMatrix& counts) {
  const FastPlan plan = build_fast_plan(counts, topology.map(), options_);
  check_same_plan(topology.comm(), plan_fingerprint(plan));
  const RankSchedule schedule = rank_schedule(plan, topology.rank());
  program_ = compile_schedule(schedule, plan.stage_count(), topology);
  stages_ = static_cast<int>(plan.stage_count());
  plan_time_s_ = plan.plan_time_s;
}

std::string FastAlltoallv::decision() const {
  char text[64];
  std::snprintf(text, sizeof text, "plan %.3f ms", plan_time_s_ * 1e3);
  return text;
}

}  // namespace nestfast::comm
