#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

void register_a2a_bench(CLI::App& a2a, CliContext& context) {
  auto* command = a2a.add_subcommand("bench", "OSU-style alltoallv benchmark: fast, mpi, pairwise, fanout, auto");
  mark_not_implemented(*command, context, "FAST on MPI, issue 8");
}

}  // namespace nestfast::jobs
