#include "comm/exec/algo_auto.hpp"

#include "comm/exec/algo_fast.hpp"
#include "comm/exec/algo_mpi.hpp"
#include "comm/exec/counts_exchange.hpp"
#include "comm/exec/exchange_buffers.hpp"
#include "comm/exec/harness.hpp"
#include "comm/workload/workload.hpp"

namespace nestfast::comm {

void AutoAlltoallv::prepare(const ServerTopology& topology, const AlltoallvLayout& layout, const TrafficMatrix& counts) {
  const std::uint64_t mean_bytes = counts.ranks() == 0 ? 0 : counts.total() / counts.ranks();
  picked_ = make_alltoallv(mean_bytes < settings_.auto_threshold_bytes ? "mpi" : "fast", settings_);
  picked_->prepare(topology, layout, counts);
}

std::string AutoAlltoallv::decision() const { return picked_ ? picked_->name() : ""; }

AutoThreshold measure_auto_threshold(const ServerTopology& topology) {
  AutoThreshold result;
  const HarnessOptions options{.iterations = 3, .warmup = 1, .validate = false, .seed = 1};
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = 4U << 10; size <= (4U << 20); size *= 4) sizes.push_back(size);
  result.largest_measured = sizes.back();
  result.bytes = 2 * sizes.back();
  // From the largest size down: the threshold is where fast stops winning.
  for (auto it = sizes.rbegin(); it != sizes.rend(); ++it) {
    const TrafficMatrix demand = make_workload("uniform", topology.ranks(), *it, 1);
    const AlltoallvLayout layout = layout_of_rank(demand, topology.rank());
    const TrafficMatrix counts = gather_counts(topology.comm(), layout);
    ExchangeBuffers buffers(layout, topology.rank(), 1);
    MpiAlltoallv mpi;
    FastAlltoallv fast;
    const double mpi_s = measure_alltoallv(mpi, topology, layout, counts, buffers, options).avg_s;
    const double fast_s = measure_alltoallv(fast, topology, layout, counts, buffers, options).avg_s;
    if (fast_s > mpi_s) break;
    result.bytes = *it;
    result.fast_won = true;
  }
  return result;
}

}  // namespace nestfast::comm
