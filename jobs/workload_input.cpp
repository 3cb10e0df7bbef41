#include "jobs/workload_input.hpp"

#include "io/host/files.hpp"

namespace nestfast::jobs {

comm::WorkloadSpec load_workload(const std::string& spec, int ranks) {
  comm::WorkloadSpec workload = comm::parse_workload(spec);
  if (workload.kind == comm::WorkloadSpec::Kind::file) {
    workload.matrix_text = io::read_input_file(workload.path, "workload file", comm::matrix_file_bytes(ranks));
  }
  return workload;
}

}  // namespace nestfast::jobs
