#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_evaluate(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("evaluate", "Price one given plan: time breakdown, throughput, MFU, memory per stage");
  mark_not_implemented(*command, context, "the analytic cost model, issue 3");
}

}  // namespace nestfast::jobs
