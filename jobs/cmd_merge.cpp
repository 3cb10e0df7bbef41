#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_merge(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("merge", "Merge the part catalogs of a sliced (Slurm array) sweep into one catalog");
  mark_not_implemented(*command, context, "Slurm array jobs, issue 10");
}

}  // namespace nestfast::jobs
