// nestfast: plan training placements (NEST) and check their all-to-alls (FAST)
// in one MPI program. Every subcommand lives in its own cmd_*.cpp file.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

#include "comm/exec/agreed_error.hpp"
#include "comm/exec/communicator.hpp"
#include "comm/exec/finalize_handshake.hpp"
#include "io/catalog/catalog_writer.hpp"
#include "jobs/cli_checks.hpp"
#include "jobs/cli_context.hpp"
#include "jobs/error_line.hpp"
#include "nestfast_version.hpp"

namespace {

int world_rank() { return nestfast::comm::rank_of(MPI_COMM_WORLD); }
int world_size() { return nestfast::comm::size_of(MPI_COMM_WORLD); }

// Every way out after MPI_Init. When a parallel HDF5 file could not be
// closed (a full disk; every rank knows it), HDF5 would hang or crash
// terminating at MPI_Finalize: the ranks leave without it, together (the
// barrier), so mpiexec does not kill rank 0 before its message is out; it
// passes the exit code on either way.
int leave(int code) {
  if (nestfast::io::hdf5_file_left_unclosed()) {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Barrier(MPI_COMM_WORLD);
    std::_Exit(code);
  }
  MPI_Finalize();
  return code;
}

// An error that escaped a subcommand: one line, naming the rank when there
// are several; a multi-rank job is aborted so no rank hangs in a collective.
int report_and_exit(const char* message, int code) {
  if (world_size() > 1) {
    nestfast::jobs::print_error_line(message, world_rank());
    MPI_Abort(MPI_COMM_WORLD, code);
  } else {
    nestfast::jobs::print_error_line(message);
  }
  return leave(code);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);

  nestfast::jobs::CliContext context;
  CLI::App app{"nestfast: network- and memory-aware training plans (NEST), checked with FAST all-to-alls", "nestfast"};
  app.set_version_flag("--version", std::string("nestfast ") + nestfast::kVersion + " (git " + nestfast::kGitSha + ")");
  app.require_subcommand(1);
  app.fallthrough();

  using namespace nestfast::jobs;
  register_run(app, context);
  register_solve(app, context);
  register_evaluate(app, context);
  register_nest_compat(app, context);
  register_catalog(app, context);
  register_query(app, context);
  register_a2a(app, context);
  register_merge(app, context);
  register_presets(app, context);
  refuse_empty_values(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // Help and version print on rank 0 only; usage errors on every rank would be noise too.
    // A usage error is one line naming the flag, like every other bad input
    // (CLI11's own exit() adds a second "Run with --help" line).
    const bool usage_error = error.get_exit_code() != 0;
    if (world_rank() == 0) {
      if (usage_error) {
        nestfast::jobs::print_error_line(error.what());
      } else {
        app.exit(error);
      }
    }
    return leave(usage_error ? kExitBadInput : 0);
  } catch (const nestfast::comm::AgreedError& error) {
    // Every rank throws it alike: one line from rank 0, and all leave together.
    if (world_rank() == 0) nestfast::jobs::print_error_line(error.what());
    return leave(error.exit_code());
  } catch (const std::invalid_argument& error) {
    return report_and_exit(error.what(), kExitBadInput);
  } catch (const std::exception& error) {
    return report_and_exit(error.what(), kExitRuntimeError);
  }
  // Every rank gets here together (a failing rank aborts the job above).
  nestfast::comm::finalize_handshake(MPI_COMM_WORLD);
  return leave(context.exit_code);
}
