#pragma once
// The parallel HDF5 catalog as a job writes it (io.md "Catalog"), after its
// sweep: created as OUT.partial, written collectively, then closed, synced
// and renamed to OUT by complete(). Every member function is collective over
// the communicator. The resume state is not here but in the job's
// checkpoint (checkpoint_file.hpp), so a catalog interrupted while it is
// written is simply written again.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/catalog/catalog_rows.hpp"
#include "io/catalog/parallel_file.hpp"
#include "solver/cluster/cluster_spec.hpp"
#include "solver/model/model_spec.hpp"

namespace nestfast::io {

inline constexpr const char* kCatalogFormat = "nestfast-catalog";
// 3: one plan record (field names with units; /plans keeps the time split,
//    optimizer, a2a, framework, attention and the Megatron-LM line with its
//    environment; /stages each stage's recompute mode and block layers,
//    pipeline rank and memory), units and meanings as attributes, the GPU's
//    matmul curve and the network levels in /clusters. CatalogReader refuses
//    any other version.
// 4: /plans keeps the gradients' dtype (grad_reduce, issue 15).
// 5: /models keeps the attention kind with multi-head latent attention's
//    widths (mla_*) and the MoE router's settings (moe_router_*).
// 6: /plans keeps the expert tensor-parallel degree (etp: tp, or 1 for whole
//    experts), which the search chooses.
// 7: /clusters keep where DeepEP runs (deepep, deepep_source), /plans'
//    a2a may be deepep (Megatron-Core's flex dispatcher), and /plans keep
//    what selective recompute checkpoints (recompute_modules).
inline constexpr int kCatalogSchemaVersion = 7;

struct CatalogIdentity {
  std::string job_name;
  std::string job_text;
  std::uint64_t sweep_points = 0;  // points of the whole sweep (all slices)
  std::string slice;               // "I/N" for a part file of a sliced sweep, else empty
};

class CatalogWriter {
 public:
  // Creates `partial_path` (truncating) with the root attributes.
  static CatalogWriter create(MPI_Comm comm, const std::string& partial_path, const CatalogIdentity& identity);

  // Writes /plans and /stages. `mine` are this rank's plans, in global order
  // after those of lower ranks; their stage_offset/plan_row fields are filled in.
  // Returns the /plans row of this rank's first plan.
  std::uint64_t write_plans(std::vector<PlanEntry>& mine);
  // Identical arguments on every rank.
  void write_models(const std::vector<ModelSpec>& models);
  void write_clusters(const std::vector<ClusterSpec>& clusters);
  // `rows` matter on rank 0 only; it writes them all.
  void write_validation(const std::vector<ValidationRow>& rows);

  // Closes the file and commits it as `final_path` (io/atomic_file: synced,
  // renamed, directory synced; rank 0).
  void complete(const std::string& final_path);

 private:
  explicit CatalogWriter(ParallelFile file);
  ParallelFile file_;
};

}  // namespace nestfast::io
