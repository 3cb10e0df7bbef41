#pragma once
// The MPI catalog job (ARCHITECTURE.md data flow 1-3, 5; io.md): rank 0 reads
// and checks the job and broadcasts it; all ranks pull DP instances from a
// shared counter, record finished items in the catalog's /checkpoint, then
// the baselines; the owners of contiguous blocks of sweep points rebuild their
// rows from the checkpoint and all ranks write them collectively. `run` adds
// the validation phase. Collective over `comm`; every failure is a JobError
// thrown on all ranks alike.
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

// "I/N" -> (I, N) with 0 <= I < N; std::invalid_argument naming --slice otherwise.
std::pair<int, int> parse_slice(const std::string& text);

}  // namespace nestfast::jobs
