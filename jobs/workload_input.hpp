#pragma once
// The --workload of `a2a plan` and `a2a bench`: the spec parsed, and for
// file:PATH the matrix file read (a regular file, no larger than a ranks x
// ranks matrix can be), so comm/workload never touches a file.
#include <string>

#include "comm/workload/workload.hpp"

namespace nestfast::jobs {

comm::WorkloadSpec load_workload(const std::string& spec, int ranks);

}  // namespace nestfast::jobs
