#include "jobs/catalog/work_queue.hpp"

#include <atomic>

#include "comm/exec/agreed_error.hpp"

namespace nestfast::jobs {

WorkQueue::WorkQueue(MPI_Comm comm) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 1;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  shared_ = node_size == size;

  const MPI_Aint bytes = rank == 0 ? static_cast<MPI_Aint>(kCounters * sizeof(std::uint64_t)) : 0;
  if (shared_) {
    MPI_Win_allocate_shared(bytes, sizeof(std::uint64_t), MPI_INFO_NULL, comm, &base_, &window_);
    MPI_Aint size_of_segment = 0;
    int unit = 0;
    MPI_Win_shared_query(window_, 0, &size_of_segment, &unit, &base_);
  } else {
    MPI_Win_allocate(bytes, sizeof(std::uint64_t), MPI_INFO_NULL, comm, &base_, &window_);
  }
  MPI_Win_lock_all(MPI_MODE_NOCHECK, window_);
  if (rank == 0) {
    for (int i = 0; i < kCounters; ++i) std::atomic_ref<std::uint64_t>(base_[i]).store(0);
    MPI_Win_sync(window_);
  }
  MPI_Barrier(comm);
  MPI_Win_sync(window_);
}

WorkQueue::~WorkQueue() {
  // MPI_Win_free is collective: a rank that fails alone leaves the window to
  // the job's abort instead of waiting for ranks that are not freeing it.
  if (comm::unwinding_unagreed()) return;
  MPI_Win_unlock_all(window_);
  MPI_Win_free(&window_);
}

std::uint64_t WorkQueue::fetch_add(Counter counter, std::uint64_t amount) {
  if (shared_) return std::atomic_ref<std::uint64_t>(base_[counter]).fetch_add(amount);
  std::uint64_t previous = 0;
  MPI_Fetch_and_op(&amount, &previous, MPI_UINT64_T, 0, counter, amount == 0 ? MPI_NO_OP : MPI_SUM, window_);
  MPI_Win_flush(0, window_);
  return previous;
}

}  // namespace nestfast::jobs
