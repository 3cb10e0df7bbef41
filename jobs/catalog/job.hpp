#pragma once
// The catalog engine's driver: `nestfast catalog` and `nestfast run` as one
// collective call, its steps in order (docs/catalog.md, "How it runs"), each
// owned by a file of this folder:
//   1. start.hpp        rank 0 reads and checks the job, decides fresh or resume;
//                       work_points.hpp / work_items.hpp turn it into work items;
//                       everything is broadcast (io/archive)
//   2. the checkpoint OUT.checkpoint (io::CheckpointFile), created or reopened
//   3. sweep.hpp        ranks and GPUs claim items from work_queue.hpp and
//                       compute them; checkpoint.hpp records them in the checkpoint
//   4. assemble.hpp     reduce: a point's items -> its catalog rows
//   5. the catalog OUT.partial (io::CatalogWriter), written collectively
//   6. validation.hpp   (run only) the chosen plans' all-to-alls on the job's ranks
//   7. OUT.partial committed as OUT (synced, renamed), then the checkpoint and
//      the output lock removed; rank 0 gets the report
// Collective over `comm`; every failure is a JobError thrown on all ranks
// alike (agreement.hpp), progress.hpp prints the progress line.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"

namespace nestfast::jobs {

struct CatalogRequest {
  std::string job_path;  // empty: the embedded default job
  std::string out;       // overrides [job].out when not empty
  bool force = false;    // overwrite a finished catalog, discard a partial one
  int slice_index = 0;   // --slice I/N (0-based I)
  int slice_count = 1;
  bool validate = false;  // run the validation phase ([validate] of the job)
  bool progress = true;
  std::string gpu = "auto";  // --gpu: DP instances as GPU batches (auto|on|off)
};

struct CatalogReport {  // complete on rank 0 only
  std::string path;
  std::string job_name;
  int ranks = 1;
  std::uint64_t points = 0;
  std::uint64_t items = 0;
  std::uint64_t items_resumed = 0;  // finished by an earlier, interrupted run
  double sweep_s = 0;
  double wall_s = 0;
  std::vector<io::PlanEntry> plans;  // every /plans row in order, with stages
  std::vector<io::ValidationRow> validation;
};

CatalogReport run_catalog_job(MPI_Comm comm, const CatalogRequest& request);

}  // namespace nestfast::jobs
