#include "comm/plan/server_map.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nestfast::comm {

ServerMap::ServerMap(std::vector<int> rank_server, int nics_per_server)
    : rank_server_(std::move(rank_server)), nics_per_server_(nics_per_server) {
  if (nics_per_server < 0) {
    throw std::invalid_argument("server map: NICs per server must be >= 0 (0 = one per GPU), got " +
                                std::to_string(nics_per_server));
  }
  int servers = 0;
  for (std::size_t r = 0; r < rank_server_.size(); ++r) {
    if (rank_server_[r] < 0) {
      throw std::invalid_argument("server map: rank " + std::to_string(r) + " has negative server " +
                                  std::to_string(rank_server_[r]));
    }
    servers = std::max(servers, rank_server_[r] + 1);
  }
  std::vector<int> count(static_cast<std::size_t>(servers), 0);
  for (int s : rank_server_) ++count[s];
  for (int s = 0; s < servers; ++s) {
    if (count[s] == 0) throw std::invalid_argument("server map: server " + std::to_string(s) + " has no rank");
  }
  server_begin_.assign(static_cast<std::size_t>(servers) + 1, 0);
  for (int s = 0; s < servers; ++s) server_begin_[s + 1] = server_begin_[s] + count[s];
  server_ranks_.resize(rank_server_.size());
  local_index_.resize(rank_server_.size());
  std::vector<int> filled(static_cast<std::size_t>(servers), 0);
  for (std::size_t r = 0; r < rank_server_.size(); ++r) {
    const int s = rank_server_[r];
    local_index_[r] = filled[s];
    server_ranks_[server_begin_[s] + filled[s]++] = static_cast<int>(r);
  }
  if (servers > 0) {
    min_gpus_ = *std::min_element(count.begin(), count.end());
    max_gpus_ = *std::max_element(count.begin(), count.end());
  }
}

ServerMap ServerMap::uniform(int servers, int gpus_per_server, int nics_per_server) {
  if (servers < 1 || gpus_per_server < 1) {
    throw std::invalid_argument("server map: need servers >= 1 and gpus per server >= 1 (got " +
                                std::to_string(servers) + " x " + std::to_string(gpus_per_server) + ")");
  }
  std::vector<int> rank_server(static_cast<std::size_t>(servers) * gpus_per_server);
  for (std::size_t r = 0; r < rank_server.size(); ++r) rank_server[r] = static_cast<int>(r) / gpus_per_server;
  return ServerMap(std::move(rank_server), nics_per_server);
}

}  // namespace nestfast::comm
