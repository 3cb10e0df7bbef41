#pragma once
// What every subcommand's registration receives: the parent app and the slot
// for the exit code its action produces.
#include <CLI/CLI.hpp>

namespace nestfast::jobs {

struct CliContext {
  int exit_code = 0;
};

// Exit codes: 0 ok, 1 runtime failure, 2 bad input or usage.
inline constexpr int kExitRuntimeError = 1;
inline constexpr int kExitBadInput = 2;

// A subcommand whose issue has not landed yet: says so and exits 2.
void mark_not_implemented(CLI::App& command, CliContext& context, const char* what_is_coming);

void register_run(CLI::App& app, CliContext& context);
void register_solve(CLI::App& app, CliContext& context);
void register_evaluate(CLI::App& app, CliContext& context);
void register_nest_compat(CLI::App& app, CliContext& context);
void register_catalog(CLI::App& app, CliContext& context);
void register_query(CLI::App& app, CliContext& context);
void register_a2a(CLI::App& app, CliContext& context);
void register_a2a_plan(CLI::App& a2a, CliContext& context);
void register_a2a_bench(CLI::App& a2a, CliContext& context);
void register_merge(CLI::App& app, CliContext& context);
void register_presets(CLI::App& app, CliContext& context);

}  // namespace nestfast::jobs
