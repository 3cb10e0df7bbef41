#pragma once
// mpi: the library's own MPI_Alltoallv (its large-count form MPI_Alltoallv_c).
#include <mpi.h>

#include "comm/exec/alltoallv.hpp"

namespace nestfast::comm {

class MpiAlltoallv final : public Alltoallv {
 public:
  std::string name() const override { return "mpi"; }
  void prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix& counts) override;
  void execute(const std::byte* send, std::byte* recv) override;
  int stages() const override { return 1; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<MPI_Count> send_counts_, recv_counts_;
  std::vector<MPI_Aint> send_displs_, recv_displs_;
};

}  // namespace nestfast::comm
