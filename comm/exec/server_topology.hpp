#pragma once
// Which server every rank of a communicator belongs to, and the two
// communicators FAST moves data on (comm.md section 2): node_comm (the ranks
// of my server) and rail_comm (the ranks with my local index on every server).
// Servers come from the shared-memory node split, or from `virtual_servers`
// groups of consecutive ranks so that one machine can play several servers.
#include <mpi.h>

#include <vector>

namespace nestfast::comm {

class ServerTopology {
 public:
  // Collective over `comm`. virtual_servers = 0: one server per shared-memory node.
  // Otherwise 1 <= virtual_servers <= ranks (std::invalid_argument if not); when the
  // ranks do not divide evenly, the first servers get one rank more.
  ServerTopology(MPI_Comm comm, int virtual_servers);
  ~ServerTopology();
  ServerTopology(const ServerTopology&) = delete;
  ServerTopology& operator=(const ServerTopology&) = delete;

  MPI_Comm comm() const { return comm_; }
  MPI_Comm node_comm() const { return node_comm_; }
  MPI_Comm rail_comm() const { return rail_comm_; }
  int rank() const { return rank_; }
  int ranks() const { return static_cast<int>(server_of_.size()); }
  int servers() const { return static_cast<int>(server_members_.size()); }

  // Per rank of comm(): its server and its index inside that server.
  const std::vector<int>& server_of() const { return server_of_; }
  const std::vector<int>& local_index_of() const { return local_index_of_; }
  // Rank of `rank` inside node_comm() (its local index) and inside its rail communicator.
  int node_rank_of(int rank) const { return local_index_of_[rank]; }
  int rail_rank_of(int rank) const { return rail_rank_of_[rank]; }
  // Per server: its ranks in local-index order.
  const std::vector<std::vector<int>>& server_members() const { return server_members_; }
  int max_gpus_per_server() const;
  bool uniform() const;  // every server has the same number of ranks

 private:
  MPI_Comm comm_;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  MPI_Comm rail_comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  std::vector<int> server_of_;
  std::vector<int> local_index_of_;
  std::vector<int> rail_rank_of_;
  std::vector<std::vector<int>> server_members_;
};

}  // namespace nestfast::comm
