#include "io/catalog/catalog_writer.hpp"

#include <algorithm>
#include <stdexcept>

#include "comm/exec/communicator.hpp"
#include "io/atomic_file/atomic_file.hpp"
#include "io/catalog/catalog_types.hpp"
#include "io/catalog/h5_attributes.hpp"
#include "io/catalog/preset_groups.hpp"
#include "nestfast_version.hpp"

namespace nestfast::io {
namespace {

using comm::rank_of;
using comm::size_of;


// The UTC time on rank 0, identical on every rank (attributes are written collectively).
std::string agreed_utc_now(MPI_Comm comm) {
  char text[32] = {};
  if (rank_of(comm) == 0) created_utc_now().copy(text, sizeof text - 1);
  MPI_Bcast(text, sizeof text, MPI_CHAR, 0, comm);
  return text;
}

// A 1-D compound table written collectively: this rank's `count` rows go at
// `offset` of `total`. The file type is the memory type (rows have no padding).
void write_table(hid_t parent, const char* name, RowTable table, std::uint64_t total, std::uint64_t offset,
                 std::uint64_t count, const void* rows) {
  const H5Handle dataset = create_row_table(parent, name, table, total);
  const H5Handle memory_type = row_type(table);
  const H5Handle file_space = h5_space(H5Dget_space(dataset), std::string("getting the space of ") + name);
  const hsize_t memory_dims = std::max<hsize_t>(count, 1);
  const H5Handle memory_space = h5_space(H5Screate_simple(1, &memory_dims, nullptr), "creating a memory space");
  if (count == 0) {
    H5Sselect_none(memory_space);
    H5Sselect_none(file_space);
  } else {
    const hsize_t start = offset;
    const hsize_t length = count;
    h5_check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &length, nullptr), "selecting rows");
  }
  const H5Handle transfer = collective_transfer();
  static const char kNothing[1] = {};
  h5_check(H5Dwrite(dataset, memory_type, memory_space, file_space, transfer, count == 0 ? kNothing : rows),
           std::string("writing ") + name);
}

H5Handle open_or_create_group(hid_t file, const char* name) {
  if (H5Lexists(file, name, H5P_DEFAULT) > 0) return h5_group(H5Gopen2(file, name, H5P_DEFAULT), std::string("opening ") + name);
  return h5_group(H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), std::string("creating ") + name);
}

}  // namespace

CatalogWriter::CatalogWriter(ParallelFile file) : file_(std::move(file)) {}

CatalogWriter CatalogWriter::create(MPI_Comm comm, const std::string& partial_path, const CatalogIdentity& identity) {
  const std::string created = agreed_utc_now(comm);
  ParallelFile file = ParallelFile::create(comm, partial_path, catalog_creation_properties(), kCatalogOldestFormat);
  file.on_file([&] {
    write_attribute(file.id(), "format", kCatalogFormat);
    write_attribute(file.id(), "schema_version", kCatalogSchemaVersion);
    write_attribute(file.id(), "nestfast_version", kVersion);
    write_attribute(file.id(), "git_sha", kGitSha);
    write_attribute(file.id(), "created_utc", created);
    write_attribute(file.id(), "mpi_ranks", size_of(comm));
    write_attribute(file.id(), "job_name", identity.job_name);
    write_attribute(file.id(), "job", identity.job_text);
    write_attribute(file.id(), "sweep_points", identity.sweep_points);
    if (!identity.slice.empty()) write_attribute(file.id(), "slice", identity.slice);
  });
  return CatalogWriter(std::move(file));
}

std::uint64_t CatalogWriter::write_plans(std::vector<PlanEntry>& mine) {
  std::uint64_t local[2] = {mine.size(), 0};
  for (const auto& plan : mine) local[1] += plan.stages.size();
  std::uint64_t before[2] = {0, 0};
  std::uint64_t total[2] = {0, 0};
  MPI_Exscan(local, before, 2, MPI_UINT64_T, MPI_SUM, file_.comm());
  if (rank_of(file_.comm()) == 0) before[0] = before[1] = 0;  // Exscan leaves rank 0's result undefined
  MPI_Allreduce(local, total, 2, MPI_UINT64_T, MPI_SUM, file_.comm());

  std::vector<PlanRow> plan_rows;
  std::vector<StageRow> stage_rows;
  plan_rows.reserve(mine.size());
  stage_rows.reserve(local[1]);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    PlanEntry& plan = mine[i];
    plan.row.stage_offset = before[1] + stage_rows.size();
    plan.row.stage_count = plan.stages.size();
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
      plan.stages[s].plan_row = before[0] + i;
      plan.stages[s].stage = static_cast<std::int32_t>(s);
      stage_rows.push_back(plan.stages[s]);
    }
    plan_rows.push_back(plan.row);
  }
  write_table(file_.id(), "plans", RowTable::Plans, total[0], before[0], plan_rows.size(), plan_rows.data());
  write_table(file_.id(), "stages", RowTable::Stages, total[1], before[1], stage_rows.size(), stage_rows.data());
  return before[0];
}

void CatalogWriter::write_models(const std::vector<ModelSpec>& models) {
  const H5Handle parent = open_or_create_group(file_.id(), "models");
  for (const ModelSpec& model : models) {
    if (H5Lexists(parent, preset_link_name(model.name).c_str(), H5P_DEFAULT) > 0) continue;
    write_model_group(parent, model);
  }
}

void CatalogWriter::write_clusters(const std::vector<ClusterSpec>& clusters) {
  const H5Handle parent = open_or_create_group(file_.id(), "clusters");
  for (const ClusterSpec& cluster : clusters) {
    if (H5Lexists(parent, preset_link_name(cluster.name).c_str(), H5P_DEFAULT) > 0) continue;
    write_cluster_group(parent, cluster, rank_of(file_.comm()) == 0);
  }
}

void CatalogWriter::write_validation(const std::vector<ValidationRow>& rows) {
  const bool root = rank_of(file_.comm()) == 0;
  std::uint64_t count = root ? rows.size() : 0;
  MPI_Bcast(&count, 1, MPI_UINT64_T, 0, file_.comm());
  const H5Handle group = open_or_create_group(file_.id(), "validation");
  write_table(group, "alltoallv", RowTable::Validation, count, 0, root ? count : 0, rows.data());
}

void CatalogWriter::complete(const std::string& final_path) {
  // Collective close: every rank's writes are in the file after it.
  file_.close();
  std::string failure;
  if (rank_of(file_.comm()) == 0) {
    try {
      commit_file(file_.path(), final_path);
    } catch (const std::exception& error) {
      failure = error.what();
    }
  }
  int length = static_cast<int>(failure.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, file_.comm());
  failure.resize(static_cast<std::size_t>(length));
  MPI_Bcast(failure.data(), length, MPI_CHAR, 0, file_.comm());
  if (length != 0) throw std::runtime_error(failure);
}

}  // namespace nestfast::io
