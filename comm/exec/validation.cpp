#include "comm/exec/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "comm/exec/algo_auto.hpp"
#include "comm/exec/size_range.hpp"
#include "comm/exec/stage_cost.hpp"
#include "comm/exec/sweep_point.hpp"
#include "comm/workload/workload.hpp"

namespace nestfast::comm {

namespace {

bool runs(const ValidationRequest& request, const ValidationSettings& settings) {
  return (request.ep > 1 && request.experts > 0) || settings.all_plans;
}

// The plan's all-to-all on `ranks` ranks (see run_validation in the header).
TrafficMatrix request_traffic(const ValidationRequest& request, const ValidationSettings& settings, int ranks,
                              std::uint64_t bytes_per_rank) {
  if (request.ep <= 1 || request.experts <= 0) return make_workload("uniform", ranks, bytes_per_rank, settings.seed);
  const int group = std::min(request.ep, ranks);
  WorkloadSpec spec;
  spec.kind = WorkloadSpec::Kind::moe;
  spec.experts = request.experts;
  spec.top_k = request.top_k;
  spec.skew = skew_exponent(settings.skew, "validate.skew");
  TrafficMatrix demand(ranks);
  for (int first = 0; first + group <= ranks; first += group) {
    const TrafficMatrix part =
        make_workload(spec, group, bytes_per_rank, settings.seed + static_cast<std::uint64_t>(first / group));
    for (int src = 0; src < group; ++src) {
      for (int dst = 0; dst < group; ++dst) demand(first + src, first + dst) = part(src, dst);
    }
  }
  return demand;
}

// The rates the bound rests on: the configured NIC rate of the machine, or
// the plan's cluster preset.
LinkRates link_rates(const ValidationRequest& request, const ValidationSettings& settings, const ServerTopology& topology) {
  LinkRates rates = rates_from_gpu(request.gpu_nic_Bps, request.gpu_scaleup_Bps, topology.map());
  if (settings.nic_GBps > 0) rates.nic_Bps = settings.nic_GBps * 1e9;
  return rates;
}

void check_settings(const ValidationSettings& settings) {
  if (settings.nic_GBps < 0 || !std::isfinite(settings.nic_GBps)) throw std::invalid_argument("validate.nic_GBps must be >= 0");
  if (settings.nics_per_server < 0) throw std::invalid_argument("validate.nics_per_server must be >= 0");
  if (settings.iterations < 1) throw std::invalid_argument("validate.iterations must be >= 1");
  if (settings.warmup < 0) throw std::invalid_argument("validate.warmup must be >= 0");
  if (settings.algos.empty()) throw std::invalid_argument("validate.algos is empty");
  for (const std::string& name : settings.algos) make_alltoallv(name);  // throws for an unknown name
  skew_exponent(settings.skew, "validate.skew");
}

ValidationResult result_row(const ValidationRequest& request, const ServerTopology& topology,
                            const PointResult& point, const Measurement& run, double predicted_s) {
  ValidationResult row = alltoallv_result(topology, point, run);
  row.plan_row = request.plan_row;
  row.predicted_us = predicted_s * 1e6;
  return row;
}

}  // namespace

double skew_exponent(const std::string& skew, const std::string& what) {
  if (skew == "uniform") return 0;
  const std::string prefix = "zipf:";
  if (skew.rfind(prefix, 0) == 0) {
    const std::string exponent = skew.substr(prefix.size());
    char* end = nullptr;
    const double value = std::strtod(exponent.c_str(), &end);
    if (!exponent.empty() && end == exponent.c_str() + exponent.size() && std::isfinite(value) && value >= 0) return value;
  }
  throw std::invalid_argument(what + ": \"" + skew + "\" is not \"uniform\" or \"zipf:S\" with a finite S >= 0");
}

std::vector<ValidationResult> run_validation(MPI_Comm comm, const ValidationSettings& settings,
                                             const std::vector<ValidationRequest>& requests,
                                             const TrafficPrice& price) {
  std::vector<ValidationResult> rows;
  if (!settings.enabled) return rows;
  check_settings(settings);
  const std::vector<std::uint64_t> sizes = parse_size_range(settings.sizes, "validate.sizes");
  if (std::none_of(requests.begin(), requests.end(), [&](const auto& r) { return runs(r, settings); })) return rows;

  const ServerTopology topology(comm, settings.virtual_servers, settings.nics_per_server);
  AlgorithmSettings algorithm_settings;
  algorithm_settings.fast_chunk_bytes = settings.fast_chunk_bytes;
  if (std::find(settings.algos.begin(), settings.algos.end(), "auto") != settings.algos.end()) {
    algorithm_settings.auto_threshold_bytes = measure_auto_threshold(topology).bytes;
  }
  const HarnessOptions options{.iterations = settings.iterations, .warmup = settings.warmup, .validate = true,
                               .seed = settings.seed};
  double stage_cost_s = -1;  // measured once, when a plan with a declared NIC rate runs fast
  for (const ValidationRequest& request : requests) {
    if (!runs(request, settings)) continue;
    const LinkRates rates = link_rates(request, settings, topology);
    algorithm_settings.fast_stage_cost_bytes = 0;
    if (rates.nic_Bps > 0 && std::any_of(settings.algos.begin(), settings.algos.end(),
                                         [](const std::string& a) { return a == "fast" || a == "auto"; })) {
      if (stage_cost_s < 0) stage_cost_s = measure_fast_stage_cost(topology);
      algorithm_settings.fast_stage_cost_bytes = static_cast<std::uint64_t>(std::llround(stage_cost_s * rates.nic_Bps));
    }
    for (const std::uint64_t size : sizes) {
      const TrafficMatrix demand = request_traffic(request, settings, topology.ranks(), size);
      const PointResult point =
          measure_point(topology, demand, size, settings.algos, algorithm_settings, options, rates);
      const double predicted_s = price ? price(request, demand, topology.map()) : 0.0;
      for (const Measurement& run : point.runs) rows.push_back(result_row(request, topology, point, run, predicted_s));
    }
  }
  return rows;
}

}  // namespace nestfast::comm
