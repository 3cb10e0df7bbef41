#include "io/catalog/parallel_file.hpp"

#include <atomic>

#include "comm/exec/agreed_error.hpp"
#include "io/catalog/mpio_errors.hpp"

namespace nestfast::io {
namespace {

std::atomic<bool> unclosed_file{false};

}  // namespace

bool hdf5_file_left_unclosed() { return unclosed_file.load(); }

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

ParallelFile::ParallelFile(MPI_Comm comm, std::string path, H5Handle file)
    : comm_(comm), path_(std::move(path)), file_(std::move(file)) {
  abort_on_mpio_errors(file_, path_);
}

ParallelFile ParallelFile::create(MPI_Comm comm, const std::string& path, hid_t creation, H5F_libver_t oldest) {
  quiet_hdf5_errors();
  const H5Handle access = parallel_access(comm);
  h5_check(H5Pset_libver_bounds(access, oldest, H5F_LIBVER_LATEST), "choosing the file format");
  return {comm, path, h5_file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, creation, access), "creating " + path)};
}

ParallelFile ParallelFile::open(MPI_Comm comm, const std::string& path) {
  quiet_hdf5_errors();
  const H5Handle access = parallel_access(comm);
  return {comm, path, h5_file(H5Fopen(path.c_str(), H5F_ACC_RDWR, access), "reopening " + path)};
}

ParallelFile::~ParallelFile() {
  if (!file_.valid()) return;  // moved from, or closed
  bool abandon = comm::unwinding_unagreed();
  if (!abandon) {
    int failed = io_failed_ ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm_);
    abandon = failed != 0;
  }
  if (abandon) {
    file_.abandon();
    unclosed_file.store(true);
  } else if (file_.close() < 0) {
    unclosed_file.store(true);
  }
}

void ParallelFile::flush() {
  const herr_t flushed = H5Fflush(file_, H5F_SCOPE_GLOBAL);
  MPI_Barrier(comm_);
  on_file([&] { h5_check(flushed, "flushing the file"); });
}

void ParallelFile::close() {
  int failed = file_.close() < 0 ? 1 : 0;
  const std::string reason = failed != 0 ? h5_system_reason() : std::string();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm_);
  if (failed != 0) {
    unclosed_file.store(true);  // on every rank, so that all leave the same way
    throw std::runtime_error(path_ + ": HDF5: closing the file failed" + (reason.empty() ? "" : ": " + reason));
  }
}

}  // namespace nestfast::io
