#include <memory>

#include "jobs/catalog_command.hpp"
#include "jobs/cli_agreement.hpp"
#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_run(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "run", "Main job: catalog sweep plus FAST validation of the chosen plans (embedded default job without a file)");
  auto request = std::make_shared<CatalogRequest>();
  auto slice = std::make_shared<std::string>();
  request->validate = true;
  command->add_option("job", request->job_path, "Job file (TOML); without one, the embedded default job runs");
  add_catalog_options(*command, *request, *slice);
  command->callback([&context, request, slice, command] {
    agree_on_options(MPI_COMM_WORLD, *command);  // an MPMD launch with other options per rank
    context.exit_code = run_catalog_command(*request, *slice, "run");
  });
}

}  // namespace nestfast::jobs
