#include "io/catalog/catalog_writer.hpp"

#include <algorithm>
#include <stdexcept>

#include "comm/exec/communicator.hpp"
#include "io/atomic_file/atomic_file.hpp"
#include "io/catalog/catalog_types.hpp"
#include "io/catalog/h5_attributes.hpp"
#include "nestfast_version.hpp"

namespace nestfast::io {
namespace {

using comm::rank_of;
using comm::size_of;


// HDF5 prints a full error stack on every failure; we report one line instead.
void quiet_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

H5Handle parallel_access(MPI_Comm comm) {
  H5Handle access = h5_plist(H5Pcreate(H5P_FILE_ACCESS), "creating file access properties");
  h5_check(H5Pset_fapl_mpio(access, comm, MPI_INFO_NULL), "selecting the MPI-IO driver");
  h5_check(H5Pset_coll_metadata_write(access, true), "enabling collective metadata writes");
  return access;
}

H5Handle collective_transfer() {
  H5Handle transfer = h5_plist(H5Pcreate(H5P_DATASET_XFER), "creating transfer properties");
  h5_check(H5Pset_dxpl_mpio(transfer, H5FD_MPIO_COLLECTIVE), "selecting collective I/O");
  return transfer;
}

// The UTC time on rank 0, identical on every rank (attributes are written collectively).
std::string agreed_utc_now(MPI_Comm comm) {
  char text[32] = {};
  if (rank_of(comm) == 0) created_utc_now().copy(text, sizeof text - 1);
  MPI_Bcast(text, sizeof text, MPI_CHAR, 0, comm);
  return text;
}

// Contiguous and allocated at creation; filled with `fill` unless it is null
// (values are only ever read where a done flag says they were written).
H5Handle contiguous_early(hid_t fill_type, const void* fill) {
  H5Handle create = h5_plist(H5Pcreate(H5P_DATASET_CREATE), "creating dataset properties");
  h5_check(H5Pset_layout(create, H5D_CONTIGUOUS), "choosing a contiguous layout");
  h5_check(H5Pset_alloc_time(create, H5D_ALLOC_TIME_EARLY), "allocating early");
  if (fill != nullptr) {
    h5_check(H5Pset_fill_time(create, H5D_FILL_TIME_ALLOC), "filling on allocation");
    h5_check(H5Pset_fill_value(create, fill_type, fill), "setting a fill value");
  } else {
    h5_check(H5Pset_fill_time(create, H5D_FILL_TIME_NEVER), "skipping the fill");
  }
  return create;
}

void create_checkpoint(hid_t file, const CatalogIdentity& identity, const CheckpointShape& shape) {
  const H5Handle group = h5_group(H5Gcreate2(file, "checkpoint", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                  "creating /checkpoint");
  write_attribute(group, "job_fingerprint", identity.job_fingerprint);
  write_attribute(group, "items", shape.items);
  write_attribute(group, "values", shape.values);
  const hsize_t items = std::max<hsize_t>(shape.items, 1);
  const std::uint8_t not_done = 0;
  const H5Handle done_space = h5_space(H5Screate_simple(1, &items, nullptr), "creating the done space");
  const H5Handle done_create = contiguous_early(H5T_NATIVE_UINT8, &not_done);
  h5_dataset(H5Dcreate2(group, "done", H5T_NATIVE_UINT8, done_space, H5P_DEFAULT, done_create, H5P_DEFAULT),
             "creating /checkpoint/done");
  const hsize_t values = std::max<hsize_t>(shape.values, 1);
  const H5Handle value_space = h5_space(H5Screate_simple(1, &values, nullptr), "creating the values space");
  const H5Handle value_create = contiguous_early(H5T_NATIVE_DOUBLE, nullptr);
  h5_dataset(H5Dcreate2(group, "values", H5T_NATIVE_DOUBLE, value_space, H5P_DEFAULT, value_create, H5P_DEFAULT),
             "creating /checkpoint/values");
}

// Independent I/O on a range [first, first + count) of a contiguous 1-D dataset.
void transfer_range(hid_t dataset, hid_t type, std::uint64_t first, std::uint64_t count, const void* write_from,
                    void* read_into, const char* what) {
  if (count == 0) return;
  const H5Handle file_space = h5_space(H5Dget_space(dataset), std::string("reading the space of ") + what);
  const hsize_t start = first;
  const hsize_t length = count;
  h5_check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &length, nullptr),
           std::string("selecting ") + what);
  const H5Handle memory_space = h5_space(H5Screate_simple(1, &length, nullptr), "creating a memory space");
  if (write_from != nullptr) {
    h5_check(H5Dwrite(dataset, type, memory_space, file_space, H5P_DEFAULT, write_from), std::string("writing ") + what);
  } else {
    h5_check(H5Dread(dataset, type, memory_space, file_space, H5P_DEFAULT, read_into), std::string("reading ") + what);
  }
}

// A 1-D compound table written collectively: this rank's `count` rows go at
// `offset` of `total`. The file type is the memory type (rows have no padding).
void write_table(hid_t parent, const char* name, hid_t memory_type, std::uint64_t total, std::uint64_t offset,
                 std::uint64_t count, const void* rows) {
  const H5Handle dataset = create_row_table(parent, name, memory_type, total);
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

// A small 1-D dataset written by rank 0 (the others take part with empty selections).
void write_small_dataset(hid_t parent, const char* name, hid_t type, std::size_t count, const void* data, bool root) {
  const hsize_t dims = std::max<std::size_t>(count, 1);
  const H5Handle space = h5_space(H5Screate_simple(1, &dims, nullptr), std::string("creating the space of ") + name);
  const H5Handle dataset = h5_dataset(H5Dcreate2(parent, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                      std::string("creating ") + name);
  const H5Handle memory_space = h5_space(H5Screate_simple(1, &dims, nullptr), "creating a memory space");
  if (!root || count == 0) {
    H5Sselect_none(space);
    H5Sselect_none(memory_space);
  }
  const H5Handle transfer = collective_transfer();
  h5_check(H5Dwrite(dataset, type, memory_space, space, transfer, data), std::string("writing ") + name);
}

H5Handle open_or_create_group(hid_t file, const char* name) {
  if (H5Lexists(file, name, H5P_DEFAULT) > 0) return h5_group(H5Gopen2(file, name, H5P_DEFAULT), std::string("opening ") + name);
  return h5_group(H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), std::string("creating ") + name);
}

const char* mlp_name(MlpKind mlp) { return mlp == MlpKind::Swiglu ? "swiglu" : "gelu"; }

}  // namespace

std::vector<std::uint8_t> read_partial_checkpoint(const std::string& partial_path, std::uint64_t job_fingerprint,
                                                  const CheckpointShape& shape) {
  quiet_hdf5_errors();
  const std::string retry = "; rerun with --force to discard it and start over";
  const hid_t raw = H5Fopen(partial_path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (raw < 0) throw std::invalid_argument(partial_path + ": cannot be opened as HDF5 (damaged?)" + retry);
  const H5Handle file(raw, H5Fclose);
  if (!has_attribute(file, "format") || read_string_attribute(file, "format") != kCatalogFormat) {
    throw std::invalid_argument(partial_path + ": is not a partial nestfast catalog with a checkpoint" + retry);
  }
  if (H5Lexists(file, "checkpoint", H5P_DEFAULT) <= 0) {
    // complete() removes the checkpoint just before the rename; a kill in between leaves this.
    const bool finished = H5Lexists(file, "plans", H5P_DEFAULT) > 0 && H5Lexists(file, "validation", H5P_DEFAULT) > 0;
    throw std::invalid_argument(partial_path + (finished ? ": is a finished catalog whose final rename was interrupted; "
                                                           "rename it (drop .partial) or rerun with --force"
                                                         : ": is not a partial nestfast catalog with a checkpoint" + retry));
  }
  const H5Handle group = h5_group(H5Gopen2(file, "checkpoint", H5P_DEFAULT), "opening /checkpoint");
  if (read_u64_attribute(group, "job_fingerprint") != job_fingerprint) {
    throw std::invalid_argument(partial_path + ": its checkpoint belongs to a different job (the job file changed since)" +
                                retry + ", or restore the original job file");
  }
  const CheckpointShape stored{read_u64_attribute(group, "items"), read_u64_attribute(group, "values")};
  if (!(stored == shape)) {
    throw std::invalid_argument(partial_path + ": its checkpoint has " + std::to_string(stored.items) +
                                " work items, this nestfast enumerates " + std::to_string(shape.items) + retry);
  }
  std::vector<std::uint8_t> done(std::max<std::uint64_t>(shape.items, 1), 0);
  const H5Handle dataset = h5_dataset(H5Dopen2(group, "done", H5P_DEFAULT), "opening /checkpoint/done");
  h5_check(H5Dread(dataset, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, done.data()), "reading /checkpoint/done");
  done.resize(shape.items);
  return done;
}

CatalogWriter::CatalogWriter(MPI_Comm comm, std::string path, H5Handle file, const CheckpointShape& shape)
    : comm_(comm), path_(std::move(path)), shape_(shape), file_(std::move(file)) {}

CatalogWriter::~CatalogWriter() = default;

CatalogWriter CatalogWriter::create(MPI_Comm comm, const std::string& partial_path, const CatalogIdentity& identity,
                                    const CheckpointShape& shape) {
  quiet_hdf5_errors();
  const std::string created = agreed_utc_now(comm);
  const H5Handle access = parallel_access(comm);
  H5Handle file = h5_file(H5Fcreate(partial_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access),
                          "creating " + partial_path);
  write_attribute(file, "format", kCatalogFormat);
  write_attribute(file, "schema_version", kCatalogSchemaVersion);
  write_attribute(file, "nestfast_version", kVersion);
  write_attribute(file, "git_sha", kGitSha);
  write_attribute(file, "created_utc", created);
  write_attribute(file, "mpi_ranks", size_of(comm));
  write_attribute(file, "job_name", identity.job_name);
  write_attribute(file, "job", identity.job_text);
  write_attribute(file, "sweep_points", identity.sweep_points);
  if (!identity.slice.empty()) write_attribute(file, "slice", identity.slice);
  create_checkpoint(file, identity, shape);
  h5_check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flushing " + partial_path);
  CatalogWriter writer(comm, partial_path, std::move(file), shape);
  writer.open_checkpoint();
  return writer;
}

CatalogWriter CatalogWriter::reopen(MPI_Comm comm, const std::string& partial_path, const CheckpointShape& shape) {
  quiet_hdf5_errors();
  const H5Handle access = parallel_access(comm);
  H5Handle file = h5_file(H5Fopen(partial_path.c_str(), H5F_ACC_RDWR, access), "reopening " + partial_path);
  // A job killed while writing its final rows left some of them; they are rewritten.
  for (const char* leftover : {"plans", "stages", "models", "clusters", "validation"}) {
    if (H5Lexists(file, leftover, H5P_DEFAULT) > 0) {
      h5_check(H5Ldelete(file, leftover, H5P_DEFAULT), std::string("dropping the unfinished /") + leftover);
    }
  }
  if (has_attribute(file, "mpi_ranks")) h5_check(H5Adelete(file, "mpi_ranks"), "updating mpi_ranks");
  write_attribute(file, "mpi_ranks", size_of(comm));
  h5_check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flushing " + partial_path);
  CatalogWriter writer(comm, partial_path, std::move(file), shape);
  writer.open_checkpoint();
  return writer;
}

void CatalogWriter::open_checkpoint() {
  done_ = h5_dataset(H5Dopen2(file_, "checkpoint/done", H5P_DEFAULT), "opening /checkpoint/done");
  values_ = h5_dataset(H5Dopen2(file_, "checkpoint/values", H5P_DEFAULT), "opening /checkpoint/values");
}

void CatalogWriter::record_finished(std::uint64_t first, std::uint64_t count, std::uint64_t value_offset,
                                    const std::vector<double>& values) {
  if (first + count > shape_.items || value_offset + values.size() > shape_.values) {
    throw std::logic_error("record_finished: item or value range outside the checkpoint");
  }
  transfer_range(values_, H5T_NATIVE_DOUBLE, value_offset, values.size(), values.data(), nullptr, "checkpoint values");
  const std::vector<std::uint8_t> flags(count, 1);
  transfer_range(done_, H5T_NATIVE_UINT8, first, count, flags.data(), nullptr, "checkpoint flags");
}

std::vector<std::uint8_t> CatalogWriter::read_done(std::uint64_t first, std::uint64_t count) const {
  std::vector<std::uint8_t> flags(count);
  transfer_range(done_, H5T_NATIVE_UINT8, first, count, nullptr, flags.data(), "checkpoint flags");
  return flags;
}

std::vector<double> CatalogWriter::read_values(std::uint64_t offset, std::uint64_t count) const {
  std::vector<double> values(count);
  transfer_range(values_, H5T_NATIVE_DOUBLE, offset, count, nullptr, values.data(), "checkpoint values");
  return values;
}

void CatalogWriter::flush() {
  h5_check(H5Fflush(file_, H5F_SCOPE_GLOBAL), "flushing " + path_);
  MPI_Barrier(comm_);
}

std::uint64_t CatalogWriter::write_plans(std::vector<PlanEntry>& mine) {
  std::uint64_t local[2] = {mine.size(), 0};
  for (const auto& plan : mine) local[1] += plan.stages.size();
  std::uint64_t before[2] = {0, 0};
  std::uint64_t total[2] = {0, 0};
  MPI_Exscan(local, before, 2, MPI_UINT64_T, MPI_SUM, comm_);
  if (rank_of(comm_) == 0) before[0] = before[1] = 0;  // Exscan leaves rank 0's result undefined
  MPI_Allreduce(local, total, 2, MPI_UINT64_T, MPI_SUM, comm_);

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
  const H5Handle plan_type = plan_row_type();
  write_table(file_, "plans", plan_type, total[0], before[0], plan_rows.size(), plan_rows.data());
  const H5Handle stage_type = stage_row_type();
  write_table(file_, "stages", stage_type, total[1], before[1], stage_rows.size(), stage_rows.data());
  return before[0];
}

void CatalogWriter::write_models(const std::vector<ModelSpec>& models) {
  const H5Handle parent = open_or_create_group(file_, "models");
  for (const ModelSpec& model : models) {
    const std::string name = preset_link_name(model.name);
    if (H5Lexists(parent, name.c_str(), H5P_DEFAULT) > 0) continue;
    const H5Handle group = h5_group(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                    "creating /models/" + name);
    write_attribute(group, "name", model.name);
    write_attribute(group, "source", model.source);
    write_attribute(group, "num_layers", model.num_layers);
    write_attribute(group, "hidden", model.hidden);
    write_attribute(group, "ffn_hidden", model.ffn_hidden);
    write_attribute(group, "heads", model.heads);
    write_attribute(group, "kv_heads", model.kv_heads);
    write_attribute(group, "head_dim", model.head_dim);
    write_attribute(group, "vocab", model.vocab);
    write_attribute(group, "seq_len", model.seq_len);
    write_attribute(group, "mlp", mlp_name(model.mlp));
    write_attribute(group, "tied_embeddings", static_cast<int>(model.tied_embeddings));
    write_attribute(group, "dtype_bytes", model.dtype_bytes);
    write_attribute(group, "moe_num_experts", model.moe.num_experts);
    write_attribute(group, "moe_top_k", model.moe.top_k);
    write_attribute(group, "moe_expert_ffn_hidden", model.moe.expert_ffn_hidden);
    write_attribute(group, "moe_shared_experts", model.moe.shared_experts);
    write_attribute(group, "moe_first_dense_layers", model.moe.first_dense_layers);
    write_attribute(group, "moe_layer_interval", model.moe.layer_interval);
  }
}

void CatalogWriter::write_clusters(const std::vector<ClusterSpec>& clusters) {
  const bool root = rank_of(comm_) == 0;
  const H5Handle parent = open_or_create_group(file_, "clusters");
  for (const ClusterSpec& cluster : clusters) {
    const std::string name = preset_link_name(cluster.name);
    if (H5Lexists(parent, name.c_str(), H5P_DEFAULT) > 0) continue;
    const H5Handle group = h5_group(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                    "creating /clusters/" + name);
    write_attribute(group, "name", cluster.name);
    write_attribute(group, "source", cluster.source);
    const GpuSpec& gpu = cluster.gpu;
    write_attribute(group, "gpu_name", gpu.name);
    write_attribute(group, "gpu_hbm_bytes", gpu.hbm_bytes);
    write_attribute(group, "gpu_hbm_bandwidth_Bps", gpu.hbm_bandwidth_Bps);
    write_attribute(group, "gpu_peak_flops_bf16", gpu.peak_flops_bf16);
    write_attribute(group, "gpu_peak_flops_fp8", gpu.peak_flops_fp8);
    write_attribute(group, "gpu_peak_flops_fp32", gpu.peak_flops_fp32);
    write_attribute(group, "gpu_hbm_efficiency", gpu.hbm_efficiency);

    const std::size_t levels = cluster.levels.size();
    std::vector<std::int32_t> group_size(levels);
    std::vector<double> bandwidth(levels), latency(levels), oversub(levels);
    std::vector<char> names(levels * kNameChars, '\0');
    for (std::size_t l = 0; l < levels; ++l) {
      const NetworkLevel& level = cluster.levels[l];
      group_size[l] = level.group_size;
      bandwidth[l] = level.bandwidth_Bps;
      latency[l] = level.latency_s;
      oversub[l] = level.oversubscription;
      std::strncpy(&names[l * kNameChars], level.name.c_str(), kNameChars - 1);
    }
    const H5Handle name_type = fixed_string_type(kNameChars);
    write_small_dataset(group, "level_name", name_type, levels, names.data(), root);
    write_small_dataset(group, "group_size", H5T_NATIVE_INT32, levels, group_size.data(), root);
    write_small_dataset(group, "bandwidth_Bps", H5T_NATIVE_DOUBLE, levels, bandwidth.data(), root);
    write_small_dataset(group, "latency_s", H5T_NATIVE_DOUBLE, levels, latency.data(), root);
    write_small_dataset(group, "oversub", H5T_NATIVE_DOUBLE, levels, oversub.data(), root);
  }
}

void CatalogWriter::write_validation(const std::vector<ValidationRow>& rows) {
  const bool root = rank_of(comm_) == 0;
  std::uint64_t count = root ? rows.size() : 0;
  MPI_Bcast(&count, 1, MPI_UINT64_T, 0, comm_);
  const H5Handle group = open_or_create_group(file_, "validation");
  const H5Handle type = validation_row_type();
  write_table(group, "alltoallv", type, count, 0, root ? count : 0, rows.data());
}

void CatalogWriter::complete(const std::string& final_path) {
  h5_check(H5Ldelete(file_, "checkpoint", H5P_DEFAULT), "removing /checkpoint");
  done_.reset();
  values_.reset();
  file_.reset();  // collective close: every rank's writes are in the file after this
  std::string failure;
  if (rank_of(comm_) == 0) {
    try {
      commit_file(path_, final_path);
    } catch (const std::runtime_error& error) {
      failure = error.what();
    }
  }
  int length = static_cast<int>(failure.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm_);
  failure.resize(static_cast<std::size_t>(length));
  MPI_Bcast(failure.data(), length, MPI_CHAR, 0, comm_);
  if (length != 0) throw std::runtime_error(failure);
}

}  // namespace nestfast::io
