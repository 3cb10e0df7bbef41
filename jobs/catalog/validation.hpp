#pragma once
// The validation phase of `nestfast run` as the catalog job drives it: the
// chosen plans' all-to-alls run on the job's ranks (comm::run_validation);
// the results become /validation/alltoallv rows.
#include <mpi.h>

#include <vector>

#include "comm/exec/validation.hpp"
#include "io/catalog/catalog_rows.hpp"

namespace nestfast::jobs {

// Collective; identical settings and requests on every rank. The rows are complete on rank 0.
std::vector<io::ValidationRow> run_plan_validation(MPI_Comm comm, const comm::ValidationSettings& settings,
                                                   const std::vector<comm::ValidationRequest>& requests);

}  // namespace nestfast::jobs
