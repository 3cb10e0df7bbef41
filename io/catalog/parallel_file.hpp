#pragma once
// A parallel HDF5 file of a catalog job (its checkpoint, its catalog): open
// on every rank of a communicator with the MPI-IO driver, and what happens
// to it when something fails.
//
// Closing is collective, and HDF5 cannot close a file collectively once a
// write to it failed on some rank (the ranks' metadata flushes take
// different paths and wait for each other forever). So when an error unwinds
// past a ParallelFile, the file is closed only if no rank's I/O on it failed
// and the error is one every rank throws (comm/exec/agreed_error.hpp);
// otherwise it is left open, and main() leaves without MPI_Finalize, whose
// HDF5 clean-up would close it (hdf5_file_left_unclosed()). Failed MPI-IO
// calls inside collective operations abort the job with one line
// (mpio_errors.hpp).
#include <mpi.h>

#include <stdexcept>
#include <string>

#include "io/catalog/h5_handle.hpp"

namespace nestfast::io {

// True once a parallel HDF5 file of this process was left open after a failure.
bool hdf5_file_left_unclosed();

class ParallelFile {
 public:
  // Collective: creates (truncating; with `creation` properties and a file
  // format no older than `oldest`) or opens read-write.
  static ParallelFile create(MPI_Comm comm, const std::string& path, hid_t creation = H5P_DEFAULT,
                             H5F_libver_t oldest = H5F_LIBVER_EARLIEST);
  static ParallelFile open(MPI_Comm comm, const std::string& path);

  ParallelFile(ParallelFile&&) = default;
  ParallelFile& operator=(ParallelFile&&) = default;
  ~ParallelFile();

  hid_t id() const { return file_; }
  MPI_Comm comm() const { return comm_; }
  const std::string& path() const { return path_; }

  // Runs `step`; an HDF5 failure in it names this file and is remembered.
  template <typename Step>
  void on_file(Step&& step) const {
    try {
      step();
    } catch (const std::runtime_error& error) {
      io_failed_ = true;
      throw std::runtime_error(path_ + ": " + error.what());
    }
  }

  // Collective: flushes (the barrier comes before the check, so every rank
  // gets there) and throws naming the file when it failed on this rank.
  void flush();
  // Collective: closes the file; throws on every rank when it failed on any.
  void close();

 private:
  ParallelFile(MPI_Comm comm, std::string path, H5Handle file);

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string path_;
  H5Handle file_;
  mutable bool io_failed_ = false;
};

// The MPI-IO access properties of a job's files.
H5Handle parallel_access(MPI_Comm comm);
// A transfer property list for collective I/O.
H5Handle collective_transfer();
// HDF5 prints a full error stack on every failure; nestfast reports one line instead.
void quiet_hdf5_errors();

}  // namespace nestfast::io
