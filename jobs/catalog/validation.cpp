#include "jobs/catalog/validation.hpp"

#include "jobs/catalog/agreement.hpp"

namespace nestfast::jobs {

std::vector<io::ValidationRow> run_plan_validation(MPI_Comm comm, const comm::ValidationSettings& settings,
                                                   const std::vector<comm::ValidationRequest>& requests) {
  std::vector<comm::ValidationResult> results;
  agree(comm, [&] {
    if (!requests.empty()) results = comm::run_validation(comm, settings, requests);
  });
  std::vector<io::ValidationRow> rows;
  rows.reserve(results.size());
  for (const comm::ValidationResult& result : results) {
    io::ValidationRow row;
    row.plan_row = result.plan_row;
    io::set_fixed(row.algo, result.algo);
    row.bytes_per_rank = result.bytes_per_rank;
    row.servers = result.servers;
    row.gpus_per_server = result.gpus_per_server;
    row.time_us_min = result.time_us_min;
    row.time_us_avg = result.time_us_avg;
    row.time_us_max = result.time_us_max;
    row.algbw = result.algbw_GBps;
    row.busbw = result.busbw_GBps;
    row.lb_us = result.lb_us;
    row.eff = result.efficiency;
    row.wrong = result.wrong;
    row.predicted_us = result.predicted_us;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace nestfast::jobs
