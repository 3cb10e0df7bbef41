#pragma once
// Which server each rank lives on. Servers are numbered 0..S-1, each holds at
// least one rank, and they may hold different numbers of GPUs. A rank's local
// index is its position among its server's ranks in increasing rank order.
// A server has one NIC per GPU unless nics_per_server says fewer: then GPUs
// 0..nics-1 drive them (rail lanes) and the others reach the network through
// them (a server with one shared NIC, as on the emulated testbed).
#include <cstdint>
#include <vector>

namespace nestfast::comm {

class ServerMap {
 public:
  ServerMap() = default;
  // rank_server[r] = server of rank r. Throws std::invalid_argument when a
  // server number is negative, a server in 0..max has no rank, or
  // nics_per_server < 0 (0 = one NIC per GPU).
  explicit ServerMap(std::vector<int> rank_server, int nics_per_server = 0);
  // S servers of m consecutive ranks each: rank r is on server r / m.
  static ServerMap uniform(int servers, int gpus_per_server, int nics_per_server = 0);

  int ranks() const noexcept { return static_cast<int>(rank_server_.size()); }
  int servers() const noexcept { return static_cast<int>(server_begin_.size()) - 1; }
  int server_of(int rank) const { return rank_server_[rank]; }
  int local_index(int rank) const { return local_index_[rank]; }
  int gpus_on(int server) const { return server_begin_[server + 1] - server_begin_[server]; }
  int rank_at(int server, int local) const { return server_ranks_[server_begin_[server] + local]; }
  int min_gpus_per_server() const noexcept { return min_gpus_; }
  int max_gpus_per_server() const noexcept { return max_gpus_; }
  bool is_uniform() const noexcept { return min_gpus_ == max_gpus_; }
  // NICs of a server: one per GPU, at most nics_per_server.
  int nics_on(int server) const {
    return nics_per_server_ > 0 && nics_per_server_ < gpus_on(server) ? nics_per_server_ : gpus_on(server);
  }
  int nics_per_server() const noexcept { return nics_per_server_; }
  // Rail lanes between two servers: GPU i of s talks to GPU i of t for
  // i < lanes(s, t) = min(nics_on(s), nics_on(t)).
  int lanes(int s, int t) const { return nics_on(s) < nics_on(t) ? nics_on(s) : nics_on(t); }
  const std::vector<int>& rank_server() const noexcept { return rank_server_; }

  friend bool operator==(const ServerMap& a, const ServerMap& b) {
    return a.rank_server_ == b.rank_server_ && a.nics_per_server_ == b.nics_per_server_;
  }

 private:
  std::vector<int> rank_server_;
  std::vector<int> local_index_;
  std::vector<int> server_begin_{0};  // CSR over server_ranks_
  std::vector<int> server_ranks_;     // ranks grouped by server, increasing
  int min_gpus_ = 0;
  int max_gpus_ = 0;
  int nics_per_server_ = 0;
};

}  // namespace nestfast::comm
