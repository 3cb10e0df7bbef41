#pragma once
// OUT.checkpoint: the finished work items of a catalog job, in a parallel
// HDF5 file of their own. It lives from the job's start until its catalog
// OUT is complete, synced and renamed into place, so nothing that happens to
// the catalog while it is written (a kill, a full disk) loses finished work:
// a re-run resumes from here and writes the catalog again.
//
// Layout: root attributes format="nestfast-checkpoint", job_fingerprint,
// items, values; /done (uint8 per work item, 1 = finished) and /values (one
// flat array of doubles; the job gives each item a fixed range of it). Both
// are contiguous and allocated when the file is created, so recording items
// later writes raw bytes only and never touches HDF5 metadata: a job killed
// at any moment leaves a file that reopens.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/parallel_file.hpp"

namespace nestfast::io {

inline constexpr const char* kCheckpointFormat = "nestfast-checkpoint";

struct CheckpointShape {
  std::uint64_t items = 0;
  std::uint64_t values = 0;
  bool operator==(const CheckpointShape&) const = default;
};

// Which items a checkpoint has finished, read on one process (serial,
// read-only). Throws std::invalid_argument naming the file when it is not a
// checkpoint of this job (other fingerprint or shape) or cannot be read.
std::vector<std::uint8_t> read_checkpoint(const std::string& path, std::uint64_t job_fingerprint,
                                          const CheckpointShape& shape);

class CheckpointFile {
 public:
  // Collective. Creates `path` (truncating) with no item finished.
  static CheckpointFile create(MPI_Comm comm, const std::string& path, std::uint64_t job_fingerprint,
                               const CheckpointShape& shape);
  // Collective. Reopens a checkpoint that read_checkpoint accepted.
  static CheckpointFile reopen(MPI_Comm comm, const std::string& path, const CheckpointShape& shape);

  // Independent: marks items [first, first + count) finished; their encoded
  // results `values` go to /values from `value_offset` on. Values are
  // written before the done flags, so a flag never points at missing data.
  void record_finished(std::uint64_t first, std::uint64_t count, std::uint64_t value_offset,
                       const std::vector<double>& values);
  // Independent reads (after flush(), every rank's records are visible).
  std::vector<std::uint8_t> read_done(std::uint64_t first, std::uint64_t count) const;
  std::vector<double> read_values(std::uint64_t offset, std::uint64_t count) const;
  // Collective: every rank's records are durable and visible to all ranks.
  void flush() { file_.flush(); }

  // Collective: closes the file, and rank 0 deletes it (the catalog it
  // served is in place).
  void remove();

 private:
  CheckpointFile(ParallelFile file, const CheckpointShape& shape);

  ParallelFile file_;
  CheckpointShape shape_;
  H5Handle done_;
  H5Handle values_;
};

}  // namespace nestfast::io
