#include "comm/exec/step_program.hpp"

#include <algorithm>
#include <cstring>


namespace nestfast::comm {

namespace {

std::size_t slot(BufferKind kind) { return static_cast<std::size_t>(kind); }

void run_copies(const std::vector<CopyBatch>& batches, const std::array<std::byte*, kBufferKinds>& base) {
  for (const CopyBatch& batch : batches) {
    const std::byte* from = base[slot(batch.from_kind)];
    std::byte* to = base[slot(batch.to_kind)];
    for (const CopyRange& range : batch.ranges) std::memcpy(to + range.to, from + range.from, range.length);
  }
}

}  // namespace

void StepProgram::allocate() {
  for (std::size_t k = 0; k < kBufferKinds; ++k) {
    if (internal_bytes[k] > 0) owned_[k].reset(new std::byte[internal_bytes[k]]);
  }
}

void StepProgram::run(const std::byte* send, std::byte* recv) {
  std::array<std::byte*, kBufferKinds> base{};
  for (std::size_t k = 0; k < kBufferKinds; ++k) base[k] = owned_[k].get();
  // MPI and memcpy only read from the send buffer; the array holds one pointer type.
  base[slot(BufferKind::kSend)] = const_cast<std::byte*>(send);
  base[slot(BufferKind::kRecv)] = recv;

  for (const Step& step : steps) {
    run_copies(step.before, base);
    for (const Message& message : step.messages) {
      std::byte* buffer = base[slot(message.buffer)] + message.at;
      if (message.send) requests_.send(buffer, message.bytes, message.peer, message.tag, message.comm);
      else requests_.receive(buffer, message.bytes, message.peer, message.tag, message.comm);
    }
    requests_.wait_all();
    run_copies(step.after, base);
  }
}

bool StepBuilder::contiguous(const std::vector<Range>& pieces) {
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    if (pieces[i].kind != pieces[0].kind || pieces[i].at != pieces[i - 1].at + pieces[i - 1].length) return false;
  }
  return true;
}

void StepBuilder::add_copy(std::vector<CopyBatch>& batches, BufferKind from, std::uint64_t from_at, BufferKind to,
                           std::uint64_t to_at, std::uint64_t length) {
  if (length == 0) return;
  auto batch = std::find_if(batches.begin(), batches.end(),
                            [&](const CopyBatch& b) { return b.from_kind == from && b.to_kind == to; });
  if (batch == batches.end()) batch = batches.insert(batches.end(), CopyBatch{from, to, {}});
  batch->ranges.push_back({from_at, to_at, length});
}

void StepBuilder::send(const std::vector<Range>& pieces, int peer, int tag, MPI_Comm comm) {
  std::uint64_t bytes = 0;
  for (const Range& piece : pieces) bytes += piece.length;
  if (bytes == 0) return;
  if (contiguous(pieces)) {
    sends_.push_back({true, pieces[0].kind, pieces[0].at, bytes, peer, tag, comm});
    return;
  }
  const std::uint64_t start = packed_;
  for (const Range& piece : pieces) {
    add_copy(step_.before, piece.kind, piece.at, BufferKind::kPack, packed_, piece.length);
    packed_ += piece.length;
  }
  sends_.push_back({true, BufferKind::kPack, start, bytes, peer, tag, comm});
}

void StepBuilder::receive(const std::vector<Range>& pieces, int peer, int tag, MPI_Comm comm) {
  std::uint64_t bytes = 0;
  for (const Range& piece : pieces) bytes += piece.length;
  if (bytes == 0) return;
  if (contiguous(pieces)) {
    step_.messages.push_back({false, pieces[0].kind, pieces[0].at, bytes, peer, tag, comm});
    return;
  }
  const std::uint64_t start = unpacked_;
  for (const Range& piece : pieces) {
    add_copy(step_.after, BufferKind::kUnpack, unpacked_, piece.kind, piece.at, piece.length);
    unpacked_ += piece.length;
  }
  step_.messages.push_back({false, BufferKind::kUnpack, start, bytes, peer, tag, comm});
}

void StepBuilder::receive_whole(BufferKind kind, std::uint64_t at, std::uint64_t bytes, int peer, int tag,
                                MPI_Comm comm) {
  if (bytes > 0) step_.messages.push_back({false, kind, at, bytes, peer, tag, comm});
}

void StepBuilder::copy_after(BufferKind from, std::uint64_t from_at, BufferKind to, std::uint64_t to_at,
                             std::uint64_t length) {
  add_copy(step_.after, from, from_at, to, to_at, length);
}

void StepBuilder::copy_before(BufferKind from, std::uint64_t from_at, BufferKind to, std::uint64_t to_at,
                              std::uint64_t length) {
  add_copy(step_.before, from, from_at, to, to_at, length);
}

void StepBuilder::finish() {
  step_.messages.insert(step_.messages.end(), sends_.begin(), sends_.end());
  auto& sizes = program_.internal_bytes;
  sizes[slot(BufferKind::kPack)] = std::max(sizes[slot(BufferKind::kPack)], packed_);
  sizes[slot(BufferKind::kUnpack)] = std::max(sizes[slot(BufferKind::kUnpack)], unpacked_);
  if (!step_.before.empty() || !step_.messages.empty() || !step_.after.empty()) {
    program_.steps.push_back(std::move(step_));
  }
  step_ = Step{};
  sends_.clear();
  packed_ = 0;
  unpacked_ = 0;
}

}  // namespace nestfast::comm
