#include <cstdio>

#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void mark_not_implemented(CLI::App& command, CliContext& context, const char* what_is_coming) {
  command.allow_extras();
  command.callback([&command, &context, what_is_coming] {
    std::fprintf(stderr, "nestfast %s: not implemented yet (%s)\n", command.get_name().c_str(), what_is_coming);
    context.exit_code = kExitBadInput;
  });
}

}  // namespace nestfast::jobs
