#include "comm/exec/algo_fanout.hpp"

#include <cstring>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

void FanoutAlltoallv::prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix&) {
  topology_ = &topology;
  layout_ = layout;
}

void FanoutAlltoallv::execute(const std::byte* send, std::byte* recv) {
  const int me = topology_->rank(), n = topology_->ranks();
  const MPI_Comm comm = topology_->comm();
  const int tag = phase_tag(comm, TagPhase::kPlain, 0);
  RequestBatch batch;
  // Receives first so that arriving data finds its buffer; sends staggered so that no rank is everyone's first target.
  for (int shift = 1; shift < n; ++shift) {
    const int from = (me - shift + n) % n;
    batch.receive(recv + layout_.recv_displs[from], layout_.recv_counts[from], from, tag, comm);
  }
  for (int shift = 1; shift < n; ++shift) {
    const int to = (me + shift) % n;
    batch.send(send + layout_.send_displs[to], layout_.send_counts[to], to, tag, comm);
  }
  if (layout_.send_counts[me] != 0) {
    std::memcpy(recv + layout_.recv_displs[me], send + layout_.send_displs[me], layout_.send_counts[me]);
  }
  batch.wait_all();
}

}  // namespace nestfast::comm
