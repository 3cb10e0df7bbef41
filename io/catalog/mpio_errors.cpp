#include "io/catalog/mpio_errors.hpp"

#include <cstdio>
#include <cstring>

#include "io/catalog/h5_handle.hpp"

namespace nestfast::io {
namespace {

char failing_path[4096] = {};  // the catalog the abort message names
int returning = 0;             // ReturnMpioErrors alive (only the thread that runs HDF5 touches it)

void abort_with_one_line(MPI_File*, int* code, ...) {
  if (returning > 0) return;  // the MPI-IO call returns the error to HDF5
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(*code, text, &length);
  const std::string reason = system_reason_in(text);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "nestfast: rank %d: error: %s: writing failed: %s; rerun the same command to resume\n", rank,
               failing_path, reason.empty() ? "MPI-IO error" : reason.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace

void abort_on_mpio_errors(hid_t file, const std::string& path) {
  std::snprintf(failing_path, sizeof failing_path, "%s", path.c_str());
  static const MPI_Errhandler handler = [] {
    MPI_Errhandler created = MPI_ERRHANDLER_NULL;
    MPI_File_create_errhandler(abort_with_one_line, &created);
    return created;
  }();
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || handle == nullptr) return;
  MPI_File& mpi_file = *static_cast<MPI_File*>(handle);
  MPI_File_set_errhandler(mpi_file, handler);
  // One reference more that is never given back: MPICH's file error
  // handlers do not count the references that closing a file releases.
  MPI_Errhandler extra = MPI_ERRHANDLER_NULL;
  MPI_File_get_errhandler(mpi_file, &extra);
}

ReturnMpioErrors::ReturnMpioErrors() { ++returning; }

ReturnMpioErrors::~ReturnMpioErrors() { --returning; }

}  // namespace nestfast::io
