#include "io/catalog/h5_handle.hpp"

#include <cerrno>
#include <cstring>

namespace nestfast::io {

std::string system_reason_in(const char* text) {
  // The errors a full, failing or read-only file system gives; HDF5's MPI-IO
  // driver quotes ROMIO's message ("Other I/O error No space left on device"),
  // its POSIX driver the errno text.
  static const int kReasons[] = {ENOSPC, EDQUOT, EIO, EROFS, EFBIG, EACCES, EPERM};
  for (const int code : kReasons) {
    const char* reason = std::strerror(code);
    if (text != nullptr && std::strstr(text, reason) != nullptr) return reason;
  }
  return "";
}

std::string h5_system_reason() {
  std::string found;
  const auto visit = [](unsigned, const H5E_error2_t* entry, void* data) -> herr_t {
    auto& reason = *static_cast<std::string*>(data);
    if (reason.empty()) reason = system_reason_in(entry->desc);
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, visit, &found);
  return found;
}

}  // namespace nestfast::io
