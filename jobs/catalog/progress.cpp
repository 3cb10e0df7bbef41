#include "jobs/catalog/progress.hpp"

#include <unistd.h>

#include <cmath>

namespace nestfast::jobs {
namespace {

constexpr double kTerminalPeriod_s = 0.2;
constexpr double kLogPeriod_s = 5.0;

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  char text[32];
  const long total = std::lround(seconds);
  if (total >= 3600) std::snprintf(text, sizeof text, "%ldh%02ldm", total / 3600, (total / 60) % 60);
  else if (total >= 60) std::snprintf(text, sizeof text, "%ldm%02lds", total / 60, total % 60);
  else std::snprintf(text, sizeof text, "%lds", total);
  return text;
}

}  // namespace

ProgressLine::ProgressLine(std::string label, std::uint64_t total, std::uint64_t already_done, bool enabled)
    : label_(std::move(label)),
      total_(total),
      start_done_(already_done),
      enabled_(enabled),
      terminal_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

void ProgressLine::update(std::uint64_t done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_print_).count();
  if (since < (terminal_ ? kTerminalPeriod_s : kLogPeriod_s)) return;
  last_print_ = now;
  print(done, false);
}

void ProgressLine::finish(std::uint64_t done) {
  if (!enabled_) return;
  print(done, true);
}

void ProgressLine::print(std::uint64_t done, bool final) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double new_items = static_cast<double>(done - std::min(done, start_done_));
  const double rate = elapsed > 0 ? new_items / elapsed : 0.0;
  const double left = static_cast<double>(total_ - std::min(total_, done));
  const double percent = total_ > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0;
  const std::string eta = final ? "done in " + duration_text(elapsed) : "ETA " + duration_text(rate > 0 ? left / rate : NAN);
  std::fprintf(stderr, "%s%s: %llu/%llu items (%.1f%%), %.0f items/s, %s%s", terminal_ ? "\r\033[K" : "",
               label_.c_str(), static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_), percent,
               rate, eta.c_str(), terminal_ && !final ? "" : "\n");
  std::fflush(stderr);
}

}  // namespace nestfast::jobs
