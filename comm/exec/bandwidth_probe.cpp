#include "comm/exec/bandwidth_probe.hpp"

#include <algorithm>
#include <vector>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

BandwidthProbe probe_rank_bandwidth(const ServerTopology& topology, std::uint64_t bytes, int repeats) {
  const int n = topology.ranks(), me = topology.rank();
  BandwidthProbe result;
  result.message_bytes = bytes;
  result.shift = topology.map().servers() > 1 ? topology.map().max_gpus_per_server() % n : n / 2;
  if (n == 1 || result.shift == 0) return result;
  std::vector<std::byte> out(bytes, std::byte{1}), in(bytes);
  const MPI_Comm comm = topology.comm();
  const int to = (me + result.shift) % n, from = (me - result.shift + n) % n;
  const int tag = phase_tag(comm, TagPhase::kPlain, 0);
  double best = 0;
  for (int i = 0; i <= repeats; ++i) {  // the first exchange warms up
    barrier_yielding(comm);
    const double start = MPI_Wtime();
    RequestBatch batch;
    batch.receive(in.data(), bytes, from, tag, comm);
    batch.send(out.data(), bytes, to, tag, comm);
    batch.wait_all();
    double elapsed = MPI_Wtime() - start;
    allreduce_yielding(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (i > 0 && (best == 0 || elapsed < best)) best = elapsed;
  }
  result.bytes_per_s = best > 0 ? static_cast<double>(bytes) / best : 0;
  return result;
}

}  // namespace nestfast::comm
