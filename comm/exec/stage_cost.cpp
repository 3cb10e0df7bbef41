#include "comm/exec/stage_cost.hpp"

#include "comm/exec/algo_fast.hpp"
#include "comm/exec/counts_exchange.hpp"
#include "comm/exec/exchange_buffers.hpp"
#include "comm/exec/harness.hpp"
#include "comm/workload/workload.hpp"

namespace nestfast::comm {

double measure_fast_stage_cost(const ServerTopology& topology) {
  if (topology.map().servers() < 2) return 0;
  constexpr std::uint64_t kBytesPerPair = 64;
  const TrafficMatrix demand =
      make_workload("uniform", topology.ranks(), kBytesPerPair * static_cast<std::uint64_t>(topology.ranks()), 1);
  const AlltoallvLayout layout = layout_of_rank(demand, topology.rank());
  const TrafficMatrix counts = gather_counts(topology.comm(), layout);
  ExchangeBuffers buffers(layout, topology.rank(), 1);
  FastAlltoallv fast;
  const Measurement run = measure_alltoallv(fast, topology, layout, counts, buffers,
                                            HarnessOptions{.iterations = 5, .warmup = 2, .validate = false, .seed = 1});
  return run.min_s / (run.stages + 1);
}

}  // namespace nestfast::comm
