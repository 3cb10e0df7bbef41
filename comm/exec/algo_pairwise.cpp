#include "comm/exec/algo_pairwise.hpp"

#include <cstring>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

void PairwiseAlltoallv::prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix&) {
  topology_ = &topology;
  layout_ = layout;
}

int PairwiseAlltoallv::stages() const { return topology_ == nullptr ? 0 : topology_->ranks() - 1; }

void PairwiseAlltoallv::execute(const std::byte* send, std::byte* recv) {
  const int me = topology_->rank(), n = topology_->ranks();
  const MPI_Comm comm = topology_->comm();
  if (layout_.send_counts[me] != 0) {
    std::memcpy(recv + layout_.recv_displs[me], send + layout_.send_displs[me], layout_.send_counts[me]);
  }
  RequestBatch batch;
  for (int shift = 1; shift < n; ++shift) {
    const int to = (me + shift) % n, from = (me - shift + n) % n;
    const int tag = phase_tag(comm, TagPhase::kPlain, shift);
    batch.receive(recv + layout_.recv_displs[from], layout_.recv_counts[from], from, tag, comm);
    batch.send(send + layout_.send_displs[to], layout_.send_counts[to], to, tag, comm);
    batch.wait_all();
  }
}

}  // namespace nestfast::comm
