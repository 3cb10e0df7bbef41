#pragma once
// What a failed MPI-IO call on the catalog does. HDF5 cannot recover from a
// write error inside a collective operation (a full disk, EIO): the failing
// rank leaves HDF5's collective sequence early and the others wait for it
// forever (HDF5 1.10's MPI-IO driver skips its own collective clean-up on
// error). So during collective I/O the failing rank aborts the job with one
// line naming the file and the system's reason. Independent I/O (recording
// finished items, reading them back) returns its errors instead, and the
// ranks agree on them (jobs/catalog/agreement.hpp): the job ends cleanly and
// the .partial resumes.
#include <hdf5.h>

#include <string>

namespace nestfast::io {

// From now on, a failed MPI-IO call on `file` (a parallel HDF5 file)
// aborts the job with one line naming `path`.
void abort_on_mpio_errors(hid_t file, const std::string& path);

// While alive, MPI-IO errors are returned to HDF5, which reports them as
// failed calls; afterwards they abort again.
class ReturnMpioErrors {
 public:
  ReturnMpioErrors();
  ReturnMpioErrors(const ReturnMpioErrors&) = delete;
  ReturnMpioErrors& operator=(const ReturnMpioErrors&) = delete;
  ~ReturnMpioErrors();
};

}  // namespace nestfast::io
