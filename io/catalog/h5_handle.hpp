#pragma once
// Owning handles for HDF5 identifiers, and one check that turns a failed
// HDF5 call into an exception naming what was being done.
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

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// Throws std::runtime_error("HDF5: <what> failed") when an HDF5 call reports
// failure; with NESTFAST_HDF5_DEBUG set, HDF5's own error stack is printed first.
inline hid_t h5_check(hid_t result, const std::string& what) {
  if (result < 0) {
    if (std::getenv("NESTFAST_HDF5_DEBUG") != nullptr) H5Eprint2(H5E_DEFAULT, stderr);
    throw std::runtime_error("HDF5: " + what + " failed");
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
