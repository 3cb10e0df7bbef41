#include "io/host/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace nestfast::io {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string byte_count(std::uint64_t bytes) { return std::to_string(bytes) + " bytes"; }

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  if (path.empty()) throw std::invalid_argument(what + ": the path is empty");
  // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat can refuse it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw std::invalid_argument(path + ": cannot read the " + what + ": " + std::strerror(errno));
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    const std::string kind = kind_of(status.st_mode);
    ::close(fd);
    throw std::invalid_argument(path + ": the " + what + " is " + kind + ", not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(status.st_size);
  if (size > max_bytes) {
    ::close(fd);
    throw std::invalid_argument(path + ": the " + what + " is " + byte_count(size) + ", more than the " +
                                byte_count(max_bytes) + " nestfast reads from one");
  }
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t got = ::read(fd, text.data() + done, text.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const int error = got < 0 ? errno : 0;
      ::close(fd);
      throw std::invalid_argument(path + ": reading the " + what + " failed" +
                                  (error != 0 ? ": " + std::string(std::strerror(error)) : ": it shrank while read"));
    }
    done += static_cast<std::size_t>(got);
  }
  ::close(fd);
  return text;
}

void require_regular_input(const std::string& path, const std::string& what) {
  if (path.empty()) throw std::invalid_argument(what + ": the path is empty");
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    throw std::invalid_argument(path + ": cannot read the " + what + ": " + std::strerror(errno));
  }
  if (!S_ISREG(status.st_mode)) {
    throw std::invalid_argument(path + ": the " + what + " is " + kind_of(status.st_mode) + ", not a regular file");
  }
}

void check_output_target(const std::string& path, const std::string& what, const std::vector<std::string>& inputs) {
  if (path.empty()) throw std::invalid_argument(what + ": the path is empty");
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) return;  // nothing there yet (the writer reports a missing directory)
  if (!S_ISREG(target.st_mode)) {
    throw std::invalid_argument(path + ": " + what + " is " + kind_of(target.st_mode) +
                                "; nestfast replaces only regular files");
  }
  for (const std::string& input : inputs) {
    struct stat source {};
    if (!input.empty() && ::stat(input.c_str(), &source) == 0 && source.st_dev == target.st_dev &&
        source.st_ino == target.st_ino) {
      throw std::invalid_argument(path + ": " + what + " is also an input (" + input + "); write elsewhere");
    }
  }
}

}  // namespace nestfast::io
