#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_solve(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("solve", "Search the best plan for one model, cluster and GPU count");
  mark_not_implemented(*command, context, "the level-wise DP search, issue 4");
}

}  // namespace nestfast::jobs
