#pragma once
// A compiled exchange: a list of steps, each "copy (pack), post messages, one
// Waitall, copy (unpack)", over a few named buffers. FAST compiles its rank
// schedule into one at prepare time; every execution replays it with no
// allocation and no decisions. Copies are grouped per (source, destination)
// buffer pair, the shape gpu/'s copy plans take.
#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

enum class BufferKind : int {
  kSend,     // the caller's send buffer
  kRecv,     // the caller's receive buffer
  kStaging,  // bytes handed over by the intra-server balance
  kPing,     // rail receive buffers, alternating by stage
  kPong,
  kPack,     // outgoing messages gathered from scattered pieces
  kUnpack,   // incoming messages before they are scattered
};
inline constexpr std::size_t kBufferKinds = 7;

struct CopyRange {
  std::uint64_t from = 0;  // offset in the source buffer
  std::uint64_t to = 0;    // offset in the destination buffer
  std::uint64_t length = 0;
};

struct CopyBatch {
  BufferKind from_kind;
  BufferKind to_kind;
  std::vector<CopyRange> ranges;
};

struct Message {
  bool send = false;
  BufferKind buffer = BufferKind::kSend;
  std::uint64_t at = 0;
  std::uint64_t bytes = 0;  // never 0: empty messages are not compiled in
  int peer = 0;             // rank in `comm`
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
};

struct Step {
  std::vector<CopyBatch> before;  // packing (and local copies)
  std::vector<Message> messages;  // receives first, then sends
  std::vector<CopyBatch> after;   // unpacking and keeping what arrived for this rank
};

class StepProgram {
 public:
  std::vector<Step> steps;
  // Bytes each internal buffer needs (kSend and kRecv belong to the caller).
  std::array<std::uint64_t, kBufferKinds> internal_bytes{};

  // Allocates the internal buffers (after `steps` and `internal_bytes` are final).
  void allocate();
  // Replays the steps on host buffers.
  void run(const std::byte* send, std::byte* recv);

 private:
  std::array<std::unique_ptr<std::byte[]>, kBufferKinds> owned_;
  RequestBatch requests_;
};

// Builds one step's copies and messages; gathers scattered pieces into the
// pack buffer (or scatters from the unpack buffer) only when they are not
// already one contiguous range of one buffer.
class StepBuilder {
 public:
  struct Range {
    BufferKind kind;
    std::uint64_t at;
    std::uint64_t length;
  };

  explicit StepBuilder(StepProgram& program) : program_(program) {}

  // Each call appends to the step in progress; finish() closes it.
  void send(const std::vector<Range>& pieces, int peer, int tag, MPI_Comm comm);
  void receive(const std::vector<Range>& pieces, int peer, int tag, MPI_Comm comm);
  void receive_whole(BufferKind kind, std::uint64_t at, std::uint64_t bytes, int peer, int tag, MPI_Comm comm);
  void copy_after(BufferKind from, std::uint64_t from_at, BufferKind to, std::uint64_t to_at, std::uint64_t length);
  void copy_before(BufferKind from, std::uint64_t from_at, BufferKind to, std::uint64_t to_at, std::uint64_t length);
  void finish();

 private:
  static bool contiguous(const std::vector<Range>& pieces);
  static void add_copy(std::vector<CopyBatch>& batches, BufferKind from, std::uint64_t from_at, BufferKind to,
                       std::uint64_t to_at, std::uint64_t length);

  StepProgram& program_;
  Step step_;
  std::vector<Message> sends_;
  std::uint64_t packed_ = 0;
  std::uint64_t unpacked_ = 0;
};

}  // namespace nestfast::comm
