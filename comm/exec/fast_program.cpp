#include "comm/exec/fast_program.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

namespace {

std::size_t slot(BufferKind kind) { return static_cast<std::size_t>(kind); }

// What a request belongs to: kind in the top 4 bits, an index below.
enum Owner : std::uint32_t {
  kBalanceReceive = 0,
  kNodeReceive,
  kNodeSend,
  kForwardSend,
  kGrantReceive,  // index: rail send
  kGrantSend,     // index: rail receive
  kRailSendChunk,
  kRailReceiveChunk,
};
constexpr std::uint32_t owner(Owner kind, std::size_t index) { return static_cast<std::uint32_t>(kind) << 28 | static_cast<std::uint32_t>(index); }
constexpr Owner kind_of(std::uint32_t id) { return static_cast<Owner>(id >> 28); }
constexpr std::size_t index_of(std::uint32_t id) { return id & ((1U << 28) - 1); }

std::uint32_t chunk_count(std::uint64_t bytes, std::uint64_t chunk) {
  return chunk == 0 ? 1U : static_cast<std::uint32_t>((bytes + chunk - 1) / chunk);
}

}  // namespace

void FastProgram::allocate() {
  for (std::size_t k = 0; k < kBufferKinds; ++k) {
    if (internal_bytes[k] > 0) owned_[k].reset(new std::byte[internal_bytes[k]]);
  }
  // At most: all node traffic and forwards, one grant each way, the chunks of one rail send and one receive.
  std::size_t most = balance_receives.size() + node_receives.size() + node_sends.size() + forwards.size() + 2;
  std::uint32_t send_chunks = 0, receive_chunks = 0;
  for (const RailSend& send : rail_sends) send_chunks = std::max(send_chunks, chunk_count(send.data.bytes, chunk_bytes));
  for (const RailReceive& receive : rail_receives) {
    receive_chunks = std::max(receive_chunks, chunk_count(receive.data.bytes, chunk_bytes));
  }
  most += send_chunks + receive_chunks;
  requests_.reserve(most);
  owners_.reserve(most);
  completed_.resize(most);
  chunks_left_.assign(rail_sends.size() + rail_receives.size(), 0);
  granted_.assign(rail_sends.size(), false);
  int last_stage = -1;
  for (const RailSend& send : rail_sends) last_stage = std::max(last_stage, send.stage);
  for (const RailReceive& receive : rail_receives) last_stage = std::max(last_stage, receive.stage);
  time_slot_of_stage_.assign(static_cast<std::size_t>(last_stage + 1), -1);
  times_.clear();
  auto add_slot = [&](int stage) {
    if (time_slot_of_stage_[stage] >= 0) return;
    time_slot_of_stage_[stage] = static_cast<int>(times_.size());
    times_.push_back({stage});
  };
  for (const RailSend& send : rail_sends) add_slot(send.stage);
  for (const RailReceive& receive : rail_receives) add_slot(receive.stage);
  std::sort(times_.begin(), times_.end(), [](const StageTimes& a, const StageTimes& b) { return a.stage < b.stage; });
  for (std::size_t i = 0; i < times_.size(); ++i) time_slot_of_stage_[times_[i].stage] = static_cast<int>(i);
}

