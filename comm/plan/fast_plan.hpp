#pragma once
// The FAST alltoallv schedule (design: shared/design/comm.md section 1).
// Pure and deterministic: every rank builds a bit-identical plan from the same
// demand and server map (integer arithmetic only, no threads, no hashing of
// pointers).
//
// Execution order, per rank:
//   step 0       the intra-server balance moves and the intrinsic (same-server)
//                exchange;
//   step k+1     (k = 0..stages-1) the rail transfer of stage k, plus the
//                forwarding of what arrived in stage k-1;
//   last step    the forwarding of the last stage.
// In stage k, GPU i of server s sends the next min(weight_k, left) bytes of
// its rail stream for server t = perm_k[s] to GPU i of t (rail-aligned, so no
// incast). Lanes i >= lanes(s, t) carry nothing for t (uneven servers).
//
// Compact form: the plan holds per (rank, destination server) the rail stream
// as segments of byte ranges; rank_schedule() expands one rank's part into
// explicit (src, dst, offset, length) pieces, ready for an executor.
#include <cstdint>
#include <span>
#include <vector>

#include "comm/plan/server_map.hpp"
#include "comm/plan/traffic_matrix.hpp"

namespace nestfast::comm {

// How the server matrix becomes stages.
enum class StageMethod : int {
  automatic = 0,  // the least padded_line_sum + stages x stage_cost_bytes of the ones below
  birkhoff = 1,   // exact Birkhoff decomposition: least total weight, up to S^2 - 2S + 2 stages
  cover = 2,      // greedy cover (stage_cover.hpp): about S stages, some weight over the bound
};

struct FastPlanOptions {
  // Round every server-matrix entry up to a multiple of this many bytes before
  // an exact decomposition (0 = exact; > 1 implies StageMethod::birkhoff).
  // Cuts the stage count; the cost shows in padded_line_sum versus the lower bound.
  std::uint64_t quantum = 0;
  StageMethod method = StageMethod::automatic;
  // What one more stage costs the executor, in bytes of NIC time (its
  // per-stage latency x the NIC rate): alpha of sum(w_k) + K alpha. At 0
  // stages are free and automatic means birkhoff.
  std::uint64_t stage_cost_bytes = 0;
};

// A byte range of the original demand: bytes [offset, offset + length) of
// block D[src][dst]. `at` is where the range sits in the buffer that the
// enclosing list names (see RankSchedule); 0 where no buffer is meant.
struct Piece {
  std::int32_t src = 0;
  std::int32_t dst = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t at = 0;
  friend bool operator==(const Piece&, const Piece&) = default;
};

// One message: pieces[first_piece, first_piece + piece_count) of the owning
// RankSchedule, packed back to back in that order, `bytes` in all. `peer` is
// the destination rank of a send, the source rank of a receive, -1 if none.
struct Transfer {
  std::int32_t peer = -1;
  std::uint32_t first_piece = 0;
  std::uint32_t piece_count = 0;
  std::uint64_t bytes = 0;
  friend bool operator==(const Transfer&, const Transfer&) = default;
};

// A range of `owner`'s stream for `server`: the concatenation of D[owner][h]
// over the ranks h of that server in increasing order; [begin, end) in it.
struct StreamSegment {
  std::int32_t owner = 0;
  std::int32_t server = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  friend bool operator==(const StreamSegment&, const StreamSegment&) = default;
};

// Step 0: `from` hands `to` (same server) a range of its own stream.
struct BalanceMove {
  std::int32_t from = 0;
  std::int32_t to = 0;
  StreamSegment range;  // range.owner == from
  friend bool operator==(const BalanceMove&, const BalanceMove&) = default;
};

struct FastPlan {
  ServerMap map;
  TrafficMatrix demand;
  FastPlanOptions options;

  // S x S row-major. server_matrix[s][t] = the most bytes one lane of s sends
  // to t after the balance (the per-NIC load); 0 on the diagonal.
  std::vector<std::uint64_t> server_matrix;
  // What the stages carry per server pair, sum of w_k over the stages that
  // pair s with t (for birkhoff: the quantised and padded server matrix);
  // every row and column sums to padded_line_sum, and every entry is at
  // least the server matrix's.
  std::vector<std::uint64_t> padded_matrix;
  std::uint64_t padded_line_sum = 0;

