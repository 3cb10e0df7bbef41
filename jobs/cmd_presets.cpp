#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_presets(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("presets", "List the model, GPU and cluster presets");
  mark_not_implemented(*command, context, "presets loader");
}

}  // namespace nestfast::jobs
