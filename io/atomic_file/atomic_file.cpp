#include "io/atomic_file/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "io/host/files.hpp"

namespace nestfast::io {
namespace {

// fsync of an existing file or directory; errno on failure, 0 on success.
int sync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return errno;
  const int failed = ::fsync(fd) != 0 ? errno : 0;
  ::close(fd);
  return failed;
}

[[noreturn]] void fail(const std::string& what, const std::string& temporary, const std::string& path, int error) {
  throw std::runtime_error(what + " " + temporary + " to " + path + ": " + std::strerror(error));
}

}  // namespace

void commit_file(const std::string& temporary, const std::string& path) {
  // The rename would put a plain file where a device node or a FIFO was.
  check_output_target(path, "the output");
  if (const int error = sync_path(temporary, O_RDONLY); error != 0) fail("syncing", temporary, path, error);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail("renaming", temporary, path, errno);
  const std::filesystem::path directory = std::filesystem::path(path).parent_path();
  const std::string dir = directory.empty() ? "." : directory.string();
  if (const int error = sync_path(dir, O_RDONLY | O_DIRECTORY); error != 0) {
    fail("syncing the directory after renaming", temporary, path, error);
  }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  check_output_target(path, "the output");
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) throw std::invalid_argument(path + ": cannot create " + temporary);
    file << text;
    file.flush();
    if (!file) {
      file.close();
      std::filesystem::remove(temporary);
      throw std::runtime_error(path + ": writing " + temporary + " failed");
    }
  }
  try {
    commit_file(temporary, path);
  } catch (const std::runtime_error& error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw std::runtime_error(path + ": " + error.what());
  }
}

}  // namespace nestfast::io
