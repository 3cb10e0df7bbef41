#pragma once
// Dynamic work distribution: counters that every rank bumps atomically, so a
// rank claims the next chunk of items the moment it is free and no rank is a
// pure manager (rank 0 computes too).
//
// When all ranks share one node, the counters live in an MPI shared-memory
// window and are bumped with CPU atomics: no rank ever waits for another to
// enter MPI. Across nodes they live in an MPI window on rank 0, bumped with
// MPI_Fetch_and_op (passive target; network adapters do these in hardware).
// Construction and destruction are collective (destruction only when no
// unagreed error unwinds: comm/exec/agreed_error.hpp).
#include <mpi.h>

#include <cstdint>

namespace nestfast::jobs {

class WorkQueue {
 public:
  // kFailed: ranks that failed; the others stop claiming once it is not 0.
  enum Counter : int { kInstanceItems = 0, kBaselineItems = 1, kFinished = 2, kFailed = 3, kCounters = 4 };

  explicit WorkQueue(MPI_Comm comm);
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;
  ~WorkQueue();

  // Atomically adds `amount` to a counter and returns its previous value.
  std::uint64_t fetch_add(Counter counter, std::uint64_t amount);
  std::uint64_t read(Counter counter) { return fetch_add(counter, 0); }
  bool shared_memory() const { return shared_; }

 private:
  MPI_Win window_ = MPI_WIN_NULL;
  std::uint64_t* base_ = nullptr;  // the counters (shared-memory mode: on every rank)
  bool shared_ = false;
};

}  // namespace nestfast::jobs
