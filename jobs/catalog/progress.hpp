#pragma once
// The progress line of a long job on rank 0: done/total, rate and ETA. On a
// terminal it redraws one line; otherwise it prints a plain line now and then.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace nestfast::jobs {

class ProgressLine {
 public:
  // `enabled` false: prints nothing (other ranks, or --quiet).
  ProgressLine(std::string label, std::uint64_t total, std::uint64_t already_done, bool enabled);
  // Reports `done` (including already_done); rate-limited internally.
  void update(std::uint64_t done);
  // Prints the final state and ends the line.
  void finish(std::uint64_t done);

 private:
  void print(std::uint64_t done, bool final);

  std::string label_;
  std::uint64_t total_;
  std::uint64_t start_done_;
  bool enabled_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
};

}  // namespace nestfast::jobs
