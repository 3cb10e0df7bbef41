#pragma once
// pairwise: N-1 shifted exchanges; in round k rank r sends to r+k and
// receives from r-k (mod N), one Waitall per round. Its own block is copied.
#include "comm/exec/alltoallv.hpp"

namespace nestfast::comm {

class PairwiseAlltoallv final : public Alltoallv {
 public:
  std::string name() const override { return "pairwise"; }
  void prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix& counts) override;
  void execute(const std::byte* send, std::byte* recv) override;
  int stages() const override;

 private:
  const ServerTopology* topology_ = nullptr;
  AlltoallvLayout layout_;
};

}  // namespace nestfast::comm
