#include "io/record_json/alltoallv_json.hpp"

#include <cmath>

namespace nestfast::io {

nlohmann::json to_json(const comm::ValidationResult& result, bool with_plan_row) {
  nlohmann::json row = nlohmann::json::object();
  if (with_plan_row) row["plan_row"] = result.plan_row;
  row["algo"] = result.algo;
  row["picked"] = result.picked;
  row["bytes_per_rank"] = result.bytes_per_rank;
  row["servers"] = result.servers;
  row["gpus_per_server"] = result.gpus_per_server;
  row["iterations"] = result.iterations;
  row["stages"] = result.stages;
  row["time_min_us"] = result.time_min_us;
  row["time_avg_us"] = result.time_avg_us;
  row["time_max_us"] = result.time_max_us;
  row["algbw_GBps"] = result.algbw_GBps;
  row["busbw_GBps"] = result.busbw_GBps;
  // null: no bound (no link rate declared) / no efficiency (no bound, or an iteration beat it).
  row["lower_bound_us"] = result.lower_bound_us > 0 ? nlohmann::json(result.lower_bound_us) : nlohmann::json(nullptr);
  row["efficiency_pct"] =
      std::isfinite(result.efficiency_pct) ? nlohmann::json(result.efficiency_pct) : nlohmann::json(nullptr);
  row["bound_violated"] = result.bound_violated;
  if (with_plan_row || result.predicted_us > 0) row["predicted_us"] = result.predicted_us;
  row["validated"] = result.validated;
  row["wrong_bytes"] = result.wrong_bytes;
  row["first_bad"] = result.first_bad;
  return row;
}

}  // namespace nestfast::io
