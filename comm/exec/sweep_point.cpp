#include "comm/exec/sweep_point.hpp"

#include "comm/exec/counts_exchange.hpp"
#include "comm/exec/device_staging.hpp"
#include "comm/exec/exchange_buffers.hpp"

namespace nestfast::comm {

PointResult measure_point(const ServerTopology& topology, const TrafficMatrix& demand, std::uint64_t bytes_per_rank,
                          const std::vector<std::string>& algos, const AlgorithmSettings& settings,
                          const HarnessOptions& options, const LinkRates& rates) {
  PointResult point;
  point.bytes_per_rank = bytes_per_rank;
  point.lower_bound_s = lower_bound_seconds(demand, topology.map(), rates);
  const AlltoallvLayout layout = layout_of_rank(demand, topology.rank());
  const TrafficMatrix counts = gather_counts(topology.comm(), layout);
  ExchangeBuffers buffers(layout, topology.rank(), options.seed, options.device);
  for (const std::string& name : algos) {
    std::unique_ptr<Alltoallv> algorithm = make_alltoallv(name, settings);
    if (options.device) algorithm = std::make_unique<DeviceStagedAlltoallv>(std::move(algorithm));
    point.runs.push_back(measure_alltoallv(*algorithm, topology, layout, counts, buffers, options));
  }
  return point;
}

std::string describe_bad_bytes(const std::vector<BadByte>& bad) {
  std::string text;
  for (const BadByte& byte : bad) {
    text += (text.empty() ? "" : ", ") + std::string("(src ") + std::to_string(byte.src) + ", dst " +
            std::to_string(byte.dst) + ", offset " + std::to_string(byte.offset) + ")";
  }
  return text;
}

}  // namespace nestfast::comm
