#pragma once
// Owning handles for HDF5 identifiers, and one check that turns a failed
// HDF5 call into an exception naming what was being done (and the system's
// reason, such as "No space left on device", when HDF5 reports one).
#include <hdf5.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

namespace nestfast::io {

class H5Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Handle() = default;
  H5Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  H5Handle(H5Handle&& other) noexcept : id_(std::exchange(other.id_, -1)), closer_(other.closer_) {}
  H5Handle& operator=(H5Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, -1);
      closer_ = other.closer_;
    }
    return *this;
  }
  ~H5Handle() { reset(); }

  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }  // NOLINT: handles pass straight into H5 calls
  bool valid() const { return id_ >= 0; }
  void reset() {
    if (id_ >= 0 && closer_ != nullptr) closer_(id_);
    id_ = -1;
  }
  // Closes now and returns the closer's result (negative: failed); 0 when empty.
  herr_t close() {
    const herr_t result = id_ >= 0 && closer_ != nullptr ? closer_(id_) : 0;
    id_ = -1;
    return result;
  }
  // Forgets the identifier without closing it (a collective close that the
  // other ranks will not join must not be started).
  void abandon() { id_ = -1; }

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// The operating system's reason in HDF5's current error stack (the MPI-IO or
// POSIX driver quotes strerror: "No space left on device", "Input/output
// error", ...), or "" when the failure is HDF5's own.
std::string h5_system_reason();
// The same reason in one message text (MPI_Error_string's, for instance).
std::string system_reason_in(const char* text);

// Throws std::runtime_error("HDF5: <what> failed[: <system reason>]") when an
// HDF5 call reports failure; with NESTFAST_HDF5_DEBUG set, HDF5's own error
// stack is printed first.
inline hid_t h5_check(hid_t result, const std::string& what) {
  if (result < 0) {
    if (std::getenv("NESTFAST_HDF5_DEBUG") != nullptr) H5Eprint2(H5E_DEFAULT, stderr);
    const std::string reason = h5_system_reason();
    throw std::runtime_error("HDF5: " + what + " failed" + (reason.empty() ? "" : ": " + reason));
  }
  return result;
}

inline H5Handle h5_file(hid_t id, const std::string& what) { return {h5_check(id, what), H5Fclose}; }
inline H5Handle h5_group(hid_t id, const std::string& what) { return {h5_check(id, what), H5Gclose}; }
inline H5Handle h5_dataset(hid_t id, const std::string& what) { return {h5_check(id, what), H5Dclose}; }
inline H5Handle h5_space(hid_t id, const std::string& what) { return {h5_check(id, what), H5Sclose}; }
inline H5Handle h5_type(hid_t id, const std::string& what) { return {h5_check(id, what), H5Tclose}; }
inline H5Handle h5_plist(hid_t id, const std::string& what) { return {h5_check(id, what), H5Pclose}; }
inline H5Handle h5_attribute(hid_t id, const std::string& what) { return {h5_check(id, what), H5Aclose}; }

}  // namespace nestfast::io
