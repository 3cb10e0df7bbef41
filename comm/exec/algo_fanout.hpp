#pragma once
// fanout: every Irecv and Isend posted at once, one Waitall (what a naive
// alltoallv does; on a network it suffers incast under skew).
#include "comm/exec/alltoallv.hpp"

namespace nestfast::comm {

class FanoutAlltoallv final : public Alltoallv {
 public:
  std::string name() const override { return "fanout"; }
  void prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix& counts) override;
  void execute(const std::byte* send, std::byte* recv) override;
  int stages() const override { return 1; }

 private:
  const ServerTopology* topology_ = nullptr;
  AlltoallvLayout layout_;
};

}  // namespace nestfast::comm
