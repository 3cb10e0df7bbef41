#include "comm/exec/sweep_point.hpp"

#include <limits>

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

ValidationResult alltoallv_result(const ServerTopology& topology, const PointResult& point, const Measurement& run) {
  ValidationResult row;
  row.algo = run.algo;
  row.picked = run.algo == "auto" ? run.decision : run.algo;
  row.bytes_per_rank = point.bytes_per_rank;
  row.servers = topology.map().servers();
  row.gpus_per_server = topology.map().max_gpus_per_server();
  row.iterations = run.iterations;
  row.stages = run.stages;
  row.time_min_us = run.min_s * 1e6;
  row.time_avg_us = run.avg_s * 1e6;
  row.time_max_us = run.max_s * 1e6;
  const double ranks = topology.ranks();
  row.algbw_GBps = run.avg_s > 0 ? static_cast<double>(point.bytes_per_rank) / run.avg_s / 1e9 : 0;
  row.busbw_GBps = row.algbw_GBps * (ranks - 1) / ranks;
  row.lower_bound_us = point.lower_bound_s * 1e6;
  const Efficiency eff = efficiency(point.lower_bound_s, run.min_s, run.avg_s);
  row.efficiency_pct = eff.known() ? 100.0 * eff.value : std::numeric_limits<double>::quiet_NaN();
  row.bound_violated = eff.bound_violated;
  row.wrong_bytes = run.wrong;
  row.validated = run.validated;
  row.first_bad = describe_bad_bytes(run.first_bad);
  return row;
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
