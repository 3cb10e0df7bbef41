#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_run(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("run", "Main job: catalog sweep plus FAST validation of the chosen plans (embedded default job without a file)");
  mark_not_implemented(*command, context, "the MPI catalog job, issue 6");
}

}  // namespace nestfast::jobs
