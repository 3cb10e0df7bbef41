#pragma once
// A compiled FAST exchange for one rank, run as a pipeline instead of a
// sequence of globally stepped Waitalls (comm.md section 2, issue 18):
//   - the node traffic (balance, same-server exchange) and every forwarding
//     receive are posted at once;
//   - rail stages run as two chains per rank. The receive chain grants stage
//     k to its sender (a zero-byte message on rail_comm) as soon as this
//     rank's previous rail receive has arrived, so its NIC downlink is fed by
//     one sender at a time (no incast, however far other ranks are); the send
//     chain posts stage k when its grant has come and its previous rail send
//     is done, so the uplink also carries one stage at a time;
//   - a rail message that has arrived is forwarded at once to its final local
//     ranks (node_comm), while later stages are still on the wire.
// A rank never waits for a stage it has no part in: link by link, the
// schedule advances as fast as the two ends of each transfer allow (the
// pipelined port model of comm/sim). Rail data may be cut into chunks of at
// most `chunk_bytes`, so that an MPI whose rendezvous protocol serialises
// two-way exchanges on one connection (UCX over TCP, testbed-notes.md) sends
// them eagerly: the grant, not the protocol, keeps the downlink one-to-one.
// A connection delivers in order, so a grant queues behind every byte posted
// before it to the same peer (measured on the testbed: a swap partner's grant
// arrived a whole stage late, behind its 8 MiB of data, and the swap ran one
// way at a time). Hence two rules:
//   - at most kSendWindow chunks of a rail send are posted at once, so a
//     grant waits behind a window, not behind a stage;
//   - in a swap (this stage's send goes to the rank it receives from), the
//     rank grants its receive before it sends, so its grant is not behind
//     its own data. Acyclic: a stage's send waits on that stage's grant and
//     the previous stage's traffic only.
// "Previous rail send done" must mean delivered, not buffered: an eager send
// completes once the socket took it, with up to a socket buffer of the stage
// (256 KiB on the testbed) still to go out, and the next stage then shared
// the uplink with it, slowing whichever transfer was the critical one. So
// the last chunk of a rail send that has a successor is an MPI_Issend, done
// when the receiver has matched it, i.e. after every byte before it on that
// connection has arrived (testbed 8 x 1 zipf:0.8, 16 KiB chunks, alternating
// runs at load 5.5-6.3: 1 MiB 193-196 against 230-253 ms, 4 MiB 756-758
// against 818-826 ms, the bound 182 / 726 ms; docs/testbed.md).
// Copies (gathering a send, scattering an arrival, forwarding) run in slices
// between progress calls, and the next send is gathered while the current
// one is on the wire: a rank that copies 8 MiB in one go leaves its send
// window empty for as long (tens of ms on a loaded machine). A send in chunks
// goes out as its packed prefix grows, and its pack starts before the
// balance has arrived (the rank's own bytes come first in its stream): on a
// server with one NIC its first rank otherwise waited for the whole balance
// and the whole pack, 93-132 ms of idle NIC per exchange at 2 x 4 (docs/testbed.md).
// Every execution replays the program with no allocation and no decisions.
#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace nestfast::comm {

enum class BufferKind : int {
  kSend,     // the caller's send buffer
  kRecv,     // the caller's receive buffer
  kStaging,  // bytes handed over by the intra-server balance
  kArrival,  // rail messages as they arrive, one region per stage
  kPack,     // outgoing messages gathered from scattered pieces, one region per message
  kUnpack,   // incoming messages before they are scattered, one region per message
};
inline constexpr std::size_t kBufferKinds = 6;
// Chunks of one rail send posted at once, and the bytes copied between two
// progress calls (see above).
inline constexpr std::uint32_t kSendWindow = 4;
inline constexpr std::uint64_t kCopySlice = 256 * 1024;

struct CopyRange {
  BufferKind from_kind = BufferKind::kSend;
  std::uint64_t from = 0;  // offset in the source buffer
  BufferKind to_kind = BufferKind::kRecv;
  std::uint64_t to = 0;  // offset in the destination buffer
  std::uint64_t length = 0;
};

// One message with the copies that go with it: packing before a send,
// unpacking (and keeping this rank's own pieces) after a receive.
struct ProgramMessage {
  BufferKind buffer = BufferKind::kSend;
  std::uint64_t at = 0;
  std::uint64_t bytes = 0;  // never 0: empty messages are not compiled in
  int peer = 0;             // rank in `comm`
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<CopyRange> copies;
};

struct RailSend {
  int stage = 0;
  ProgramMessage data;      // on rail_comm
  int grant_tag = 0;        // the receiver's go-ahead for this stage
  bool needs_staging = false;  // carries bytes taken in the balance
};

struct RailReceive {
  int stage = 0;
  ProgramMessage data;  // copies: this rank's own pieces, out of the arrival region
  int grant_tag = 0;
  // forwards[first_forward, first_forward + forward_count) go out when it has arrived.
  std::uint32_t first_forward = 0;
  std::uint32_t forward_count = 0;
};

// What one execution did, for a timeline of the rank's stages (seconds
// since the start of the execution; -1 where the event did not happen).
struct StageTimes {
  int stage = 0;
  double granted = -1;   // send side: the grant arrived
  double sent = -1;      // send side: the data was posted
  double send_done = -1;
  double grant_given = -1;  // receive side: the grant went out
  double arrived = -1;
};

class FastProgram {
 public:
  std::vector<ProgramMessage> balance_receives;  // node_comm; the staging buffer is ready when all have arrived
  std::vector<ProgramMessage> node_receives;     // node_comm: same-server blocks and every forwarded piece
  std::vector<ProgramMessage> node_sends;        // node_comm: balance hand-overs and same-server blocks
  std::vector<CopyRange> self_copies;            // this rank's block to itself
  std::vector<RailSend> rail_sends;              // in stage order
  std::vector<RailReceive> rail_receives;        // in stage order
  std::vector<ProgramMessage> forwards;          // node_comm, grouped by rail receive
  std::uint64_t chunk_bytes = 0;                 // rail data in messages of at most this many bytes (0 = whole)
  std::array<std::uint64_t, kBufferKinds> internal_bytes{};  // kSend and kRecv belong to the caller

  // Allocates the internal buffers and the request arrays (after the lists are final).
  void allocate();
  // Replays the exchange on host buffers.
  void run(const std::byte* send, std::byte* recv);
  // Per rail stage this rank takes part in, what the last run did when.
  const std::vector<StageTimes>& last_times() const { return times_; }

 private:
  std::array<std::unique_ptr<std::byte[]>, kBufferKinds> owned_;
  std::vector<MPI_Request> requests_;
  std::vector<std::uint32_t> owners_;  // what each request in requests_ belongs to (see run)
  std::vector<int> completed_;
  std::vector<std::uint32_t> chunks_left_;  // per rail receive
  std::vector<bool> granted_;              // per rail send
  std::vector<std::int32_t> swap_receive_;  // per rail send: its stage's rail receive from the same peer, or -1
  // A list of copies being worked through, and what finishes when it is done.
  struct CopyJob {
    const std::vector<CopyRange>* ranges = nullptr;
    std::size_t range = 0;      // the range being copied
    std::uint64_t copied = 0;   // bytes of it already copied
    std::uint32_t then = 0;     // an owner id (fast_program.cpp)
  };
  std::vector<CopyJob> copy_jobs_;  // first in, first out; the gather of a rail send is a job of its own (run)
  std::vector<StageTimes> times_;
  std::vector<int> time_slot_of_stage_;
};

}  // namespace nestfast::comm
