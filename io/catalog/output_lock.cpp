#include "io/catalog/output_lock.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace nestfast::io {

OutputLock OutputLock::acquire(const std::string& out) {
  OutputLock lock;
  lock.path_ = out + ".lock";
  // A finishing job removes the file: a lock taken on a file that is no
  // longer at the path protects nothing, so open and lock again.
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = ::open(lock.path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw std::invalid_argument(lock.path_ + ": cannot create the job's lock file: " + std::strerror(errno));
    struct flock range {};
    range.l_type = F_WRLCK;
    range.l_whence = SEEK_SET;
    if (::fcntl(fd, F_OFD_SETLK, &range) != 0) {
      const int error = errno;
      ::close(fd);
      if (error == EAGAIN || error == EACCES) {
        throw std::invalid_argument(out + ": another job is writing this catalog now (" + lock.path_ +
                                    " is locked); wait for it to finish, or write elsewhere with --out");
      }
      // A file system without locks (some parallel file systems unless mounted with them): go on unguarded.
      std::fprintf(stderr, "catalog: %s: cannot lock (%s); make sure no other job writes %s\n", lock.path_.c_str(),
                   std::strerror(error), out.c_str());
      return lock;
    }
    struct stat held {};
    struct stat named {};
    if (::fstat(fd, &held) == 0 && ::stat(lock.path_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev) {
      lock.fd_ = fd;
      return lock;
    }
    ::close(fd);
  }
  throw std::invalid_argument(lock.path_ + ": the lock file keeps being replaced; is another job starting on " + out + "?");
}

OutputLock::OutputLock(OutputLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

OutputLock& OutputLock::operator=(OutputLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputLock::release_and_remove() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still locked: a job starting now sees the file gone and retries
  ::close(fd_);
  fd_ = -1;
}

}  // namespace nestfast::io
