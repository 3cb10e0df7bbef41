#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_a2a(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("a2a", "FAST all-to-all: plan, simulate and benchmark");
  mark_not_implemented(*command, context, "FAST scheduling and execution, issues 7 and 8");
}

}  // namespace nestfast::jobs
