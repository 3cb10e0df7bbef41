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

namespace nestfast::comm {

class ExchangeBuffers {
 public:
  ExchangeBuffers(const AlltoallvLayout& layout, int rank, std::uint64_t seed);

  const std::byte* send() const { return send_.get(); }
  std::byte* recv() { return recv_.get(); }
  std::uint64_t recv_bytes() const { return recv_bytes_; }

  void poison_recv();

 private:
  AlltoallvLayout layout_;
  int rank_;
  std::uint64_t seed_;
  std::uint64_t recv_bytes_;
  std::unique_ptr<std::byte[]> send_;
  std::unique_ptr<std::byte[]> recv_;
};

struct DeliveryCheck {
  std::uint64_t wrong = 0;         // wrong bytes over all ranks
  std::vector<BadByte> first_bad;  // the first few, lowest receiving rank first
};

// Collective over `comm`: every rank checks its received blocks; all ranks get the totals.
DeliveryCheck check_delivery(MPI_Comm comm, const AlltoallvLayout& layout, const std::byte* recv, std::uint64_t seed,
                             std::size_t keep = 4);

}  // namespace nestfast::comm
