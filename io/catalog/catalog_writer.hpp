#pragma once
// The parallel HDF5 catalog as a job writes it (io.md "Catalog"). Every
// member function is collective over the communicator unless it says
// "independent". The file is OUT.partial until complete() renames it.
//
// Checkpoint layout: /checkpoint/done (uint8 per work item, 1 = finished) and
// /checkpoint/values (one flat array of doubles; the caller gives each item a
// fixed range of it, where the item's encoded result goes). Both are
// contiguous and allocated when the file is created, so
// recording finished items later writes raw bytes only and never touches
// HDF5 metadata: a job killed at any moment of the sweep leaves a file that
// reopens.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"
#include "io/catalog/h5_handle.hpp"
#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"

namespace nestfast::io {

inline constexpr const char* kCatalogFormat = "nestfast-catalog";
inline constexpr int kCatalogSchemaVersion = 1;

struct CatalogIdentity {
  std::string job_name;
  std::string job_text;
  std::uint64_t job_fingerprint = 0;
  std::uint64_t sweep_points = 0;  // points of the whole sweep (all slices)
  std::string slice;               // "I/N" for a part file of a sliced sweep, else empty
};

struct CheckpointShape {
  std::uint64_t items = 0;
  std::uint64_t values = 0;
  bool operator==(const CheckpointShape&) const = default;
};

// Reads which items a partial catalog has finished, on one process (serial,
// read-only). Throws std::invalid_argument naming the file when it is not a
// partial catalog of this job (other fingerprint or shape) or cannot be read.
std::vector<std::uint8_t> read_partial_checkpoint(const std::string& partial_path, std::uint64_t job_fingerprint,
                                                  const CheckpointShape& shape);

class CatalogWriter {
 public:
  // Creates `partial_path` (truncating), with the root attributes and an empty checkpoint.
  static CatalogWriter create(MPI_Comm comm, const std::string& partial_path, const CatalogIdentity& identity,
                              const CheckpointShape& shape);
  // Reopens a partial catalog to resume it; rows of an interrupted final phase are dropped.
  static CatalogWriter reopen(MPI_Comm comm, const std::string& partial_path, const CheckpointShape& shape);

  CatalogWriter(CatalogWriter&&) = default;
  CatalogWriter& operator=(CatalogWriter&&) = default;
  ~CatalogWriter();

  // Independent: marks items [first, first + count) finished; their encoded
  // results `values` go to /checkpoint/values from `value_offset` on. Values
  // are written before the done flags, so a flag never points at missing data.
  void record_finished(std::uint64_t first, std::uint64_t count, std::uint64_t value_offset,
                       const std::vector<double>& values);
  // Independent reads of the checkpoint (after flush(), every rank's records are visible).
  std::vector<std::uint8_t> read_done(std::uint64_t first, std::uint64_t count) const;
  std::vector<double> read_values(std::uint64_t offset, std::uint64_t count) const;
  // Makes every rank's records durable and visible to all ranks.
  void flush();

  // Writes /plans and /stages. `mine` are this rank's plans, in global order
  // after those of lower ranks; their stage_offset/plan_row fields are filled in.
  // Returns the /plans row of this rank's first plan.
  std::uint64_t write_plans(std::vector<PlanEntry>& mine);
  // Identical arguments on every rank.
  void write_models(const std::vector<ModelSpec>& models);
  void write_clusters(const std::vector<ClusterSpec>& clusters);
  // `rows` matter on rank 0 only; it writes them all.
  void write_validation(const std::vector<ValidationRow>& rows);

  // Removes /checkpoint, closes the file and renames it to `final_path` (rank 0).
  void complete(const std::string& final_path);

 private:
  CatalogWriter(MPI_Comm comm, std::string path, H5Handle file, const CheckpointShape& shape);
  void open_checkpoint();

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string path_;
  CheckpointShape shape_;
  H5Handle file_;
  H5Handle done_;
  H5Handle values_;
};

}  // namespace nestfast::io