void FastProgram::run(const std::byte* send, std::byte* recv) {
  std::array<std::byte*, kBufferKinds> base{};
  for (std::size_t k = 0; k < kBufferKinds; ++k) base[k] = owned_[k].get();
  // MPI and memcpy only read from the send buffer; the array holds one pointer type.
  base[slot(BufferKind::kSend)] = const_cast<std::byte*>(send);
  base[slot(BufferKind::kRecv)] = recv;
  const double started = MPI_Wtime();
  auto now = [&] { return MPI_Wtime() - started; };
  auto times_of = [&](int stage) -> StageTimes& { return times_[static_cast<std::size_t>(time_slot_of_stage_[stage])]; };
  for (StageTimes& times : times_) times = StageTimes{times.stage};

  auto copy = [&](const std::vector<CopyRange>& ranges) {
    for (const CopyRange& range : ranges) {
      std::memcpy(base[slot(range.to_kind)] + range.to, base[slot(range.from_kind)] + range.from, range.length);
    }
  };
  auto track = [&](MPI_Request request, std::uint32_t id) {
    requests_.push_back(request);
    owners_.push_back(id);
  };
  auto post = [&](const ProgramMessage& message, bool is_send, std::uint32_t id, std::uint64_t offset, std::uint64_t bytes) {
    MPI_Request request;
    std::byte* buffer = base[slot(message.buffer)] + message.at + offset;
    const auto count = static_cast<MPI_Count>(bytes);
    if (is_send) {
      check_mpi(MPI_Isend_c(buffer, count, MPI_BYTE, message.peer, message.tag, message.comm, &request), "MPI_Isend_c");
    } else {
      check_mpi(MPI_Irecv_c(buffer, count, MPI_BYTE, message.peer, message.tag, message.comm, &request), "MPI_Irecv_c");
    }
    track(request, id);
  };
  // Rail data in chunks of at most chunk_bytes, one request each; both ends cut alike.
  auto post_chunks = [&](const ProgramMessage& message, bool is_send, std::uint32_t id) {
    const std::uint64_t chunk = chunk_bytes == 0 ? message.bytes : chunk_bytes;
    std::uint32_t posted = 0;
    for (std::uint64_t offset = 0; offset < message.bytes; offset += chunk, ++posted) {
      post(message, is_send, id, offset, std::min(chunk, message.bytes - offset));
    }
    return posted;
  };
  std::byte grant_byte{};  // a zero-byte message still names a buffer
  auto post_grant = [&](const ProgramMessage& data, int tag, bool is_send, std::uint32_t id) {
    MPI_Request request;
    if (is_send) check_mpi(MPI_Isend(&grant_byte, 0, MPI_BYTE, data.peer, tag, data.comm, &request), "MPI_Isend");
    else check_mpi(MPI_Irecv(&grant_byte, 0, MPI_BYTE, data.peer, tag, data.comm, &request), "MPI_Irecv");
    track(request, id);
  };

  // Receive chain: open the next stage (post its data receive, then grant it)
  // once the previous one has arrived, or, when rail data comes in chunks,
  // once only its last chunk is still on the wire: that chunk is in flight
  // while the grant travels, and the two senders overlap by at most a chunk.
  std::size_t opened = 0;
  const std::size_t sends = rail_sends.size();
  auto open_next = [&] {
    if (opened >= rail_receives.size()) return;
    const RailReceive& receive = rail_receives[opened];
    chunks_left_[sends + opened] = post_chunks(receive.data, false, owner(kRailReceiveChunk, opened));
    post_grant(receive.data, receive.grant_tag, true, owner(kGrantSend, opened));
    times_of(receive.stage).grant_given = now();
    ++opened;
  };
  // Send chain: stage i goes out when granted, after stage i-1, with the staging buffer filled if it needs it.
  std::size_t next_send = 0;
  bool sending = false;
  // Only the next stage's grant is awaited: thousands of stages need not be thousands of open requests.
  auto expect_grant = [&](std::size_t i) {
    post_grant(rail_sends[i].data, rail_sends[i].grant_tag, false, owner(kGrantReceive, i));
  };
  std::size_t balance_left = balance_receives.size();
  std::vector<bool>& granted = granted_;
  std::fill(granted.begin(), granted.end(), false);
  auto try_send = [&] {
    if (sending || next_send >= sends || !granted[next_send]) return;
    const RailSend& rail = rail_sends[next_send];
    if (rail.needs_staging && balance_left > 0) return;
    copy(rail.data.copies);
    chunks_left_[next_send] = post_chunks(rail.data, true, owner(kRailSendChunk, next_send));
    times_of(rail.stage).sent = now();
    sending = true;
    if (next_send + 1 < sends) expect_grant(next_send + 1);
  };

  for (std::size_t i = 0; i < balance_receives.size(); ++i) post(balance_receives[i], false, owner(kBalanceReceive, i), 0, balance_receives[i].bytes);
  for (std::size_t i = 0; i < node_receives.size(); ++i) post(node_receives[i], false, owner(kNodeReceive, i), 0, node_receives[i].bytes);
  if (sends > 0) expect_grant(0);
  open_next();
  for (std::size_t i = 0; i < node_sends.size(); ++i) {
    copy(node_sends[i].copies);
    post(node_sends[i], true, owner(kNodeSend, i), 0, node_sends[i].bytes);
  }
  copy(self_copies);

  while (!requests_.empty()) {
    if (completed_.size() < requests_.size()) completed_.resize(requests_.size());
    int done = 0;
    check_mpi(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &done, completed_.data(), MPI_STATUSES_IGNORE),
              "MPI_Testsome");
    if (done == MPI_UNDEFINED || done == 0) {
      sched_yield();  // see wait_yielding: ranks may outnumber the cores
      continue;
    }
    for (int c = 0; c < done; ++c) {
      const std::uint32_t id = owners_[static_cast<std::size_t>(completed_[static_cast<std::size_t>(c)])];
      const std::size_t index = index_of(id);
      switch (kind_of(id)) {
        case kBalanceReceive:
          copy(balance_receives[index].copies);
          --balance_left;
          break;
        case kNodeReceive:
          copy(node_receives[index].copies);
          break;
        case kGrantReceive:
          granted[index] = true;
          times_of(rail_sends[index].stage).granted = now();
          break;
        case kRailSendChunk:
          if (--chunks_left_[index] == 0) {
            times_of(rail_sends[index].stage).send_done = now();
            sending = false;
            ++next_send;
          }
          break;
        case kRailReceiveChunk: {
          const std::uint32_t left = --chunks_left_[sends + index];
          if (left == 1 && chunk_bytes > 0 && opened == index + 1) open_next();
          if (left == 0) {
            const RailReceive& receive = rail_receives[index];
            times_of(receive.stage).arrived = now();
            if (opened == index + 1) open_next();  // the downlink is free: let the next stage's sender go
            copy(receive.data.copies);
            for (std::uint32_t f = receive.first_forward; f < receive.first_forward + receive.forward_count; ++f) {
              copy(forwards[f].copies);
              post(forwards[f], true, owner(kForwardSend, f), 0, forwards[f].bytes);
            }
          }
          break;
        }
        case kNodeSend:
        case kForwardSend:
        case kGrantSend:
          break;
      }
    }
    // Drop the finished requests (MPI set them to MPI_REQUEST_NULL), keeping owners aligned.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      if (requests_[i] == MPI_REQUEST_NULL) continue;
      requests_[kept] = requests_[i];
      owners_[kept++] = owners_[i];
    }
    requests_.resize(kept);
    owners_.resize(kept);
    try_send();
  }
}

}  // namespace nestfast::comm
