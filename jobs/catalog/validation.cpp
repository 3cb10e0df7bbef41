#include "jobs/catalog/validation.hpp"

#include <algorithm>

#include "io/catalog/plan_rows.hpp"
#include "jobs/catalog/agreement.hpp"
#include "jobs/traffic_price.hpp"

namespace nestfast::jobs {

std::vector<io::ValidationRow> run_plan_validation(MPI_Comm comm, const comm::ValidationSettings& settings,
                                                   const std::vector<comm::ValidationRequest>& requests,
                                                   const std::vector<std::pair<std::string, ClusterSpec>>& clusters) {
  const comm::TrafficPrice price = [&](const comm::ValidationRequest& request, const comm::TrafficMatrix& demand,
                                       const comm::ServerMap& map) {
    const auto named = std::find_if(clusters.begin(), clusters.end(),
                                    [&](const auto& entry) { return entry.first == request.cluster; });
    return named == clusters.end() ? 0.0 : fast_price_s(named->second, demand, map);
  };
  std::vector<comm::ValidationResult> results;
  agree(comm, [&] {
    if (!requests.empty()) results = comm::run_validation(comm, settings, requests, price);
  });
  std::vector<io::ValidationRow> rows;
  rows.reserve(results.size());
  for (const comm::ValidationResult& result : results) rows.push_back(io::validation_row(result));
  return rows;
}

}  // namespace nestfast::jobs
