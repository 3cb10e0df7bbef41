#include "io/catalog/checkpoint_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "comm/exec/communicator.hpp"
#include "io/catalog/h5_attributes.hpp"
#include "io/catalog/mpio_errors.hpp"

namespace nestfast::io {
namespace {

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

void create_datasets(hid_t file, std::uint64_t job_fingerprint, const CheckpointShape& shape) {
  write_attribute(file, "format", kCheckpointFormat);
  write_attribute(file, "job_fingerprint", job_fingerprint);
  write_attribute(file, "items", shape.items);
  write_attribute(file, "values", shape.values);
  const hsize_t items = std::max<hsize_t>(shape.items, 1);
  const std::uint8_t not_done = 0;
  const H5Handle done_space = h5_space(H5Screate_simple(1, &items, nullptr), "creating the done space");
  const H5Handle done_create = contiguous_early(H5T_NATIVE_UINT8, &not_done);
  h5_dataset(H5Dcreate2(file, "done", H5T_NATIVE_UINT8, done_space, H5P_DEFAULT, done_create, H5P_DEFAULT),
             "creating /done");
  const hsize_t values = std::max<hsize_t>(shape.values, 1);
  const H5Handle value_space = h5_space(H5Screate_simple(1, &values, nullptr), "creating the values space");
  const H5Handle value_create = contiguous_early(H5T_NATIVE_DOUBLE, nullptr);
  h5_dataset(H5Dcreate2(file, "values", H5T_NATIVE_DOUBLE, value_space, H5P_DEFAULT, value_create, H5P_DEFAULT),
             "creating /values");
}

// Independent I/O on a range [first, first + count) of a contiguous 1-D dataset.
void transfer_range(hid_t dataset, hid_t type, std::uint64_t first, std::uint64_t count, const void* write_from,
                    void* read_into, const char* what) {
  if (count == 0) return;
  const ReturnMpioErrors independent;
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

}  // namespace

std::vector<std::uint8_t> read_checkpoint(const std::string& path, std::uint64_t job_fingerprint,
                                          const CheckpointShape& shape) {
  quiet_hdf5_errors();
  const std::string retry = "; rerun with --force to discard it and start over";
  const hid_t raw = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (raw < 0) throw std::invalid_argument(path + ": cannot be opened as HDF5 (damaged?)" + retry);
  const H5Handle file(raw, H5Fclose);
  if (!has_attribute(file, "format") || read_string_attribute(file, "format") != kCheckpointFormat) {
    throw std::invalid_argument(path + ": is not a nestfast checkpoint" + retry);
  }
  if (read_u64_attribute(file, "job_fingerprint") != job_fingerprint) {
    throw std::invalid_argument(path + ": belongs to a different job (the job file or a preset it uses changed "
                                       "since, or another nestfast version wrote it)" +
                                retry + ", or restore what changed");
  }
  const CheckpointShape stored{read_u64_attribute(file, "items"), read_u64_attribute(file, "values")};
  if (!(stored == shape)) {
    throw std::invalid_argument(path + ": has " + std::to_string(stored.items) + " work items, this job has " +
                                std::to_string(shape.items) + retry);
  }
  std::vector<std::uint8_t> done(std::max<std::uint64_t>(shape.items, 1), 0);
  const H5Handle dataset = h5_dataset(H5Dopen2(file, "done", H5P_DEFAULT), "opening /done of " + path);
  h5_check(H5Dread(dataset, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, done.data()), "reading /done of " + path);
  if (std::any_of(done.begin(), done.end(), [](std::uint8_t flag) { return flag > 1; })) {
    throw std::invalid_argument(path + ": /done holds values other than 0 and 1 (damaged?)" + retry);
  }
  done.resize(shape.items);
  return done;
}

CheckpointFile::CheckpointFile(ParallelFile file, const CheckpointShape& shape)
    : file_(std::move(file)), shape_(shape) {
  file_.on_file([&] {
    done_ = h5_dataset(H5Dopen2(file_.id(), "done", H5P_DEFAULT), "opening /done");
    values_ = h5_dataset(H5Dopen2(file_.id(), "values", H5P_DEFAULT), "opening /values");
  });
}

CheckpointFile CheckpointFile::create(MPI_Comm comm, const std::string& path, std::uint64_t job_fingerprint,
                                      const CheckpointShape& shape) {
  ParallelFile file = ParallelFile::create(comm, path);
  file.on_file([&] { create_datasets(file.id(), job_fingerprint, shape); });
  file.flush();
  return CheckpointFile(std::move(file), shape);
}

CheckpointFile CheckpointFile::reopen(MPI_Comm comm, const std::string& path, const CheckpointShape& shape) {
  return CheckpointFile(ParallelFile::open(comm, path), shape);
}

void CheckpointFile::record_finished(std::uint64_t first, std::uint64_t count, std::uint64_t value_offset,
                                     const std::vector<double>& values) {
  if (first + count > shape_.items || value_offset + values.size() > shape_.values) {
    throw std::logic_error("record_finished: item or value range outside the checkpoint");
  }
  file_.on_file([&] {
    transfer_range(values_, H5T_NATIVE_DOUBLE, value_offset, values.size(), values.data(), nullptr, "checkpoint values");
    const std::vector<std::uint8_t> flags(count, 1);
    transfer_range(done_, H5T_NATIVE_UINT8, first, count, flags.data(), nullptr, "checkpoint flags");
  });
}

std::vector<std::uint8_t> CheckpointFile::read_done(std::uint64_t first, std::uint64_t count) const {
  std::vector<std::uint8_t> flags(count);
  file_.on_file([&] { transfer_range(done_, H5T_NATIVE_UINT8, first, count, nullptr, flags.data(), "checkpoint flags"); });
  return flags;
}

std::vector<double> CheckpointFile::read_values(std::uint64_t offset, std::uint64_t count) const {
  std::vector<double> values(count);
  file_.on_file([&] { transfer_range(values_, H5T_NATIVE_DOUBLE, offset, count, nullptr, values.data(), "checkpoint values"); });
  return values;
}

void CheckpointFile::remove() {
  // Deleted first: the catalog is in place, so from here on a failure can
  // at worst leave an open handle, never a checkpoint that looks resumable.
  int failed = 0;
  if (comm::rank_of(file_.comm()) == 0 && ::unlink(file_.path().c_str()) != 0) failed = errno;
  MPI_Bcast(&failed, 1, MPI_INT, 0, file_.comm());
  if (failed != 0) {
    throw std::runtime_error(file_.path() + ": removing the checkpoint after the catalog was complete failed: " +
                             std::strerror(failed));
  }
  done_.reset();
  values_.reset();
  // Closing rewrites the superblock of a file nobody reads again: its
  // failure (a full disk) no longer matters.
  const ReturnMpioErrors returned;
  try {
    file_.close();
  } catch (const std::runtime_error&) {
  }
}

}  // namespace nestfast::io
