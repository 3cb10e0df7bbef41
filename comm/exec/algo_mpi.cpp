#include "comm/exec/algo_mpi.hpp"

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

void MpiAlltoallv::prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix&) {
  comm_ = topology.comm();
  send_counts_.assign(layout.send_counts.begin(), layout.send_counts.end());
  recv_counts_.assign(layout.recv_counts.begin(), layout.recv_counts.end());
  send_displs_.assign(layout.send_displs.begin(), layout.send_displs.end());
  recv_displs_.assign(layout.recv_displs.begin(), layout.recv_displs.end());
}

void MpiAlltoallv::execute(const std::byte* send, std::byte* recv) {
  check_mpi(MPI_Alltoallv_c(send, send_counts_.data(), send_displs_.data(), MPI_BYTE, recv, recv_counts_.data(),
                            recv_displs_.data(), MPI_BYTE, comm_),
            "MPI_Alltoallv_c");
}

}  // namespace nestfast::comm
