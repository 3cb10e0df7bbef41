#include "jobs/catalog/validation.hpp"

#include "io/catalog/plan_rows.hpp"
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
  for (const comm::ValidationResult& result : results) rows.push_back(io::validation_row(result));
  return rows;
}

}  // namespace nestfast::jobs
