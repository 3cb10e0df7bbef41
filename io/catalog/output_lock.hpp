#pragma once
// One job per catalog: the job that writes OUT holds an advisory lock on
// OUT.lock (an open-file-description lock, F_OFD_SETLK, which NFS clients
// honour too) from its start until it is done, and a second job on the same
// output is refused at its start instead of racing the first for OUT's
// checkpoint and .partial. The lock goes away with the process, however it
// ends; the file is removed when the job completes.
#include <string>

namespace nestfast::io {

class OutputLock {
 public:
  OutputLock() = default;
  // Takes the lock for the catalog `out`, or throws std::invalid_argument
  // naming the output when another process holds it.
  static OutputLock acquire(const std::string& out);

  OutputLock(OutputLock&& other) noexcept;
  OutputLock& operator=(OutputLock&& other) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  ~OutputLock();

  bool held() const { return fd_ >= 0; }
  // Removes the lock file and releases the lock (the job is complete).
  void release_and_remove();

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace nestfast::io
