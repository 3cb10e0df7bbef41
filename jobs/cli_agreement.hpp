#pragma once
// The options of a command that every rank of an MPI launch must share. An
// MPMD launch (mpiexec -n 2 nestfast a2a bench --sizes 1K:4K : -n 2 nestfast
// a2a bench --sizes 1K:16K) gives ranks different command lines; options
// that shape the collective sequence (sizes, iterations, algorithms, ...)
// would then make ranks wait in different collectives forever. So the ranks
// compare their options with rank 0's before any other collective, and all
// refuse with one line naming the first option that differs.
#include <CLI/CLI.hpp>
#include <mpi.h>

namespace nestfast::jobs {

// Collective over `comm`: throws the same JobError (exit 2) on every rank
// when some rank's options of `command` differ from rank 0's.
void agree_on_options(MPI_Comm comm, const CLI::App& command);

}  // namespace nestfast::jobs
