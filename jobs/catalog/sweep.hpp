#pragma once
// Step 3 of the job (docs/catalog.md): the work items go to the ranks and their
// GPUs. Every rank claims chunks of items from the shared queue the moment it
// is free (rank 0 computes too), skips those finished before a resume,
// computes the rest on its OpenMP threads (DP instances one by one, or as
// GPU batches when the rank has a device) and records them in the checkpoint.
// The DP instances run first, then one baseline item per point (the
// baselines need the point's DP statistics). Collective over the context's
// communicator; a failure on any rank ends the phase on every rank.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "io/catalog/checkpoint_file.hpp"
#include "jobs/catalog/progress.hpp"
#include "jobs/catalog/work_items.hpp"
#include "jobs/catalog/work_points.hpp"
#include "jobs/catalog/work_queue.hpp"
#include "jobs/dp_device.hpp"

namespace nestfast::jobs {

struct SweepContext {
  MPI_Comm comm;
  const JobWork& work;
  const WorkLayout& layout;
  const std::vector<std::uint8_t>& done_at_start;  // per item: finished by an earlier run
  io::CheckpointFile& checkpoint;
  WorkQueue& queue;
  ProgressLine& progress;
  int threads;
  DpDevice dp_device;
};

// Threads per rank: OMP_NUM_THREADS when set, else the node's cores shared by its ranks. Collective.
int threads_per_rank(MPI_Comm comm);

// Every DP instance item of the job.
void run_instance_phase(SweepContext& context);

// One baseline item per point, costliest first; only when the job asks for baselines.
void run_baseline_phase(SweepContext& context);

}  // namespace nestfast::jobs
