#pragma once
// --workload and --matrix-scale of `a2a plan` and `a2a bench`, read one way:
// the spec parsed, and for a matrix file the file read (a regular file of at
// most comm::kMaxMatrixFileBytes), so comm/workload never touches a file.
// "file" alone is the nccl-tests matrix file NCCL_TESTS_ALLTOALLV_MATRIX_FILE
// names, as alltoallv_perf reads it; its scale factor is --matrix-scale, else
// NCCL_TESTS_ALLTOALLV_MATRIX_SCALE, else 1 (comm/workload/matrix_file.hpp).
#include <CLI/CLI.hpp>

#include <string>

#include "comm/workload/workload.hpp"

namespace nestfast::jobs {

struct WorkloadOption {
  std::string text = "uniform";
  std::string matrix_scale;  // empty: the environment's, else 1
};

void add_workload_options(CLI::App& command, WorkloadOption& option);

// std::invalid_argument naming the flag, variable or file on bad input.
comm::WorkloadSpec load_workload(const WorkloadOption& option);

}  // namespace nestfast::jobs
