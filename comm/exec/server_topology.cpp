#include "comm/exec/server_topology.hpp"

#include <map>
#include <stdexcept>
#include <string>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

namespace {

// Server of every rank from the shared-memory split: servers are numbered by
// their lowest rank, so every rank computes the same numbering.
std::vector<int> servers_from_nodes(MPI_Comm comm, int size) {
  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int lowest = rank;
  allreduce_yielding(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);

  std::vector<int> lowest_of(size);
  allgather_yielding(&lowest, 1, MPI_INT, lowest_of.data(), comm);
  std::map<int, int> number_of_lowest;
  for (int value : lowest_of) number_of_lowest.emplace(value, 0);
  int next = 0;
  for (auto& entry : number_of_lowest) entry.second = next++;
  std::vector<int> server(size);
  for (int r = 0; r < size; ++r) server[r] = number_of_lowest.at(lowest_of[r]);
  return server;
}

}  // namespace

std::vector<int> consecutive_servers(int ranks, int servers) {
  if (servers < 1 || servers > ranks) {
    throw std::invalid_argument("virtual servers " + std::to_string(servers) + " must be between 1 and the " +
                                std::to_string(ranks) + " ranks");
  }
  std::vector<int> server(ranks);
  const int base = ranks / servers, extra = ranks % servers;
  int r = 0;
  for (int s = 0; s < servers; ++s) {
    const int members = base + (s < extra ? 1 : 0);
    for (int i = 0; i < members; ++i) server[r++] = s;
  }
  return server;
}

ServerTopology::ServerTopology(MPI_Comm comm, int virtual_servers, int nics_per_server) : comm_(comm) {
  int size = 0;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size);
  if (virtual_servers < 0) {
    throw std::invalid_argument("virtual servers must be >= 0, got " + std::to_string(virtual_servers));
  }
  map_ = ServerMap(virtual_servers == 0 ? servers_from_nodes(comm, size) : consecutive_servers(size, virtual_servers),
                   nics_per_server);

  rail_rank_of_.assign(size, 0);
  std::vector<int> rail_members(static_cast<std::size_t>(map_.max_gpus_per_server()), 0);
  for (int s = 0; s < map_.servers(); ++s) {
    for (int i = 0; i < map_.gpus_on(s); ++i) rail_rank_of_[map_.rank_at(s, i)] = rail_members[i]++;
  }
  MPI_Comm_split(comm, map_.server_of(rank_), map_.local_index(rank_), &node_comm_);
  MPI_Comm_split(comm, map_.local_index(rank_), map_.server_of(rank_), &rail_comm_);
}

ServerTopology::~ServerTopology() {
  if (rail_comm_ != MPI_COMM_NULL) MPI_Comm_free(&rail_comm_);
  if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
}

}  // namespace nestfast::comm
