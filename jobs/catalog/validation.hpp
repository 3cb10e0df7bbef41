#pragma once
// The validation phase of `nestfast run` as the catalog job drives it: the
// chosen plans' all-to-alls run on the job's ranks (comm::run_validation);
// the results become /validation/alltoallv rows.
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "comm/exec/validation.hpp"
#include "io/catalog/catalog_rows.hpp"
#include "solver/cluster/cluster_spec.hpp"

namespace nestfast::jobs {

// Collective; identical settings and requests on every rank. Each row's
// prediction is the solver's price of the traffic that ran (fast_price_s) on
// the request's cluster, found by its job name in `clusters`. The rows are
// complete on rank 0.
std::vector<io::ValidationRow> run_plan_validation(MPI_Comm comm, const comm::ValidationSettings& settings,
                                                   const std::vector<comm::ValidationRequest>& requests,
                                                   const std::vector<std::pair<std::string, ClusterSpec>>& clusters);

}  // namespace nestfast::jobs
