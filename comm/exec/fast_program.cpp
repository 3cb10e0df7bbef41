#include "comm/exec/fast_program.hpp"

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
  kGather,  // copy jobs only: rail send `index` is gathered
  kScatter,  // copy jobs only: nothing follows
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
  // At most: all node traffic and forwards, one grant each way, a window of
  // one rail send and the chunks of two receives (the next opens before the last chunk is in).
  std::size_t most = balance_receives.size() + node_receives.size() + node_sends.size() + forwards.size() + 2;
  std::uint32_t receive_chunks = 0;
  for (const RailReceive& receive : rail_receives) {
    receive_chunks = std::max(receive_chunks, chunk_count(receive.data.bytes, chunk_bytes));
  }
  most += kSendWindow + 2 * receive_chunks;
  requests_.reserve(most);
  owners_.reserve(most);
  completed_.resize(most);
  chunks_left_.assign(rail_receives.size(), 0);
  granted_.assign(rail_sends.size(), false);
  swap_receive_.assign(rail_sends.size(), -1);
  copy_jobs_.reserve(balance_receives.size() + node_receives.size() + forwards.size() + rail_receives.size() + rail_sends.size());
  for (std::size_t i = 0, r = 0; i < rail_sends.size(); ++i) {  // both lists are in stage order
    while (r < rail_receives.size() && rail_receives[r].stage < rail_sends[i].stage) ++r;
    if (r < rail_receives.size() && rail_receives[r].stage == rail_sends[i].stage &&
        rail_receives[r].data.peer == rail_sends[i].data.peer) {
      swap_receive_[i] = static_cast<std::int32_t>(r);
    }
  }
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
  // synchronous: an MPI_Issend, complete only once the receiver has matched it (see the header).
  auto post = [&](const ProgramMessage& message, bool is_send, std::uint32_t id, std::uint64_t offset, std::uint64_t bytes,
                  bool synchronous = false) {
    MPI_Request request;
    std::byte* buffer = base[slot(message.buffer)] + message.at + offset;
    const auto count = static_cast<MPI_Count>(bytes);
    if (is_send && synchronous) {
      check_mpi(MPI_Issend_c(buffer, count, MPI_BYTE, message.peer, message.tag, message.comm, &request), "MPI_Issend_c");
    } else if (is_send) {
      check_mpi(MPI_Isend_c(buffer, count, MPI_BYTE, message.peer, message.tag, message.comm, &request), "MPI_Isend_c");
    } else {
      check_mpi(MPI_Irecv_c(buffer, count, MPI_BYTE, message.peer, message.tag, message.comm, &request), "MPI_Irecv_c");
    }
    track(request, id);
  };
  // Copy jobs, worked off kCopySlice bytes at a time (see the header).
  std::size_t job_head = 0;
  auto add_job = [&](const std::vector<CopyRange>& ranges, std::uint32_t then) {
    copy_jobs_.push_back({&ranges, 0, 0, then});
  };
  auto jobs_pending = [&] { return job_head < copy_jobs_.size(); };
  std::size_t balance_left = balance_receives.size();
  // Copies up to a slice of `job`, stopping early before a byte of the
  // staging buffer while the balance is still arriving; true when it is done.
  auto copy_slice_of = [&](CopyJob& job) {
    std::uint64_t budget = kCopySlice;
    while (job.range < job.ranges->size() && budget > 0) {
      const CopyRange& range = (*job.ranges)[job.range];
      if (range.from_kind == BufferKind::kStaging && balance_left > 0) break;
      const std::uint64_t bytes = std::min(budget, range.length - job.copied);
      std::memcpy(base[slot(range.to_kind)] + range.to + job.copied, base[slot(range.from_kind)] + range.from + job.copied, bytes);
      budget -= bytes;
      job.copied += bytes;
      if (job.copied == range.length) {
        ++job.range;
        job.copied = 0;
      }
    }
    return job.range == job.ranges->size();
  };
  // Copies up to a slice of the oldest job (never a staging read: none waits
  // for the balance); returns the job's `then` when it finished, else ~0.
  auto copy_slice = [&]() -> std::uint32_t {
    CopyJob& job = copy_jobs_[job_head];
    if (!copy_slice_of(job)) return ~0U;
    const std::uint32_t then = job.then;
    if (++job_head == copy_jobs_.size()) {
      copy_jobs_.clear();
      job_head = 0;
    }
    return then;
  };
  // Rail data in chunks of at most chunk_bytes, one request each; both ends cut alike.
  auto chunk_of = [&](const ProgramMessage& message) { return chunk_bytes == 0 ? message.bytes : chunk_bytes; };
  auto post_receive_chunks = [&](const ProgramMessage& message, std::uint32_t id) {
    const std::uint64_t chunk = chunk_of(message);
    std::uint32_t posted = 0;
    for (std::uint64_t offset = 0; offset < message.bytes; offset += chunk, ++posted) {
      post(message, false, id, offset, std::min(chunk, message.bytes - offset));
    }
    return posted;
  };
  // The rail send in progress: bytes posted so far and chunks still in flight.
  std::uint64_t send_posted = 0;
  std::uint32_t send_in_flight = 0;
  // Rail sends [0, gathered) are packed; send `gathered` is being packed while
  // `gathering`, by `gather`, a copy job beside the others: it may start
  // before the balance has arrived and waits for it at the first staged byte
  // (a rank's own bytes come first in its stream), which no other job does.
  // A send is packed at most one ahead of the one on the wire.
  std::size_t gathered = 0;
  bool gathering = false;
  CopyJob gather;
  // Bytes of rail send i that may go out: all once packed; while it is being
  // packed (in order, into one region), the packed prefix when it goes in
  // chunks, so the wire starts with the first chunk instead of after the last.
  auto ready_bytes = [&](std::size_t i) -> std::uint64_t {
    const ProgramMessage& message = rail_sends[i].data;
    if (i < gathered) return message.bytes;
    if (!gathering || i != gathered || chunk_bytes == 0) return 0;
    if (gather.range >= gather.ranges->size()) return message.bytes;
    return (*gather.ranges)[gather.range].to + gather.copied - message.at;
  };
  auto fill_send_window = [&](std::size_t i) {
    const ProgramMessage& message = rail_sends[i].data;
    const std::uint64_t chunk = chunk_of(message);
    const std::uint64_t ready = ready_bytes(i);
    for (; send_in_flight < kSendWindow && send_posted < message.bytes; ++send_in_flight) {
      const std::uint64_t bytes = std::min(chunk, message.bytes - send_posted);
      if (send_posted + bytes > ready) break;
      const bool last = send_posted + bytes == message.bytes;
      post(message, true, owner(kRailSendChunk, i), send_posted, bytes, last && i + 1 < rail_sends.size());
      send_posted += bytes;
    }
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
    chunks_left_[opened] = post_receive_chunks(receive.data, owner(kRailReceiveChunk, opened));
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
  std::vector<bool>& granted = granted_;
  std::fill(granted.begin(), granted.end(), false);
  auto gather_ahead = [&] {
    while (!gathering && gathered < sends && gathered <= next_send + 1) {
      const RailSend& rail = rail_sends[gathered];
      if (!rail.data.copies.empty()) {
        gather = {&rail.data.copies, 0, 0, owner(kGather, gathered)};
        gathering = true;
        return;
      }
      if (rail.needs_staging && balance_left > 0) return;  // sent straight from the staging buffer
      ++gathered;
    }
  };
  auto try_send = [&] {
    gather_ahead();
    if (sending || next_send >= sends || !granted[next_send]) return;
    const RailSend& rail = rail_sends[next_send];
    if (ready_bytes(next_send) < std::min(chunk_of(rail.data), rail.data.bytes)) return;
    if (swap_receive_[next_send] >= static_cast<std::int32_t>(opened)) return;  // a swap: grant first
    send_posted = 0;
    send_in_flight = 0;
    fill_send_window(next_send);
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

  copy_jobs_.clear();
  try_send();  // gathers the first send
  auto finish_job = [&](std::uint32_t then) {
    const std::size_t index = index_of(then);
    switch (kind_of(then)) {
      case kBalanceReceive:
        --balance_left;
        break;
      case kForwardSend:
        post(forwards[index], true, then, 0, forwards[index].bytes);
        break;
      default:
        break;
    }
  };
  // A forward goes out at once when it needs no gathering, else after its copy job.
  auto forward = [&](std::uint32_t f) {
    if (forwards[f].copies.empty()) post(forwards[f], true, owner(kForwardSend, f), 0, forwards[f].bytes);
    else add_job(forwards[f].copies, owner(kForwardSend, f));
  };

  // The gather can copy now: it is not done and not waiting for the balance.
  auto gather_can_copy = [&] {
    return gathering && !(balance_left > 0 && gather.range < gather.ranges->size() &&
                          (*gather.ranges)[gather.range].from_kind == BufferKind::kStaging);
  };
  IdleBackoff backoff;
  while (!requests_.empty() || jobs_pending() || gathering) {
    int done = 0;
    if (jobs_pending()) {
      backoff.progressed();
      const std::uint32_t then = copy_slice();
      if (then != ~0U) {
        finish_job(then);
        try_send();
      }
    }
    if (gather_can_copy()) {
      backoff.progressed();
      if (copy_slice_of(gather)) {
        gathering = false;
        ++gathered;
        try_send();
      }
      if (sending) fill_send_window(next_send);  // more of a send being packed may be ready
    }
    if (requests_.empty()) continue;
    if (completed_.size() < requests_.size()) completed_.resize(requests_.size());
    check_mpi(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &done, completed_.data(), MPI_STATUSES_IGNORE),
              "MPI_Testsome");
    if (done == MPI_UNDEFINED || done == 0) {
      if (!jobs_pending() && !gather_can_copy()) backoff.idle();  // ranks may outnumber the cores
      continue;
    }
    backoff.progressed();
    for (int c = 0; c < done; ++c) {
      const std::uint32_t id = owners_[static_cast<std::size_t>(completed_[static_cast<std::size_t>(c)])];
      const std::size_t index = index_of(id);
      switch (kind_of(id)) {
        case kBalanceReceive:
          if (balance_receives[index].copies.empty()) --balance_left;
          else add_job(balance_receives[index].copies, id);
          break;
        case kNodeReceive:
          if (!node_receives[index].copies.empty()) add_job(node_receives[index].copies, owner(kScatter, index));
          break;
        case kGrantReceive:
          granted[index] = true;
          times_of(rail_sends[index].stage).granted = now();
          break;
        case kRailSendChunk:
          --send_in_flight;
          fill_send_window(index);
          if (send_in_flight == 0 && send_posted == rail_sends[index].data.bytes) {
            times_of(rail_sends[index].stage).send_done = now();
            sending = false;
            ++next_send;
          }
          break;
        case kRailReceiveChunk: {
          const std::uint32_t left = --chunks_left_[index];
          if (left == 1 && chunk_bytes > 0 && opened == index + 1) open_next();
          if (left == 0) {
            const RailReceive& receive = rail_receives[index];
            times_of(receive.stage).arrived = now();
            if (opened == index + 1) open_next();  // the downlink is free: let the next stage's sender go
            // Forwards first: other ranks wait for them; this rank's own pieces wait for nobody.
            for (std::uint32_t f = receive.first_forward; f < receive.first_forward + receive.forward_count; ++f) forward(f);
            if (!receive.data.copies.empty()) add_job(receive.data.copies, owner(kScatter, index));
          }
          break;
        }
        case kNodeSend:
        case kForwardSend:
        case kGrantSend:
        case kGather:
        case kScatter:
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
