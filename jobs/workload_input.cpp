#include "jobs/workload_input.hpp"

#include <cstdlib>
#include <stdexcept>

#include "comm/workload/matrix_file.hpp"
#include "io/host/files.hpp"

namespace nestfast::jobs {

void add_workload_options(CLI::App& command, WorkloadOption& option) {
  command
      .add_option("--workload", option.text,
                  "uniform | random | zipf:S | hot:K | moe:E,topk,zipf | file:PATH (nccl-tests alltoallv matrix) | "
                  "file (the matrix $NCCL_TESTS_ALLTOALLV_MATRIX_FILE names)")
      ->capture_default_str();
  command.add_option("--matrix-scale", option.matrix_scale,
                     "file workloads: every cell times this (default $NCCL_TESTS_ALLTOALLV_MATRIX_SCALE, else 1)");
}

comm::WorkloadSpec load_workload(const WorkloadOption& option) {
  std::string text = option.text;
  if (text == "file") {
    const char* path = std::getenv(comm::kMatrixFileVariable);
    if (path == nullptr || *path == '\0') {
      throw std::invalid_argument(std::string("--workload file: ") + comm::kMatrixFileVariable +
                                  " is not set (or give file:PATH)");
    }
    text = std::string("file:") + path;
  }
  comm::WorkloadSpec spec = comm::parse_workload(text);
  if (spec.kind != comm::WorkloadSpec::Kind::file) {
    if (!option.matrix_scale.empty()) {
      throw std::invalid_argument("--matrix-scale: applies to file workloads only, not '" + option.text + "'");
    }
    return spec;
  }
  const char* from_environment = std::getenv(comm::kMatrixScaleVariable);
  if (!option.matrix_scale.empty()) {
    spec.scale = comm::parse_matrix_scale(option.matrix_scale, "--matrix-scale");
  } else if (from_environment != nullptr && *from_environment != '\0') {
    spec.scale = comm::parse_matrix_scale(from_environment, comm::kMatrixScaleVariable);
  }
  spec.matrix_text = io::read_input_file(spec.path, "workload file", comm::kMaxMatrixFileBytes);
  return spec;
}

}  // namespace nestfast::jobs
