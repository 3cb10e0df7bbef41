#include "comm/exec/device_staging.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "comm/exec/messages.hpp"
#include "gpu/device.hpp"

namespace nestfast::comm {

void DeviceStagedAlltoallv::prepare(const ServerTopology& topology, const AlltoallvLayout& layout,
                                    const TrafficMatrix& counts) {
  send_bytes_ = layout.send_bytes();
  recv_bytes_ = layout.recv_bytes();
  send_mirror_ = gpu::PinnedHostBuffer(std::max<std::uint64_t>(send_bytes_, 1));
  recv_mirror_ = gpu::PinnedHostBuffer(std::max<std::uint64_t>(recv_bytes_, 1));
  inner_->prepare(topology, layout, counts);
}

void DeviceStagedAlltoallv::execute(const std::byte* send, std::byte* recv) {
  if (send_bytes_ > 0) gpu::copy_device_to_host(send_mirror_.data(), send, send_bytes_);
  inner_->execute(static_cast<const std::byte*>(send_mirror_.data()), static_cast<std::byte*>(recv_mirror_.data()));
  if (recv_bytes_ > 0) gpu::copy_host_to_device(recv, recv_mirror_.data(), recv_bytes_);
}

void require_devices_everywhere(MPI_Comm comm, const char* what) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int without = gpu::device_count() > 0 ? -1 : rank;
  allreduce_yielding(MPI_IN_PLACE, &without, 1, MPI_INT, MPI_MAX, comm);
  if (without >= 0) {
    throw std::invalid_argument(std::string(what) + ": rank " + std::to_string(without) + " sees no GPU (back-end: " +
                                gpu::backend_name() + ")");
  }
}

}  // namespace nestfast::comm
