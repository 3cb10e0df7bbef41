#include "comm/exec/exchange_buffers.hpp"

#include <algorithm>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

ExchangeBuffers::ExchangeBuffers(const AlltoallvLayout& layout, int rank, std::uint64_t seed, bool on_device)
    : layout_(layout),
      rank_(rank),
      seed_(seed),
      send_bytes_(layout.send_bytes()),
      recv_bytes_(layout.recv_bytes()),
      on_device_(on_device),
      send_(new std::byte[std::max<std::uint64_t>(send_bytes_, 1)]),
      recv_(new std::byte[std::max<std::uint64_t>(recv_bytes_, 1)]) {
  for (int dst = 0; dst < layout_.ranks(); ++dst) {
    fill_block(send_.get() + layout_.send_displs[dst], layout_.send_counts[dst], seed_, rank_, dst);
  }
  if (on_device_) {
    send_device_ = gpu::DeviceBuffer(std::max<std::uint64_t>(send_bytes_, 1));
    recv_device_ = gpu::DeviceBuffer(std::max<std::uint64_t>(recv_bytes_, 1));
    send_device_.copy_from_host(send_.get(), send_bytes_);
  }
}

const std::byte* ExchangeBuffers::send() const {
  return on_device_ ? static_cast<const std::byte*>(send_device_.data()) : send_.get();
}

std::byte* ExchangeBuffers::recv() { return on_device_ ? static_cast<std::byte*>(recv_device_.data()) : recv_.get(); }

void ExchangeBuffers::poison_recv() {
  for (int src = 0; src < layout_.ranks(); ++src) {
    poison_block(recv_.get() + layout_.recv_displs[src], layout_.recv_counts[src], seed_, src, rank_);
  }
  if (on_device_) recv_device_.copy_from_host(recv_.get(), recv_bytes_);
}

std::byte* ExchangeBuffers::recv_on_host() {
  if (on_device_) recv_device_.copy_to_host(recv_.get(), recv_bytes_);
  return recv_.get();
}

DeliveryCheck check_delivery(MPI_Comm comm, const AlltoallvLayout& layout, const std::byte* recv, std::uint64_t seed,
                             std::size_t keep) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  BlockCheck mine;
  for (int src = 0; src < layout.ranks(); ++src) {
    check_block(recv + layout.recv_displs[src], layout.recv_counts[src], seed, src, rank, mine, keep);
  }

  DeliveryCheck all;
  all.wrong = mine.wrong;
  allreduce_yielding(MPI_IN_PLACE, &all.wrong, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (all.wrong == 0) return all;

  // Each rank contributes `keep` slots of (valid, src, offset); the receiver is the slot's rank.
  const std::size_t slot_words = 3;
  std::vector<std::uint64_t> my_slots(keep * slot_words, 0), slots(my_slots.size() * size);
  for (std::size_t i = 0; i < mine.first.size(); ++i) {
    my_slots[i * slot_words] = 1;
    my_slots[i * slot_words + 1] = static_cast<std::uint64_t>(mine.first[i].src);
    my_slots[i * slot_words + 2] = mine.first[i].offset;
  }
  allgather_yielding(my_slots.data(), static_cast<int>(my_slots.size()), MPI_UINT64_T, slots.data(), comm);
  for (int receiver = 0; receiver < size && all.first_bad.size() < keep; ++receiver) {
    for (std::size_t i = 0; i < keep && all.first_bad.size() < keep; ++i) {
      const std::uint64_t* slot = &slots[(static_cast<std::size_t>(receiver) * keep + i) * slot_words];
      if (slot[0] == 0) break;
      all.first_bad.push_back({static_cast<int>(slot[1]), receiver, slot[2]});
    }
  }
  return all;
}

}  // namespace nestfast::comm
