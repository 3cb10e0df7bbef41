#include <mpi.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "io/catalog_merge/catalog_merge.hpp"
#include "jobs/cli_context.hpp"

namespace nestfast::jobs {
namespace {

struct MergeRequest {
  std::vector<std::string> parts;
  std::string out;
  bool force = false;
};

}  // namespace

// The merge is serial: rank 0 does it, other ranks (under srun/mpiexec) only
// wait. An error on rank 0 escapes to main(), which aborts the job.
void register_merge(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("merge", "Merge the part catalogs of a sliced (Slurm array) sweep into one catalog");
  auto request = std::make_shared<MergeRequest>();
  command->add_option("parts", request->parts, "Part catalogs (PART.h5...), written by `catalog --slice I/N`")
      ->required();
  command->add_option("--out", request->out, "The merged catalog")->required();
  command->add_flag("--force", request->force, "Replace an existing --out file");
  command->callback([&context, request] {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      const io::MergeSummary summary = io::merge_catalogs(request->parts, request->out, request->force);
      std::printf("merged %llu parts: %llu sweep points, %llu plans, %llu stages, %llu validation rows\n",
                  static_cast<unsigned long long>(summary.parts), static_cast<unsigned long long>(summary.points),
                  static_cast<unsigned long long>(summary.plans), static_cast<unsigned long long>(summary.stages),
                  static_cast<unsigned long long>(summary.validation_rows));
      std::printf("catalog: %s\n", request->out.c_str());
      std::fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    context.exit_code = 0;
  });
}

}  // namespace nestfast::jobs
