#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_catalog(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("catalog", "Precompute the best plans of a sweep into an HDF5 catalog (MPI)");
  mark_not_implemented(*command, context, "the MPI catalog job, issue 6");
}

}  // namespace nestfast::jobs
