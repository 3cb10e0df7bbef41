#include "comm/exec/harness.hpp"

#include <algorithm>
#include <stdexcept>

#include "comm/exec/messages.hpp"

namespace nestfast::comm {

Measurement measure_alltoallv(Alltoallv& algo, const ServerTopology& topology, const AlltoallvLayout& layout,
                              const TrafficMatrix& counts, ExchangeBuffers& buffers, const HarnessOptions& options) {
  if (options.iterations < 1 || options.warmup < 0) {
    throw std::invalid_argument("--iters must be >= 1 and --warmup >= 0");
  }
  const MPI_Comm comm = topology.comm();
  algo.prepare(topology, layout, counts);

  Measurement result;
  result.algo = algo.name();
  result.decision = algo.decision();
  result.stages = algo.stages();
  result.iterations = options.iterations;

  if (options.validate) {
    buffers.poison_recv();
    barrier_yielding(comm);
    algo.execute(buffers.send(), buffers.recv());
    const DeliveryCheck check = check_delivery(comm, layout, buffers.recv_on_host(), options.seed);
    result.validated = true;
    result.wrong = check.wrong;
    result.first_bad = check.first_bad;
  }
  for (int i = 0; i < options.warmup; ++i) algo.execute(buffers.send(), buffers.recv());

  std::vector<double> seconds(static_cast<std::size_t>(options.iterations));
  for (double& elapsed : seconds) {
    barrier_yielding(comm);
    const double start = MPI_Wtime();
    algo.execute(buffers.send(), buffers.recv());
    elapsed = MPI_Wtime() - start;
  }
  result.stage_times = algo.stage_times();
  allreduce_yielding(MPI_IN_PLACE, seconds.data(), options.iterations, MPI_DOUBLE, MPI_MAX, comm);
  result.min_s = *std::min_element(seconds.begin(), seconds.end());
  result.max_s = *std::max_element(seconds.begin(), seconds.end());
  double sum = 0;
  for (double elapsed : seconds) sum += elapsed;
  result.avg_s = sum / options.iterations;
  return result;
}

}  // namespace nestfast::comm
