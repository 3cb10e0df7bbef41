#pragma once
// The servers of a communicator's ranks and the two communicators FAST moves
// data on (comm.md section 2): node_comm (the ranks of my server, ranked by
// local index) and rail_comm (the ranks with my local index, ranked by
// server). Servers come from the shared-memory node split, or from
// `virtual_servers` groups of consecutive ranks so that one machine can play
// several servers.
#include <mpi.h>

#include <vector>

#include "comm/plan/server_map.hpp"

namespace nestfast::comm {

class ServerTopology {
 public:
  // Collective over `comm`. virtual_servers = 0: one server per shared-memory node.
  // Otherwise 1 <= virtual_servers <= ranks (std::invalid_argument if not); when the
  // ranks do not divide evenly, the first servers get one rank more.
  // nics_per_server: see ServerMap (0 = one NIC per GPU).
  ServerTopology(MPI_Comm comm, int virtual_servers, int nics_per_server = 0);
  ~ServerTopology();
  ServerTopology(const ServerTopology&) = delete;
  ServerTopology& operator=(const ServerTopology&) = delete;

  MPI_Comm comm() const { return comm_; }
  MPI_Comm node_comm() const { return node_comm_; }
  MPI_Comm rail_comm() const { return rail_comm_; }
  int rank() const { return rank_; }
  int ranks() const { return map_.ranks(); }
  const ServerMap& map() const { return map_; }

  // Rank of `rank` inside its node_comm (its local index) and inside its rail_comm.
  int node_rank_of(int rank) const { return map_.local_index(rank); }
  int rail_rank_of(int rank) const { return rail_rank_of_[rank]; }

 private:
  MPI_Comm comm_;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  MPI_Comm rail_comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  ServerMap map_;
  std::vector<int> rail_rank_of_;
};

// Server of every rank when `ranks` consecutive ranks form `servers` groups,
// the first ranks % servers of them one rank larger. std::invalid_argument
// unless 1 <= servers <= ranks.
std::vector<int> consecutive_servers(int ranks, int servers);

}  // namespace nestfast::comm