  // The method that made the stages (never automatic), and for a cover the
  // piece cap it split entries at (0 = unsplit).
  StageMethod method = StageMethod::birkhoff;
  std::uint64_t piece_cap = 0;
  // Stages by decreasing weight (ties in the order they were found).
  std::vector<std::uint64_t> stage_weights;
  std::vector<std::int32_t> stage_perms;    // stage k: [k*S, (k+1)*S), perm[s] = destination server (s = idle)
  std::vector<std::int32_t> stage_sources;  // inverse permutations, same layout

  // Intra-server balance, sorted by (from, to, server).
  std::vector<BalanceMove> balance;
  // Rail streams: rank r's stream for server t is
  // rail_segments[rail_begin[r*S + t], rail_begin[r*S + t + 1]).
  std::vector<std::uint32_t> rail_begin;
  std::vector<StreamSegment> rail_segments;

  double plan_time_s = 0;  // wall time of build_fast_plan (not part of the fingerprint)

  int servers() const { return map.servers(); }
  int ranks() const { return map.ranks(); }
  std::size_t stage_count() const { return stage_weights.size(); }
  std::span<const std::int32_t> stage_perm(std::size_t k) const;
  std::span<const std::int32_t> stage_source(std::size_t k) const;
  std::span<const StreamSegment> rail_stream(int rank, int server) const;
  std::uint64_t rail_stream_bytes(int rank, int server) const;
};

// Throws std::invalid_argument when demand.ranks() != map.ranks(). The plan
// keeps the demand: pass it with std::move where the caller is done with it
// (at 1,024 ranks a copy is 8 MiB of fresh pages, a fifth of the plan time).
FastPlan build_fast_plan(TrafficMatrix demand, const ServerMap& map, const FastPlanOptions& options = {});

// What one rank does, with explicit pieces. Buffers named by `at`:
// - send buffer / receive buffer: the rank's alltoallv buffers (layout from
//   send_displs / recv_displs);
// - staging buffer: the balance receives stored back to back in the order of
//   balance_recvs (staging_bytes long);
// - message: the bytes of one received rail message.
struct RankSchedule {
  int rank = 0;
  std::vector<std::uint64_t> send_displs;  // by destination rank
  std::vector<std::uint64_t> recv_displs;  // by source rank
  std::vector<Piece> pieces;               // every Transfer below indexes this

  // Step 0.
  std::vector<Transfer> balance_sends;    // at: send buffer
  std::vector<Transfer> balance_recvs;    // at: staging buffer
  std::uint64_t staging_bytes = 0;
  std::vector<Transfer> intrinsic_sends;  // at: send buffer (same-server blocks, self included)
  std::vector<Transfer> intrinsic_recvs;  // at: receive buffer

  // One entry per stage; peer -1 and no pieces when this rank is idle.
  std::vector<Transfer> rail_sends;  // at: send buffer if piece.src == rank, else staging buffer
  std::vector<Transfer> rail_recvs;  // at: position in the received message.
                                     // Pieces with dst == rank are kept: copy to recv_displs[src] + offset.
  // Forwarding of stage k's received message (done in step k+1), grouped by
  // stage: [forward_*_begin[k], forward_*_begin[k+1]), sorted by peer.
  std::vector<std::uint32_t> forward_send_begin;
  std::vector<Transfer> forward_sends;  // at: position in stage k's received message
  std::vector<std::uint32_t> forward_recv_begin;
  std::vector<Transfer> forward_recvs;  // at: receive buffer
};

RankSchedule rank_schedule(const FastPlan& plan, int rank);

// A 64-bit fingerprint of everything in the plan but plan_time_s; equal plans
// give equal fingerprints on every platform (ranks can compare them).
std::uint64_t plan_fingerprint(const FastPlan& plan);

}  // namespace nestfast::comm
