#include "comm/exec/server_topology.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

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
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);

  std::vector<int> lowest_of(size);
  MPI_Allgather(&lowest, 1, MPI_INT, lowest_of.data(), 1, MPI_INT, comm);
  std::map<int, int> number_of_lowest;
  for (int value : lowest_of) number_of_lowest.emplace(value, 0);
  int next = 0;
  for (auto& entry : number_of_lowest) entry.second = next++;
  std::vector<int> server(size);
  for (int r = 0; r < size; ++r) server[r] = number_of_lowest.at(lowest_of[r]);
  return server;
}

std::vector<int> servers_from_groups(int size, int groups) {
  if (groups < 1 || groups > size) {
    throw std::invalid_argument("--virtual-servers " + std::to_string(groups) + " must be between 1 and the " +
                                std::to_string(size) + " ranks");
  }
  std::vector<int> server(size);
  const int base = size / groups, extra = size % groups;
  int r = 0;
  for (int s = 0; s < groups; ++s) {
    const int members = base + (s < extra ? 1 : 0);
    for (int i = 0; i < members; ++i) server[r++] = s;
  }
  return server;
}

}  // namespace

ServerTopology::ServerTopology(MPI_Comm comm, int virtual_servers) : comm_(comm) {
  int size = 0;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size);
  if (virtual_servers < 0) {
    throw std::invalid_argument("--virtual-servers must be >= 0, got " + std::to_string(virtual_servers));
  }
  server_of_ = virtual_servers == 0 ? servers_from_nodes(comm, size) : servers_from_groups(size, virtual_servers);

  const int server_count = *std::max_element(server_of_.begin(), server_of_.end()) + 1;
  server_members_.assign(server_count, {});
  local_index_of_.assign(size, 0);
  for (int r = 0; r < size; ++r) {
    local_index_of_[r] = static_cast<int>(server_members_[server_of_[r]].size());
    server_members_[server_of_[r]].push_back(r);
  }
  // Rails are ordered by server, whatever the ranks' numbering on the nodes.
  rail_rank_of_.assign(size, 0);
  std::vector<int> rail_members(static_cast<std::size_t>(max_gpus_per_server()), 0);
  for (const auto& members : server_members_) {
    for (std::size_t i = 0; i < members.size(); ++i) rail_rank_of_[members[i]] = rail_members[i]++;
  }
  MPI_Comm_split(comm, server_of_[rank_], local_index_of_[rank_], &node_comm_);
  MPI_Comm_split(comm, local_index_of_[rank_], server_of_[rank_], &rail_comm_);
}

ServerTopology::~ServerTopology() {
  if (rail_comm_ != MPI_COMM_NULL) MPI_Comm_free(&rail_comm_);
  if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
}

int ServerTopology::max_gpus_per_server() const {
  std::size_t most = 0;
  for (const auto& members : server_members_) most = std::max(most, members.size());
  return static_cast<int>(most);
}

bool ServerTopology::uniform() const {
  for (const auto& members : server_members_) {
    if (members.size() != server_members_.front().size()) return false;
  }
  return true;
}

}  // namespace nestfast::comm
