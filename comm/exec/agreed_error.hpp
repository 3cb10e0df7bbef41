#pragma once
// Errors that every rank of a communicator throws alike, after the ranks
// agreed on them (jobs/catalog/agreement.hpp, or a check every rank makes on
// identical data). Such an error may leave collectively: the ranks unwind
// through the same destructors (collective frees and closes included), rank 0
// prints the one line, and all finalize.
//
// Any other exception may be thrown on some ranks only, while the rest wait
// in a collective. An owner of a collective resource (an MPI window, a
// parallel HDF5 file) then must not run its collective clean-up while
// unwinding, or it waits forever for ranks that never come:
// unwinding_unagreed() tells it so, and main() aborts the job with one line.
#include <atomic>
#include <exception>
#include <stdexcept>
#include <string>

namespace nestfast::comm {

class AgreedError : public std::runtime_error {
 public:
  AgreedError(int exit_code, const std::string& message) : std::runtime_error(message), exit_code_(exit_code) {
    ++live_;
  }
  AgreedError(const AgreedError& other) : std::runtime_error(other), exit_code_(other.exit_code_) { ++live_; }
  AgreedError& operator=(const AgreedError&) = default;
  ~AgreedError() override { --live_; }

  int exit_code() const { return exit_code_; }

  // AgreedError objects alive now (in flight or being handled).
  static int live() { return live_.load(); }

 private:
  int exit_code_;
  static inline std::atomic<int> live_{0};
};

// True while an exception that is not an AgreedError unwinds the stack: the
// other ranks may not be unwinding with this one.
inline bool unwinding_unagreed() { return std::uncaught_exceptions() > AgreedError::live(); }

}  // namespace nestfast::comm
