#pragma once
// One rank's send and receive buffers for a layout, and the byte-exact check
// of what arrived. The send buffer holds the validation words; before a
// checked exchange the receive buffer holds their complement, so a byte that
// is never written counts as wrong just like a byte written wrongly.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/exec/layout.hpp"
#include "comm/exec/validation_words.hpp"
#include "gpu/buffers.hpp"

namespace nestfast::comm {

// On device (`on_device`), send() and recv() are GPU buffers holding the same
// bytes; the host copies stay for filling and checking.
class ExchangeBuffers {
 public:
  ExchangeBuffers(const AlltoallvLayout& layout, int rank, std::uint64_t seed, bool on_device = false);

  const std::byte* send() const;
  std::byte* recv();
  std::uint64_t recv_bytes() const { return recv_bytes_; }
  bool on_device() const { return on_device_; }

  void poison_recv();
  // The received bytes in host memory (copied back from the GPU on device).
  std::byte* recv_on_host();

 private:
  AlltoallvLayout layout_;
  int rank_;
  std::uint64_t seed_;
  std::uint64_t send_bytes_;
  std::uint64_t recv_bytes_;
  bool on_device_;
  std::unique_ptr<std::byte[]> send_;
  std::unique_ptr<std::byte[]> recv_;
  gpu::DeviceBuffer send_device_;
  gpu::DeviceBuffer recv_device_;
};

struct DeliveryCheck {
  std::uint64_t wrong = 0;         // wrong bytes over all ranks
  std::vector<BadByte> first_bad;  // the first few, lowest receiving rank first
};

// Collective over `comm`: every rank checks its received blocks; all ranks get the totals.
DeliveryCheck check_delivery(MPI_Comm comm, const AlltoallvLayout& layout, const std::byte* recv, std::uint64_t seed,
                             std::size_t keep = 4);

}  // namespace nestfast::comm
