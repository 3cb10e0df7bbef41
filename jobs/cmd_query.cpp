#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_query(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("query", "Print a stored plan from a catalog");
  mark_not_implemented(*command, context, "the MPI catalog job, issue 6");
}

}  // namespace nestfast::jobs
