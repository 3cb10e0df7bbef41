#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_nest_compat(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("nest-compat", "Read a NEST artifact DP input and answer in its output format");
  mark_not_implemented(*command, context, "NEST reference compatibility, issue 5");
}

}  // namespace nestfast::jobs
