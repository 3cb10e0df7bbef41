#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_a2a_plan(CLI::App& a2a, CliContext& context) {
  auto* command = a2a.add_subcommand("plan", "Compute (and verify, simulate) a FAST schedule for a workload");
  mark_not_implemented(*command, context, "FAST scheduling, issue 7");
}

}  // namespace nestfast::jobs
