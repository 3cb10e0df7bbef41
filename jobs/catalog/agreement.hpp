#pragma once
// Errors that every rank of a job agrees on. A step that may fail on some
// ranks (usually on rank 0 only, which reads the files) runs inside
// agree(); if it threw anywhere, every rank throws the same JobError, so all
// ranks leave together with one message instead of hanging in a collective.
#include <mpi.h>

#include <stdexcept>
#include <string>

#include "comm/exec/agreed_error.hpp"
#include "jobs/cli_context.hpp"

namespace nestfast::jobs {

// Thrown on every rank alike (comm/exec/agreed_error.hpp).
using JobError = comm::AgreedError;

// Collective. Each rank passes its local outcome (exit_code 0 = fine). If any
// rank failed, every rank throws the JobError of the lowest failing rank.
void agree_on_failure(MPI_Comm comm, int exit_code, const std::string& message);

// Collective: runs `step` on every rank (it may do nothing on some) and agrees
// on its outcome. std::invalid_argument counts as bad input (exit 2), any
// other exception as a runtime failure (exit 1).
template <typename Step>
void agree(MPI_Comm comm, Step&& step) {
  int code = 0;
  std::string message;
  try {
    step();
  } catch (const JobError& error) {
    code = error.exit_code();
    message = error.what();
  } catch (const std::invalid_argument& error) {
    code = kExitBadInput;
    message = error.what();
  } catch (const std::exception& error) {
    code = kExitRuntimeError;
    message = error.what();
  }
  agree_on_failure(comm, code, message);
}

}  // namespace nestfast::jobs
