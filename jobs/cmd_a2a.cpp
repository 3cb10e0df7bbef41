#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

// `a2a` groups the all-to-all tools; each has its own file.
void register_a2a(CLI::App& app, CliContext& context) {
  auto* a2a = app.add_subcommand("a2a", "FAST all-to-all: plan, simulate and benchmark");
  a2a->require_subcommand(1);
  register_a2a_plan(*a2a, context);
  register_a2a_bench(*a2a, context);
}

}  // namespace nestfast::jobs
